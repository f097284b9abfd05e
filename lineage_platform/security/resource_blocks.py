"""Fine-grained permission extraction: which columns of which rows of each base table a statement reads.

A statement's reads become **resource blocks**, one per base table and distinct row restriction:
``columns x rows``. The columns are the returned columns traced through lineage to base columns plus every
column the query compares, groups, sorts, joins or windows on; the rows are the conjunction of the simple
``column op constant`` conditions that restrict that table's scan (see :mod:`.scan_reads` for when a
condition restricts a scan). A table read several times with different restrictions gets one
block per restriction (the rows read are their union). Columns named only in row predicates are read
too: a block covers ``columns + predicate columns`` of the rows that satisfy its predicates.

Anything that cannot be traced completely is refused (:class:`~lineage_platform.errors.SecurityError`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from lineage_platform.model import RESULT_DATASET, Predicate
from lineage_platform.security.query_analysis import TracedQuery, trace_script
from lineage_platform.security.scan_reads import COMPARISON_OPS, ScanReads, read_unit


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
    """Everything a statement (or script) reads, as resource blocks; its operations and the tables it writes."""

    sql: str
    operations: tuple[str, ...]
    blocks: tuple[ResourceBlock, ...]
    writes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON form of the request."""
        return {
            "operations": list(self.operations),
            "blocks": [b.to_dict() for b in self.blocks],
            "writes": list(self.writes),
        }


def extract_resource_blocks(
    sql: str,
    schema: Mapping[str, Any] | None = None,
    dialect: str = "hive",
    default_db: str | None = None,
    variables: Mapping[str, str] | None = None,
) -> AccessRequest:
    """The resource blocks a statement or script reads; raises :class:`SecurityError` when any query of it
    cannot be fully traced (see :func:`~lineage_platform.security.query_analysis.trace_script`).

    >>> request = extract_resource_blocks("SELECT name FROM db.users WHERE region = 'EU' AND age >= 18")
    >>> [(b.table, b.columns, describe_rows(b.predicates)) for b in request.blocks]
    [('db.users', ('name',), "age >= 18 AND region = 'EU'")]
    """
    return resource_blocks(trace_script(sql, schema, dialect, default_db, variables), sql)


def resource_blocks(traced: Iterable[TracedQuery], sql: str = "") -> AccessRequest:
    """Resource blocks of already traced statements (their reads together)."""
    reads = ScanReads()
    operations: list[str] = []
    writes: list[str] = []
    for statement in traced:
        operations.append(statement.operation)
        # temporary views live in the session only: creating one writes nothing
        writes += [d.name for d in statement.outputs if d.name != RESULT_DATASET and d.kind != "temp"]
        for unit, tracer in zip(statement.units, statement.tracers):
            read_unit(unit, tracer, reads)
    scans = reads.restrictions()
    blocks: list[ResourceBlock] = []
    for table in sorted(set(scans) | set(reads.columns)):
        restrictions, folded = _row_restrictions(scans.get(table, [[]]))
        columns = tuple(sorted(reads.columns.get(table, set()) | folded))
        blocks.extend(ResourceBlock(table, columns, conjunction) for conjunction in restrictions)
    return AccessRequest(sql, tuple(operations), tuple(blocks), tuple(dict.fromkeys(writes)))


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
    return COMPARISON_OPS[op](this=column, expression=exp.convert(value))


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
