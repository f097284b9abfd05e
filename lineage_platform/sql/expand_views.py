"""Pass: replace references to views whose definition the session has seen by that definition."""

from __future__ import annotations

from sqlglot import exp

from lineage_platform.sql.analysis import StatementAnalysis
from lineage_platform.sql.parsing import parse_query


def expand_views(analysis: StatementAnalysis) -> StatementAnalysis:
    """Inline known views as aliased subqueries so lineage reaches their base tables.

    >>> from lineage_platform.sql.extractor import new_analysis
    >>> from lineage_platform.sql.classify_statement import classify_statement
    >>> a = new_analysis("SELECT x FROM v")
    >>> a.session.views["default.v"] = "SELECT a AS x FROM db.t"
    >>> expand_views(classify_statement(a)).units[0].query.sql()
    'SELECT x FROM (SELECT a AS x FROM db.t) AS v'
    """
    views = analysis.session.views
    if not views:
        return analysis
    for unit in analysis.units:
        cte_names = {cte.alias_or_name.lower() for cte in unit.query.find_all(exp.CTE)}
        for table in list(unit.query.find_all(exp.Table)):
            if not table.db and table.name.lower() in cte_names:
                continue
            qualified = analysis.session.qualify_name(
                ".".join(p for p in (table.catalog, table.db, table.name) if p).lower()
            )
            definition = views.get(qualified)
            if definition is None or not isinstance(table.parent, (exp.From, exp.Join)):
                continue
            subquery = parse_query(definition, analysis.dialect).copy().subquery(table.alias_or_name)
            table.replace(subquery)
    return analysis
