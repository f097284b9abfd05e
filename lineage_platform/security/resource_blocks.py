"""Fine-grained permission extraction: which columns of which rows of each base table a statement reads.

A statement's reads become **resource blocks**, one per base table and distinct row restriction:
``columns x rows``. The columns are the returned columns traced through lineage to base columns plus every
column the query compares, groups, sorts, joins or windows on; the rows are the conjunction of the simple
``column op constant`` conditions that restrict that table's scan (WHERE, and JOIN ON where the join
cannot bring back rows that fail it). A table read several times with different restrictions gets one
block per restriction (the rows read are their union). Columns named only in row predicates are read
too: a block covers ``columns + predicate columns`` of the rows that satisfy its predicates.

Anything that cannot be traced completely is refused (:class:`~lineage_platform.errors.SecurityError`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from lineage_platform.model import Predicate, Transform
from lineage_platform.security.query_analysis import TracedQuery, trace_query
from lineage_platform.sql.analysis import QueryUnit
from lineage_platform.sql.flow import Flow, Usage
from lineage_platform.sql.tracer import ROW_CLAUSES, Tracer, leftmost_select, table_name

_COMPARISONS: dict[type[exp.Expr], tuple[str, str]] = {
    exp.EQ: ("=", "="),
    exp.NEQ: ("!=", "!="),
    exp.GT: (">", "<"),
    exp.GTE: (">=", "<="),
    exp.LT: ("<", ">"),
    exp.LTE: ("<=", ">="),
}
_NEGATED = {"IN": "NOT IN", "LIKE": "NOT LIKE", "IS NULL": "IS NOT NULL"}


@dataclass(frozen=True)
class ResourceBlock:
    """The cells of one base table a statement reads: ``columns`` (plus predicate columns) of matching rows."""

    table: str
    columns: tuple[str, ...]
    predicates: tuple[Predicate, ...] = ()

    @property
    def database(self) -> str:
        """The database part of ``db.table``."""
        return self.table.rpartition(".")[0]

    @property
    def covered_columns(self) -> tuple[str, ...]:
        """Every column of the block: read columns and the columns its row predicates test."""
        return tuple(sorted(set(self.columns) | {p.column for p in self.predicates}))

    def to_dict(self) -> dict[str, Any]:
        """JSON form: database, table, columns, row predicates and the row condition as SQL text."""
        return {
            "database": self.database,
            "table": self.table.rpartition(".")[2],
            "columns": list(self.columns),
            "row_predicates": [p.to_dict() for p in self.predicates],
            "rows": describe_rows(self.predicates),
        }


@dataclass(frozen=True)
class AccessRequest:
    """Everything one statement needs to read, as resource blocks, and the tables it writes."""

    sql: str
    operation: str
    blocks: tuple[ResourceBlock, ...]
    writes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON form of the request."""
        return {
            "operation": self.operation,
            "blocks": [b.to_dict() for b in self.blocks],
            "writes": list(self.writes),
        }


@dataclass
class _Reads:
    """Columns per base table and, per scan of a table, the predicates restricting that scan."""

    columns: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    scans: dict[str, list[list[Predicate]]] = field(default_factory=lambda: defaultdict(list))

    def add(self, flows: Iterable[Flow]) -> None:
        """Record the base columns of ``flows`` as read."""
        for flow in flows:
            table, _, column = flow.source.rpartition(".")
            self.columns[table].add(column)


def extract_resource_blocks(
    sql: str,
    schema: Mapping[str, Any] | None = None,
    dialect: str = "hive",
    default_db: str | None = None,
) -> AccessRequest:
    """The resource blocks a statement reads; raises :class:`SecurityError` when it cannot be fully traced.

    >>> request = extract_resource_blocks("SELECT name FROM db.users WHERE region = 'EU' AND age >= 18")
    >>> [(b.table, b.columns, describe_rows(b.predicates)) for b in request.blocks]
    [('db.users', ('name',), "age >= 18 AND region = 'EU'")]
    """
    return resource_blocks(trace_query(sql, schema, dialect, default_db), sql)


def resource_blocks(traced: TracedQuery, sql: str = "") -> AccessRequest:
    """Resource blocks of an already traced statement."""
    reads = _Reads()
    for unit, tracer in zip(traced.units, traced.tracers):
        _read_unit(unit, tracer, reads)
    blocks: list[ResourceBlock] = []
    for table in sorted(set(reads.scans) | set(reads.columns)):
        restrictions, folded = _row_restrictions(reads.scans.get(table, [[]]))
        columns = tuple(sorted(reads.columns.get(table, set()) | folded))
        blocks.extend(ResourceBlock(table, columns, conjunction) for conjunction in restrictions)
    analysis = traced.analysis
    writes = tuple(d.name for d in analysis.outputs if d.name != "$result")
    return AccessRequest(sql, analysis.operation, tuple(blocks), writes)


def describe_rows(predicates: Iterable[Predicate], dialect: str = "hive") -> str:
    """The row condition as SQL text (``all rows`` without predicates)."""
    condition = row_condition(predicates)
    return "all rows" if condition is None else condition.sql(dialect)


def row_condition(predicates: Iterable[Predicate], qualifier: str | None = None) -> exp.Expr | None:
    """The AND of ``predicates`` as a sqlglot condition (None when there are none)."""
    conditions = [_predicate_condition(p, qualifier) for p in predicates]
    return exp.and_(*conditions) if conditions else None


def _predicate_condition(predicate: Predicate, qualifier: str | None) -> exp.Expr:
    column = exp.column(predicate.column, table=qualifier)
    value = predicate.value
    op = predicate.op
    if op in ("IS NULL", "IS NOT NULL"):
        condition: exp.Expr = exp.Is(this=column, expression=exp.Null())
        return exp.not_(condition) if op == "IS NOT NULL" else condition
    if op in ("IN", "NOT IN"):
        condition = exp.In(this=column, expressions=[exp.convert(v) for v in value])
        return exp.not_(condition) if op == "NOT IN" else condition
    if op in ("LIKE", "NOT LIKE"):
        condition = exp.Like(this=column, expression=exp.convert(value))
        return exp.not_(condition) if op == "NOT LIKE" else condition
    builder = {forward: kind for kind, (forward, _) in _COMPARISONS.items()}[op]
    return builder(this=column, expression=exp.convert(value))


def _row_restrictions(scans: list[list[Predicate]]) -> tuple[list[tuple[Predicate, ...]], set[str]]:
    """Distinct scan restrictions of one table, without those implied by a looser one (a subset of its
    predicates), and the columns the dropped ones test: those are read on the looser block's rows."""
    unique = {frozenset(s) for s in scans}
    kept = [s for s in unique if not any(other < s for other in unique)]
    folded = {p.column for s in unique if s not in kept for p in s}
    ordered = (tuple(sorted(s, key=_predicate_order)) for s in kept)
    return sorted(ordered, key=lambda s: (len(s), [_predicate_order(p) for p in s])), folded


def _predicate_order(predicate: Predicate) -> tuple[str, str, str]:
    return predicate.column, predicate.op, repr(predicate.value)


# reading one query unit ----------------------------------------------------------------------------------------
def _read_unit(unit: QueryUnit, tracer: Tracer, reads: _Reads) -> None:
    root = unit.scope
    assert root is not None
    _read_outputs(root, tracer, reads, range(len(leftmost_select(unit.query).selects)))
    for scope in root.traverse():
        if isinstance(scope.expression, exp.SetOperation):
            _read_set_operation(scope, tracer, reads)
        elif isinstance(scope.expression, exp.Lateral):
            # a UDTF's arguments decide how many rows it produces, whether or not its outputs are read
            reads.add(tracer.flows(scope, scope.expression.this))
        elif isinstance(scope.expression, exp.Select):
            _read_select(scope, tracer, reads)


def _read_outputs(scope: Scope, tracer: Tracer, reads: _Reads, positions: Iterable[int]) -> None:
    for position in positions:
        reads.add(tracer.output_at(scope, position))


def _read_set_operation(scope: Scope, tracer: Tracer, reads: _Reads) -> None:
    """EXCEPT, INTERSECT and distinct UNION compare whole rows: every column of every branch is read."""
    expression = scope.expression
    if isinstance(expression, (exp.Except, exp.Intersect)) or expression.args.get("distinct"):
        for child in scope.set_operation_scopes:
            _read_outputs(child, tracer, reads, range(len(leftmost_select(child.expression).selects)))


def _read_select(scope: Scope, tracer: Tracer, reads: _Reads) -> None:
    select = scope.expression
    for projection in select.selects:
        # DISTINCT compares every projection; a UDTF in the select list multiplies rows
        if select.args.get("distinct") or projection.find(exp.UDTF) is not None:
            reads.add(tracer.flows(scope, projection))
    tables = {alias for alias, (_, source) in scope.selected_sources.items() if isinstance(source, exp.Table)}
    scans: dict[str, list[Predicate]] = {alias: [] for alias in tables}
    joins = select.args.get("joins") or []
    has_outer_join = any(join.side for join in joins)
    where = select.args.get("where")
    if where is not None:
        for conjunct in _conjuncts(where.this):
            _read_condition(scope, tracer, reads, conjunct, "FILTER", tables, scans, has_outer_join)
    for join in joins:
        for conjunct in _conjuncts(join.args.get("on")):
            restricted = _restricted_by_on(join, tables)
            _read_condition(scope, tracer, reads, conjunct, "JOIN", restricted, scans, has_outer_join)
        for column in join.args.get("using") or []:
            reads.add(tracer.flows(scope, column, Usage().weak("JOIN")))
    for key, transform in ROW_CLAUSES:
        clause = select.args.get(key)
        if clause is not None and key != "where":
            reads.add(tracer.flows(scope, clause, Usage().weak(transform)))  # type: ignore[arg-type]
    for alias, predicates in scans.items():
        reads.scans[table_name(scope.sources[alias])].append(predicates)


def _restricted_by_on(join: exp.Join, tables: set[str]) -> set[str]:
    """Table aliases whose rows failing this ON condition cannot reach the result.

    Inner and semi joins drop them on both sides; an outer join keeps every row of its preserved side(s);
    an anti join keeps exactly the left rows that fail the condition.
    """
    joined = join.this.alias_or_name.lower()
    side, kind = (join.side or "").upper(), (join.kind or "").upper()
    if kind == "ANTI":
        return {joined} & tables
    if kind == "SEMI" or not side:
        return tables
    if side == "LEFT":
        return {joined} & tables
    if side == "RIGHT":
        return tables - {joined}
    return set()


def _read_condition(
    scope: Scope,
    tracer: Tracer,
    reads: _Reads,
    conjunct: exp.Expr,
    transform: Transform,
    restricted: set[str],
    scans: dict[str, list[Predicate]],
    has_outer_join: bool,
) -> None:
    """Row predicates on a restricted scan when the conjunct is one, else the columns the condition reads."""
    found = _as_predicates(conjunct)
    if found:
        column = found[0][0]
        alias = _scan_alias(scope, column)
        # IS NULL is also true on rows an outer join filled with NULLs: it does not restrict the scan
        if alias in restricted and not (has_outer_join and any(op == "IS NULL" for _, op, _ in found)):
            table = table_name(scope.sources[alias])
            scans[alias].extend(Predicate(table, column.name.lower(), op, value) for _, op, value in found)
            return
    reads.add(tracer.flows(scope, conjunct, Usage().weak(transform)))


def _scan_alias(scope: Scope, column: exp.Column) -> str:
    """The alias of the scan a column reads: its qualifier, or the only source of an unqualified scope."""
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
    if type(inner) in _COMPARISONS:
        forward, backward = _COMPARISONS[type(inner)]
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
