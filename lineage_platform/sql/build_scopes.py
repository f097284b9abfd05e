"""Pass: the one scope analysis (sqlglot's ``build_scope``) every later pass walks."""

from __future__ import annotations

from sqlglot.optimizer.scope import build_scope

from lineage_platform.sql.analysis import StatementAnalysis


def build_scopes(analysis: StatementAnalysis) -> StatementAnalysis:
    """Attach the root scope of each unit's (qualified) query.

    >>> from lineage_platform.sql.extractor import new_analysis
    >>> from lineage_platform.sql.classify_statement import classify_statement
    >>> a = build_scopes(classify_statement(new_analysis("SELECT a FROM (SELECT a FROM t) AS x")))
    >>> [s.scope_type.name for s in a.units[0].scope.traverse()]
    ['DERIVED_TABLE', 'ROOT']
    """
    for unit in analysis.units:
        unit.scope = build_scope(unit.query)
        if unit.scope is None:
            analysis.issue("the query's scopes could not be analysed", node=unit.query)
    return analysis
