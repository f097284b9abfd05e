"""Pass: qualify every query with sqlglot's ``qualify`` (tables, columns, ``*`` expanded from the catalog)."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope

from lineage_platform.sql.analysis import StatementAnalysis
from lineage_platform.sql.session import Session, folds_lower, folds_upper
from lineage_platform.sql.tracer import table_name

_QUOTES = ('"', "`", "[")
"""Identifier quotes: where a dialect lower-cases unquoted names, only quoted ones need folding."""


def qualify_statement(analysis: StatementAnalysis, *, expand_stars: bool = True) -> StatementAnalysis:
    """Qualify each unit's query in place against the session's catalog and current database.

    >>> from lineage_platform.sql.extractor import new_analysis
    >>> from lineage_platform.sql.classify_statement import classify_statement
    >>> a = new_analysis("SELECT * FROM t", schema={"db": {"t": {"a": "int"}}}, default_db="db")
    >>> qualify_statement(classify_statement(a)).units[0].query.sql()
    'SELECT t.a AS a FROM db.t AS t'
    """
    session = analysis.session
    upper = folds_upper(analysis.dialect)
    fold = not folds_lower(analysis.dialect) or any(quote in analysis.sql for quote in _QUOTES)
    for unit in analysis.units:
        if fold:
            _fold_identifiers(unit.query, upper=upper)
        options = {
            "dialect": analysis.dialect,
            "db": _name_option(session.current_db.rpartition(".")[2]),
            "catalog": _name_option(session.current_catalog),
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
            unit.columns_qualified = False
            try:
                unit.query = qualify(unit.query, qualify_columns=False, **options)
            except SqlglotError as error:
                analysis.issue(f"tables could not be qualified: {error}", node=unit.query)
                continue
            if expand_stars:
                _expand_known_stars(unit.query, session, upper=upper)
    return analysis


def _name_option(name: str | None) -> str | exp.Identifier | None:
    """A database / catalog name for sqlglot: one still holding an unknown ``${var}`` (``USE ${db}``) as a quoted
    identifier, which sqlglot would otherwise read as a parameter and drop."""
    return exp.to_identifier(name, quoted=True) if name and "${" in name else name


def _expand_known_stars(query: exp.Expr, session: Session, *, upper: bool) -> None:
    """Write out ``*`` / ``t.*`` over sources whose columns are known (subqueries and CTEs naming theirs, catalog
    tables), as qualify does when it can qualify the whole query; a star over a source of unknown columns stays."""
    for scope in traverse_scope(query):  # inner scopes first: a CTE's star is written out before its readers
        select = scope.expression
        if not isinstance(select, exp.Select) or not any(_is_plain_star(p) for p in select.selects):
            continue
        sources = {alias: source for alias, (_, source) in scope.selected_sources.items()}
        projections: list[exp.Expr] = []
        for projection in select.selects:
            columns = (
                _star_columns(projection, sources, session, upper) if _is_plain_star(projection) else None
            )
            projections.extend(columns if columns is not None else [projection])
        select.set("expressions", projections)


def _star_columns(
    star: exp.Expr, sources: dict[str, exp.Table | Scope], session: Session, upper: bool
) -> list[exp.Expr] | None:
    """The columns ``star`` stands for, each as ``alias.name AS name``; None when a source's columns are unknown.
    Catalog names are lower case, upper-cased where the dialect folds so (as the query's own names are)."""
    aliases = [star.table] if isinstance(star, exp.Column) else list(sources)
    columns: list[exp.Expr] = []
    for alias in aliases:
        source = sources.get(alias)
        if isinstance(source, exp.Table):
            known = session.columns_of(table_name(source)) if not isinstance(source.this, exp.Func) else None
            names = tuple(n.upper() if upper else n for n in known) if known else None
        elif isinstance(source, Scope) and isinstance(source.expression, exp.Query):
            names = tuple(source.expression.named_selects)
        else:
            names = None
        if not names or "*" in names:
            return None
        columns.extend(exp.column(name, table=alias).as_(name) for name in names)
    return columns


def _is_plain_star(projection: exp.Expr) -> bool:
    """``*`` or ``t.*`` without EXCEPT / REPLACE / RENAME."""
    star = projection.this if isinstance(projection, exp.Column) else projection
    return isinstance(star, exp.Star) and not any(star.args.values())


def _fold_identifiers(query: exp.Expr, *, upper: bool) -> None:
    """Fold every name (quoted ones too) to the case the catalog is kept in, so ``DS.Orders`` and ``"MyCol"``
    find ``ds.orders`` / ``mycol`` in dialects that keep the case (BigQuery, MySQL tables) or quote it.

    Lineage names are lower case anyway; names differing only by case are taken to be the same.
    """
    for identifier in query.find_all(exp.Identifier):
        name = identifier.this
        folded = name.upper() if upper else name.lower()
        if folded != name:
            identifier.set("this", folded)
