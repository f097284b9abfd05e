"""Pass: column edges — every written column traced to base columns, with strength, transform and key path."""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from lineage_platform.model import ColumnEdge
from lineage_platform.sql.analysis import QueryUnit, StatementAnalysis
from lineage_platform.sql.flow import Flow, Usage
from lineage_platform.sql.function_rules import FunctionRule, merge_rules
from lineage_platform.sql.tracer import Tracer, leftmost_select, projections


def trace_columns(
    analysis: StatementAnalysis, *, function_rules: Mapping[str, FunctionRule] | None = None
) -> StatementAnalysis:
    """Add column edges: strong/column-specific edges per written column, row-level weak edges once per target.

    >>> from lineage_platform.sql.extractor import new_analysis, run_passes
    >>> a = run_passes(new_analysis("SELECT upper(a) AS u FROM db.t WHERE b > 0"), until=trace_columns)
    >>> [(e.source, e.target, e.strength, e.transform) for e in a.edges]
    [('db.t.a', '$result.u', 'strong', 'TRANSFORMATION'), ('db.t.b', '$result', 'weak', 'FILTER')]
    """
    rules = merge_rules(function_rules)
    for unit in analysis.units:
        if unit.scope is not None:
            tracer = Tracer(
                unit.scope,
                rules,
                lambda m, n: analysis.issue(m, node=n),
                analysis.session.columns_of,
                frozenset(analysis.session.variables),
            )
            _trace_unit(analysis, unit, tracer)
    return analysis


def _trace_unit(analysis: StatementAnalysis, unit: QueryUnit, tracer: Tracer) -> None:
    root = unit.scope
    assert root is not None
    selects = projections(leftmost_select(unit.query))
    names = unit.output_names()
    if any(_is_star(p) for p in selects):
        analysis.issue(
            f"'*' could not be expanded for {unit.target.name}: the source schema is unknown; pass --schema",
            node=unit.query,
        )
        names = ()
        # The columns cannot be named, but what only decides rows or branches still bears on the target.
        for position in range(_explicit_width(unit.query)):
            for flow in tracer.output_at(root, position):
                if flow.usage.strength == "weak":
                    analysis.edges.append(_edge(flow, unit.target.name))
    elif len(names) != len(selects):
        analysis.issue(
            f"{unit.target.name} has {len(names)} columns but the query produces {len(selects)}; mapped by position",
            node=unit.query,
        )
    target = unit.target.name
    for position, name in enumerate(names[: len(selects)]):
        for flow in tracer.output_at(root, position):
            analysis.edges.append(_edge(flow, f"{target}.{name}"))
    for key in unit.conflict_keys:  # ON CONFLICT (k): the value written to k decides insert vs update
        if key in names[: len(selects)]:
            for flow in tracer.output_at(root, names.index(key)):
                analysis.edges.append(_edge(flow.through(Usage().weak("JOIN")), target))
    for scope in root.traverse():
        for flow in tracer.clause_flows(scope):
            analysis.edges.append(_edge(flow, target))


def _is_star(projection: exp.Expr) -> bool:
    return isinstance(projection, exp.Star) or (isinstance(projection, exp.Column) and projection.is_star)


def _explicit_width(query: exp.Expr) -> int:
    """How many columns the branches of a set operation that name theirs produce (0 when every branch has a star)."""
    if isinstance(query, exp.SetOperation):
        return max(_explicit_width(query.this), _explicit_width(query.expression))
    selects = projections(query)
    return 0 if any(_is_star(p) for p in selects) else len(selects)


def _edge(flow: Flow, target: str) -> ColumnEdge:
    usage = flow.usage
    return ColumnEdge(flow.source, target, usage.strength, usage.transform, usage.masking, usage.key_path)
