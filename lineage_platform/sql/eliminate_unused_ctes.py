"""Pass: a CTE nobody reads contributes nothing — removed with sqlglot's ``eliminate_ctes``."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.eliminate_ctes import eliminate_ctes

from lineage_platform.sql.analysis import StatementAnalysis


def eliminate_unused_ctes(analysis: StatementAnalysis) -> StatementAnalysis:
    """Drop every CTE no query of the unit reads (chains of unused CTEs included), in every statement kind.

    Runs before qualification, so an unused CTE neither adds inputs nor edges (its WHERE would otherwise
    leave weak edges when ``*`` cannot be expanded).

    >>> from lineage_platform.sql.extractor import new_analysis
    >>> from lineage_platform.sql.classify_statement import classify_statement
    >>> a = classify_statement(new_analysis("WITH u AS (SELECT a FROM z), v AS (SELECT a FROM u) SELECT * FROM t"))
    >>> eliminate_unused_ctes(a).units[0].query.sql()
    'SELECT * FROM t'
    """
    if "with" not in analysis.sql.lower() and not analysis.session.views:
        return analysis  # no CTE written here and no view inlined that could hold one
    for unit in analysis.units:
        if not _may_have_unused(unit.query):
            continue  # every CTE is read from outside itself: skip the scope analysis
        try:
            unit.query = eliminate_ctes(unit.query)
        except SqlglotError:
            continue  # scopes sqlglot cannot build are reported by build_scopes
    return analysis


def _may_have_unused(query: exp.Expr) -> bool:
    """Whether some CTE's name is not read outside its own definition (a cheap test before the scope walk)."""
    names: set[str] = set()
    reads: list[exp.Table] = []
    for node in query.walk():
        if isinstance(node, exp.CTE):
            names.add(node.alias_or_name.lower())
        elif isinstance(node, exp.Table) and not node.db:
            reads.append(node)
    for table in reads:
        own = table.find_ancestor(exp.CTE)
        if own is None or own.alias_or_name.lower() != table.name.lower():
            names.discard(table.name.lower())
    return bool(names)
