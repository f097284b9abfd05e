"""Pass: a CTE that reads itself after a UNION is recursive, with or without the RECURSIVE keyword."""

from __future__ import annotations

from sqlglot import exp

from lineage_platform.sql.analysis import StatementAnalysis


def mark_recursive_ctes(analysis: StatementAnalysis) -> StatementAnalysis:
    """Mark ``WITH`` recursive when one of its CTEs is ``anchor UNION [ALL] member`` and only a later branch
    reads the CTE's own name: T-SQL, Snowflake, Oracle and DB2 write recursive CTEs without ``RECURSIVE``,
    and unmarked the self-reference would be taken for a base table of that name.

    ``WITH t AS (SELECT … FROM t)`` (no union) keeps reading the table ``t``, as every engine does.

    >>> from lineage_platform.sql.extractor import new_analysis
    >>> from lineage_platform.sql.classify_statement import classify_statement
    >>> sql = "WITH c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 3) SELECT n FROM c"
    >>> mark_recursive_ctes(classify_statement(new_analysis(sql, dialect="tsql"))).units[0].query.sql()
    'WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 3) SELECT n FROM c'
    """
    if "union" not in analysis.sql.lower():
        return analysis
    for unit in analysis.units:
        for with_ in unit.query.find_all(exp.With):
            if not with_.args.get("recursive") and any(_reads_itself(cte) for cte in with_.expressions):
                with_.set("recursive", True)
    return analysis


def _reads_itself(cte: exp.CTE) -> bool:
    body = cte.this
    if not isinstance(body, exp.Union):
        return False
    name = cte.alias_or_name.lower()

    def reads(query: exp.Expr) -> bool:
        return any(not t.db and t.name.lower() == name for t in query.find_all(exp.Table))

    return not reads(body.this) and reads(body.expression)
