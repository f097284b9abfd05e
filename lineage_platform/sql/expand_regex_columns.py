"""Pass: write out Hive / Spark regex column specifications (`` SELECT `(dt)?+.+` FROM t ``) as the columns they match."""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from lineage_platform.sql.analysis import StatementAnalysis
from lineage_platform.sql.session import Session

_DIALECTS = frozenset({"hive", "spark", "spark2", "databricks"})
_REGEX_CHARACTERS = re.compile(r"[()\[\]{}|*+?^$\\]")
"""A back-quoted projection holding one of these cannot be a column name: it is a pattern."""


def expand_regex_columns(analysis: StatementAnalysis) -> StatementAnalysis:
    """Replace each back-quoted regex projection (`` `(dt)?+.+` ``, `` t.`(a|b)` ``) by the source columns it matches.

    Hive (``hive.support.quoted.identifiers=none``, often set cluster-wide) and Spark
    (``spark.sql.parser.quotedRegexColumnNames``) read such a name as a Java regex matched, case-insensitively,
    against the whole name of every column of the qualifier's source (or of every source), partition columns
    included. Only names holding a regex character are taken as patterns, so a plain `` `col` `` stays a
    column. Runs after qualification, so a subquery's ``*`` is already written out when a pattern reads it. When a
    source's columns are unknown the pattern becomes ``*`` / ``t.*``, reported as unresolved later.

    >>> from lineage_platform.sql.extractor import new_analysis, run_passes
    >>> from lineage_platform.sql.qualify_statement import qualify_statement
    >>> a = run_passes(new_analysis("SELECT `(dt|hr)?+.+` FROM t", schema={"db": {"t": {
    ...     "id": "int", "v": "string", "dt": "string", "hr": "string"}}}, default_db="db"), until=qualify_statement)
    >>> expand_regex_columns(a).units[0].query.sql("hive")
    'SELECT t.id AS id, t.v AS v FROM db.t AS t'
    """
    if analysis.dialect not in _DIALECTS:
        return analysis
    for unit in analysis.units:
        for scope in traverse_scope(unit.query):
            select = scope.expression
            if not isinstance(select, exp.Select) or not any(_pattern(p) for p in select.selects):
                continue
            projections: list[exp.Expr] = []
            for projection in select.selects:
                pattern = _pattern(projection)
                projections.extend(
                    _matching_columns(projection, pattern, scope, analysis.session)
                    if pattern
                    else [projection]
                )
            select.set("expressions", projections or select.selects)
    return analysis


def _pattern(projection: exp.Expr) -> re.Pattern[str] | None:
    """The compiled pattern of a back-quoted regex projection (bare, or as qualification aliased it to itself); None
    for anything else (or an invalid pattern)."""
    column = _column(projection)
    if column is None or not isinstance(column.this, exp.Identifier):
        return None
    identifier = column.this
    if not identifier.quoted or not _REGEX_CHARACTERS.search(identifier.name):
        return None
    try:
        return re.compile(identifier.name, re.IGNORECASE)
    except re.error:
        return None


def _column(projection: exp.Expr) -> exp.Column | None:
    """The column a projection is: ``c`` or ``t.c``, or ``t.c AS c`` as qualification writes it."""
    if isinstance(projection, exp.Alias) and isinstance(projection.this, exp.Column):
        return projection.this if projection.alias == projection.this.name else None
    return projection if isinstance(projection, exp.Column) else None


def _matching_columns(
    projection: exp.Expr, pattern: re.Pattern[str], scope: Scope, session: Session
) -> list[exp.Expr]:
    """``alias.column AS column`` for every matching column of the qualifier's source (every source when
    unqualified), in source order; a star over the same sources when one of them has unknown columns."""
    column = _column(projection)
    assert column is not None
    qualifier = column.table
    aliases = [qualifier] if qualifier else list(scope.selected_sources)
    columns: list[exp.Expr] = []
    for alias in aliases:
        names = _source_columns(scope.selected_sources.get(alias), session)
        if names is None:
            return [
                exp.Column(this=exp.Star(), table=exp.to_identifier(qualifier)) if qualifier else exp.Star()
            ]
        columns.extend(exp.column(name, table=alias).as_(name) for name in names if pattern.fullmatch(name))
    return columns


def _source_columns(selected: tuple[exp.Expr, exp.Expr | Scope] | None, session: Session) -> list[str] | None:
    """Column names of a selected source: a catalog (or script DDL) table's, a subquery's or CTE's outputs."""
    if selected is None:
        return None
    _, source = selected
    if isinstance(source, exp.Table) and isinstance(source.this, exp.Identifier):
        name = ".".join(part for part in (source.catalog, source.db, source.name) if part).lower()
        known = session.columns_of(session.qualify_name(name))
        return list(known) if known else None
    if isinstance(source, Scope) and isinstance(source.expression, exp.Query):
        names = source.expression.named_selects
        return None if "*" in names else names
    return None
