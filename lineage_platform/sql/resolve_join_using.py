"""Pass: read an unqualified ``JOIN … USING`` / ``NATURAL JOIN`` column from the side the engine takes it from."""

from __future__ import annotations

from sqlglot import exp

from lineage_platform.sql.analysis import StatementAnalysis
from lineage_platform.sql.tracer import own_columns


def resolve_join_using(analysis: StatementAnalysis) -> StatementAnalysis:
    """Qualify USING columns of ``FROM a [LEFT|RIGHT] JOIN b USING (k)`` with the side the engine reads.

    An inner, left, semi or anti join yields the left table's ``k``, a right join the right table's; a
    full join really merges both and is left to sqlglot (``COALESCE(a.k, b.k)``), as are join chains,
    whose left side spans several tables. A ``NATURAL JOIN`` of two tables whose columns the catalog knows
    joins on the names they share, read the same way.

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
            if len(joins) != 1 or source is None:
                continue
            join = joins[0]
            side = (join.side or "").upper()
            names = _join_names(analysis, source.this, join)
            if side == "FULL" or not names:
                continue
            taken_from = join.this if side == "RIGHT" else source.this
            for column in own_columns(select):
                if not column.table and column.name.lower() in names:
                    column.set("table", exp.to_identifier(taken_from.alias_or_name))
    return analysis


def _join_names(analysis: StatementAnalysis, left: exp.Expr, join: exp.Join) -> set[str]:
    """The columns a join merges: its USING list, or for NATURAL the names both (catalog) tables have."""
    if join.args.get("using"):
        return {identifier.name.lower() for identifier in join.args["using"]}
    if (
        join.method.upper() != "NATURAL"
        or not isinstance(left, exp.Table)
        or not isinstance(join.this, exp.Table)
    ):
        return set()
    sides = [analysis.session.columns_of(_table_name(analysis, t)) for t in (left, join.this)]
    return set(sides[0]) & set(sides[1]) if sides[0] and sides[1] else set()


def _table_name(analysis: StatementAnalysis, table: exp.Table) -> str:
    return analysis.session.qualify_name(
        ".".join(p for p in (table.catalog, table.db, table.name) if p).lower()
    )
