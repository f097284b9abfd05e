"""Pass: constant folding and boolean simplification with sqlglot's ``simplify``."""

from __future__ import annotations

from sqlglot.errors import SqlglotError
from sqlglot.optimizer.simplify import simplify

from lineage_platform.sql.analysis import StatementAnalysis


def simplify_statement(analysis: StatementAnalysis, *, max_nodes: int = 3000) -> StatementAnalysis:
    """Fold constants and drop always-true conditions, so dead branches add no lineage.

    Queries of more than ``max_nodes`` syntax nodes (generated SQL) are left as they are: sqlglot's
    simplification grows faster than linearly with size, and lineage stays correct without it.

    >>> from lineage_platform.sql.extractor import new_analysis
    >>> from lineage_platform.sql.classify_statement import classify_statement
    >>> a = classify_statement(new_analysis("SELECT a FROM t WHERE 1 = 1 AND b > 1 + 1"))
    >>> simplify_statement(a).units[0].query.sql()
    'SELECT a FROM t WHERE b > 2'
    """
    for unit in analysis.units:
        if sum(1 for _ in unit.query.walk()) > max_nodes:
            continue
        try:
            unit.query = simplify(unit.query, dialect=analysis.dialect)
        except SqlglotError:
            continue
    return analysis
