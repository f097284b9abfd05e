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
    for unit in analysis.units:
        if unit.query.find(exp.With) is None:
            continue  # nothing to remove: skip the scope analysis
        try:
            unit.query = eliminate_ctes(unit.query)
        except SqlglotError:
            continue  # scopes sqlglot cannot build are reported by build_scopes
    return analysis
