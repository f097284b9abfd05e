"""Pass: qualify every query with sqlglot's ``qualify`` (tables, columns, ``*`` expanded from the catalog)."""

from __future__ import annotations

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
    return analysis
