"""The scope walk behind resource blocks: which base columns a query reads and which rows of each scan.

Walks a traced query unit's scope tree once (children before parents). Columns come from the
:class:`~lineage_platform.sql.Tracer`; ANDed ``column op constant`` conditions become row predicates
of the scan they restrict, when that is sound:

* in WHERE, and in JOIN ON for tables whose failing rows the join drops (both sides of inner and semi
  joins, the null-supplied side of outer joins, the right side of anti joins);
* never ``IS NULL`` in a scope with an outer join (rows filled with NULLs pass it);
* through a derived table or single-use CTE when filtering its output equals filtering its input: the
  output is a plain column, the subquery has no LIMIT, window function or QUALIFY, and an aggregating
  subquery is filtered on a GROUP BY key (not with IS NULL: rolled-up rows hold NULL keys); through set
  operations into every branch.

Every other condition makes its columns read columns (sound, only coarser).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, ScopeType

from lineage_platform.model import Predicate, Transform
from lineage_platform.sql import (
    COMPARISONS,
    ROW_CLAUSES,
    Flow,
    QueryUnit,
    Tracer,
    Usage,
    leftmost_select,
    table_name,
)

COMPARISON_OPS: dict[str, type[exp.Expr]] = {forward: kind for kind, (forward, _) in COMPARISONS.items()}
"""Comparison operator text -> sqlglot node class."""
_NEGATED = {"IN": "NOT IN", "LIKE": "NOT LIKE", "IS NULL": "IS NOT NULL"}
Condition = list[tuple[str, Any]]
"""(op, constant) tests on one column, ANDed."""
Target = tuple[Scope, str, str]
"""A table scan a predicate lands on: (scope, alias of the table in it, column name)."""


@dataclass
class ScanReads:
    """Read columns per base table, and per scan (scope, alias) its table and restricting predicates."""

    columns: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    scans: dict[tuple[int, str], tuple[str, list[Predicate]]] = field(default_factory=dict)

    def add(self, flows: Iterable[Flow]) -> None:
        """Record the base columns of ``flows`` as read."""
        for flow in flows:
            table, _, column = flow.source.rpartition(".")
            self.columns[table].add(column)

    def restrictions(self) -> dict[str, list[list[Predicate]]]:
        """Per table, the predicate lists of its scans (an empty list: the scan reads every row)."""
        found: dict[str, list[list[Predicate]]] = defaultdict(list)
        for table, predicates in self.scans.values():
            found[table].append(predicates)
        return found


def read_unit(unit: QueryUnit, tracer: Tracer, reads: ScanReads) -> None:
    """Add the reads of one query unit: its outputs, then every scope's clauses and scans."""
    root = unit.scope
    assert root is not None
    _UnitReader(root, tracer, reads).read(range(len(leftmost_select(unit.query).selects)))


class _UnitReader:
    """Reads one unit's scope tree into :class:`ScanReads`."""

    def __init__(self, root: Scope, tracer: Tracer, reads: ScanReads) -> None:
        self.root = root
        self.tracer = tracer
        self.reads = reads
        self._uses: dict[int, int] = defaultdict(int)
        for scope in root.traverse():
            for _, source in scope.selected_sources.values():
                if isinstance(source, Scope):
                    self._uses[id(source)] += 1

    def read(self, positions: Iterable[int]) -> None:
        self._read_outputs(self.root, positions)
        for scope in self.root.traverse():
            expression = scope.expression
            if isinstance(expression, exp.SetOperation):
                self._read_set_operation(scope)
            elif isinstance(expression, exp.Lateral):
                # a UDTF's arguments decide how many rows it produces, whether or not its outputs are read
                self.reads.add(self.tracer.flows(scope, expression.this))
            elif isinstance(expression, exp.Select):
                self._read_select(scope)

    def _read_outputs(self, scope: Scope, positions: Iterable[int]) -> None:
        for position in positions:
            self.reads.add(self.tracer.output_at(scope, position))

    def _read_set_operation(self, scope: Scope) -> None:
        """EXCEPT, INTERSECT and distinct UNION compare whole rows: every column of every branch is read."""
        expression = scope.expression
        if isinstance(expression, (exp.Except, exp.Intersect)) or expression.args.get("distinct"):
            for child in scope.set_operation_scopes:
                self._read_outputs(child, range(len(leftmost_select(child.expression).selects)))

    def _read_select(self, scope: Scope) -> None:
        select = scope.expression
        for projection in select.selects:
            # DISTINCT compares every projection; a UDTF in the select list multiplies rows
            if select.args.get("distinct") or projection.find(exp.UDTF) is not None:
                self.reads.add(self.tracer.flows(scope, projection))
        for alias, (_, source) in scope.selected_sources.items():
            if isinstance(source, exp.Table):
                self.reads.scans[(id(scope), alias)] = (table_name(source), [])
        aliases = set(scope.selected_sources)
        joins = select.args.get("joins") or []
        outer_join = any(join.side for join in joins)
        where = select.args.get("where")
        for conjunct in _conjuncts(where.this if where is not None else None):
            self._read_condition(scope, conjunct, "FILTER", aliases, outer_join)
        for join in joins:
            for conjunct in _conjuncts(join.args.get("on")):
                self._read_condition(scope, conjunct, "JOIN", _restricted_by_on(join, aliases), outer_join)
            for column in join.args.get("using") or []:
                self.reads.add(self.tracer.flows(scope, column, Usage().weak("JOIN")))
        for key, transform in ROW_CLAUSES:
            clause = select.args.get(key)
            if clause is not None and key != "where":
                self.reads.add(self.tracer.flows(scope, clause, Usage().weak(transform)))  # type: ignore[arg-type]

    def _read_condition(
        self, scope: Scope, conjunct: exp.Expr, transform: Transform, restricted: set[str], outer_join: bool
    ) -> None:
        """Row predicates on the scans the conjunct restricts when it is one, else the columns it reads."""
        found = _as_predicates(conjunct)
        if found:
            column = found[0][0]
            condition = [(op, value) for _, op, value in found]
            alias = _source_alias(scope, column)
            is_null = any(op == "IS NULL" for op, _ in condition)
            if alias in restricted and not (is_null and outer_join):
                targets = self._targets(scope, alias, column.name.lower(), is_null)
                if targets is not None:
                    for target_scope, target_alias, name in targets:
                        table, predicates = self.reads.scans[(id(target_scope), target_alias)]
                        predicates.extend(Predicate(table, name, op, value) for op, value in condition)
                    return
        self.reads.add(self.tracer.flows(scope, conjunct, Usage().weak(transform)))

    def _targets(self, scope: Scope, alias: str, name: str, is_null: bool) -> list[Target] | None:
        """The scans a filter on ``alias.name`` in ``scope`` can restrict, or None when it cannot move there."""
        source = scope.sources.get(alias)
        if isinstance(source, exp.Table):
            return [(scope, alias, name)]
        if not isinstance(source, Scope) or not self._single_use(source):
            return None
        names = [n.lower() for n in leftmost_select(source.expression).named_selects]
        if name not in names:
            return None
        return self._targets_at(source, names.index(name), is_null)

    def _targets_at(self, scope: Scope, position: int, is_null: bool) -> list[Target] | None:
        """Scans restricted by filtering output ``position`` of a derived scope (all-or-nothing)."""
        expression = scope.expression
        if isinstance(expression, exp.SetOperation):
            targets: list[Target] = []
            for child in scope.set_operation_scopes:
                found = self._targets_at(child, position, is_null)
                if found is None:
                    return None
                targets += found
            return targets
        if not isinstance(expression, exp.Select) or not _filter_commutes(expression, is_null):
            return None
        if position >= len(expression.selects):
            return None
        projection = expression.selects[position]
        value = projection.this if isinstance(projection, exp.Alias) else projection
        if not isinstance(value, exp.Column) or not _groups_by(expression, value):
            return None
        outer_join = any(join.side for join in expression.args.get("joins") or [])
        if is_null and outer_join:
            return None
        return self._targets(scope, _source_alias(scope, value), value.name.lower(), is_null)

    def _single_use(self, scope: Scope) -> bool:
        """A derived table, or a CTE read once: restricting its scans restricts no other reader."""
        return scope.scope_type == ScopeType.DERIVED_TABLE or (
            scope.scope_type == ScopeType.CTE and self._uses[id(scope)] == 1
        )


def _filter_commutes(select: exp.Select, is_null: bool) -> bool:
    """Whether filtering this SELECT's output equals filtering its input rows (for plain output columns)."""
    if any(select.args.get(key) for key in ("limit", "offset", "qualify")):
        return False
    if any(projection.find(exp.Window) for projection in select.selects):
        return False
    aggregates = select.args.get("group") or any(p.find(exp.AggFunc) for p in select.selects)
    return not (aggregates and is_null)


def _groups_by(select: exp.Select, column: exp.Column) -> bool:
    """True when ``select`` does not aggregate, or ``column`` is one of its GROUP BY keys."""
    group = select.args.get("group")
    if group is None:
        return not any(p.find(exp.AggFunc) for p in select.selects)
    return any(isinstance(key, exp.Column) and key == column for key in group.find_all(exp.Column))


def _restricted_by_on(join: exp.Join, aliases: set[str]) -> set[str]:
    """Source aliases whose rows failing this ON condition cannot reach the result.

    Inner and semi joins drop them on both sides; an outer join keeps every row of its preserved side(s);
    an anti join keeps exactly the left rows that fail the condition.
    """
    joined = join.this.alias_or_name.lower()
    side, kind = (join.side or "").upper(), (join.kind or "").upper()
    if kind == "ANTI":
        return {joined} & aliases
    if kind == "SEMI" or not side:
        return aliases
    if side == "LEFT":
        return {joined} & aliases
    if side == "RIGHT":
        return aliases - {joined}
    return set()


def _source_alias(scope: Scope, column: exp.Column) -> str:
    """The source a column reads: its qualifier, or the only source of an unqualified scope."""
    if column.table:
        return column.table.lower()
    sources = list(scope.selected_sources)
    return sources[0].lower() if len(sources) == 1 and not scope.expression.args.get("laterals") else ""


def _conjuncts(condition: exp.Expr | None) -> list[exp.Expr]:
    if condition is None:
        return []
    if isinstance(condition, exp.And):
        return _conjuncts(condition.this) + _conjuncts(condition.expression)
    if isinstance(condition, exp.Paren):
        return _conjuncts(condition.this)
    return [condition]


def _as_predicates(node: exp.Expr) -> list[tuple[exp.Column, str, Any]]:
    """``(column, op, constant)`` for a comparison of one column with constants (two for BETWEEN), else []."""
    negated = isinstance(node, exp.Not)
    inner = node.this if negated else node
    while isinstance(inner, exp.Paren):
        inner = inner.this
    if type(inner) in COMPARISONS:
        forward, backward = COMPARISONS[type(inner)]
        if negated:
            return []
        if isinstance(inner.this, exp.Column) and _is_constant(inner.expression):
            return [(inner.this, forward, _constant(inner.expression))]
        if isinstance(inner.expression, exp.Column) and _is_constant(inner.this):
            return [(inner.expression, backward, _constant(inner.this))]
        return []
    column = inner.this
    if not isinstance(column, exp.Column):
        return []
    if isinstance(inner, exp.Between) and not negated:
        low, high = inner.args.get("low"), inner.args.get("high")
        if _is_constant(low) and _is_constant(high):
            return [(column, ">=", _constant(low)), (column, "<=", _constant(high))]
        return []
    op: str | None = None
    value: Any = None
    if isinstance(inner, exp.In) and not inner.args.get("query") and inner.expressions:
        if all(_is_constant(v) for v in inner.expressions):
            op, value = "IN", tuple(_constant(v) for v in inner.expressions)
    elif isinstance(inner, exp.Like) and _is_constant(inner.expression):
        op, value = "LIKE", _constant(inner.expression)
    elif isinstance(inner, exp.Is) and isinstance(inner.expression, exp.Null):
        op = "IS NULL"
    if op is None:
        return []
    return [(column, _NEGATED[op] if negated else op, value)]


def _is_constant(node: exp.Expr | None) -> bool:
    """A string, number or boolean literal (numbers optionally negated)."""
    if isinstance(node, exp.Neg):
        node = node.this
    return isinstance(node, (exp.Boolean, exp.Literal))


def _constant(node: exp.Expr) -> Any:
    if isinstance(node, exp.Neg):
        return -_constant(node.this)
    if isinstance(node, exp.Boolean):
        return node.this
    if node.is_string:
        return node.name
    number = float(node.name)
    return int(number) if number.is_integer() and "." not in node.name else number
