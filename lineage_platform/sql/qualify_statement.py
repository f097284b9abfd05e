"""Pass: qualify every query with sqlglot's ``qualify`` (tables, columns, ``*`` expanded from the catalog)."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify

from lineage_platform.sql.analysis import StatementAnalysis
from lineage_platform.sql.session import folds_lower, folds_upper

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
