"""Pass: drop derived-table columns nobody reads, with sqlglot's ``pushdown_projections``."""

from __future__ import annotations

from sqlglot.errors import SqlglotError
from sqlglot.optimizer.pushdown_projections import pushdown_projections

from lineage_platform.sql.analysis import StatementAnalysis


def prune_projections(analysis: StatementAnalysis) -> StatementAnalysis:
    """Remove unused projections of subqueries and CTEs (run after qualification). A query whose columns could not
    be qualified is left whole: an unqualified ``SELECT a FROM cte`` would look as if it read nothing of ``cte``.

    >>> from lineage_platform.sql.extractor import new_analysis
    >>> from lineage_platform.sql.classify_statement import classify_statement
    >>> a = classify_statement(new_analysis("SELECT x.a AS a FROM (SELECT t.a AS a, t.b AS b FROM t AS t) AS x"))
    >>> prune_projections(a).units[0].query.sql()
    'SELECT x.a AS a FROM (SELECT t.a AS a FROM t AS t) AS x'
    """
    for unit in analysis.units:
        if not unit.columns_qualified:
            continue
        try:
            unit.query = pushdown_projections(unit.query)
        except SqlglotError:
            continue
    return analysis
