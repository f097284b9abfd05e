"""Pass: read an unqualified ``JOIN … USING`` column from the side Hive and Spark take it from."""

from __future__ import annotations

from sqlglot import exp

from lineage_platform.sql.analysis import StatementAnalysis


def resolve_join_using(analysis: StatementAnalysis) -> StatementAnalysis:
    """Qualify USING columns of ``FROM a [LEFT|RIGHT] JOIN b USING (k)`` with the side the engine reads.

    An inner, left, semi or anti join yields the left table's ``k``, a right join the right table's; a
    full join really merges both and is left to sqlglot (``COALESCE(a.k, b.k)``), as are join chains,
    whose left side spans several tables.

    >>> from lineage_platform.sql.extractor import new_analysis
    >>> from lineage_platform.sql.classify_statement import classify_statement
    >>> a = classify_statement(new_analysis("SELECT k, v FROM a JOIN b USING (k) ORDER BY k"))
    >>> resolve_join_using(a).units[0].query.sql()
    'SELECT a.k, v FROM a JOIN b USING (k) ORDER BY a.k'
    """
    for unit in analysis.units:
        for select in unit.query.find_all(exp.Select):
            joins = select.args.get("joins") or []
            source = select.args.get("from_")
            if len(joins) != 1 or source is None or not joins[0].args.get("using"):
                continue
            join = joins[0]
            side = (join.side or "").upper()
            if side == "FULL":
                continue
            taken_from = join.this if side == "RIGHT" else source.this
            names = {identifier.name.lower() for identifier in join.args["using"]}
            for column in _own_columns(select):
                if not column.table and column.name.lower() in names:
                    column.set("table", exp.to_identifier(taken_from.alias_or_name))
    return analysis


def _own_columns(select: exp.Select) -> list[exp.Column]:
    """Columns of ``select`` itself, not of the subqueries nested in it."""
    return [c for c in select.find_all(exp.Column) if c.find_ancestor(exp.Select) is select]
