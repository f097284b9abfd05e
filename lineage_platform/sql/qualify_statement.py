"""Pass: qualify every query with sqlglot's ``qualify`` (tables, columns, ``*`` expanded from the catalog)."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify

from lineage_platform.sql.analysis import StatementAnalysis


def qualify_statement(analysis: StatementAnalysis, *, expand_stars: bool = True) -> StatementAnalysis:
    """Qualify each unit's query in place against the session's catalog and current database.

    >>> from lineage_platform.sql.extractor import new_analysis
    >>> from lineage_platform.sql.classify_statement import classify_statement
    >>> a = new_analysis("SELECT * FROM t", schema={"db": {"t": {"a": "int"}}}, default_db="db")
    >>> qualify_statement(classify_statement(a)).units[0].query.sql()
    'SELECT t.a AS a FROM db.t AS t'
    """
    session = analysis.session
    for unit in analysis.units:
        options = {
            "dialect": analysis.dialect,
            "db": session.current_db.rpartition(".")[2],
            "catalog": session.current_catalog,
            "schema": session.schema,
            "expand_stars": expand_stars,
            "validate_qualify_columns": False,
            "quote_identifiers": False,
            "identify": False,
        }
        try:
            unit.query = qualify(unit.query, **options)
        except SqlglotError:
            # Without a schema sqlglot refuses scopes with several sources; the tracer resolves what it can
            # and reports the columns it cannot place.
            try:
                unit.query = qualify(unit.query, qualify_columns=False, **options)
            except SqlglotError as error:
                analysis.issue(f"tables could not be qualified: {error}", node=unit.query)
                continue
        _name_outputs(unit.query, hive_names=analysis.dialect == "hive")
    return analysis


def _name_outputs(query: exp.Expr, *, hive_names: bool) -> None:
    """Give every unnamed projection a name: ``_c<position>`` as Hive does, else sqlglot's ``_col_<position>``.

    sqlglot names unaliased expressions ``_col_<n>``; Hive calls them ``_c<n>`` (and queries may read
    ``sub._c0``), so in the Hive dialect those names are rewritten.
    """
    for select in query.find_all(exp.Select):
        for position, projection in enumerate(select.selects):
            if isinstance(projection, exp.Star) or (
                isinstance(projection, exp.Column) and projection.is_star
            ):
                continue
            name = projection.alias_or_name
            if not name:
                projection.replace(
                    exp.alias_(projection.copy(), f"_c{position}" if hive_names else f"_col_{position}")
                )
            elif hive_names and isinstance(projection, exp.Alias) and name == f"_col_{position}":
                projection.set("alias", exp.to_identifier(f"_c{position}"))
