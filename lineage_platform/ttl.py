"""Per-column TTL advice from how far back downstream jobs read a table's partitions.

For every column of a table, the downstream processes that read it (column lineage, or table lineage for
processes without column lineage, which are taken to read every column) and, for each, how many daily partitions
back from its business date (that day's partition included) its filter on the partition column reaches:

- ``dt = '${bizdate}'`` -> 1; ``dt >= date_sub('${bizdate}', 20)`` -> 21 (the partitions of ``bizdate - 20`` up to
  ``bizdate``); ``dt > date_sub('${bizdate}', 20)`` -> 20; ``BETWEEN date_sub('${bizdate}', 30) AND ...`` -> 31;
  ``add_months('${bizdate}', -1)`` -> 32 (a month is up to 31 days); ``IN (...)`` -> its oldest element;
- a fixed date anywhere it sets the oldest partition read (``dt >= '2024-01-01'``, ``dt = '2024-01-01'``,
  ``date_sub('2024-01-01', 3)``), no lower bound (``dt <= '${bizdate}'``) or no partition filter at all ->
  unbounded: the column gets **no advice**, with the reason, because any expiry would delete data still read.

Ingestion keeps every date but the run's own business date as written (``lineage_platform/ingest/statements.py``),
so a fixed start stays a fixed start. The advice for a column is the maximum over its readers plus a margin; the
table's is the maximum over its columns, and none if any read column has none. Where the table's
``partitionBytes`` and ``retentionDays`` are known, the storage that expiring at the advised TTL would free is
reported too.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from gremlin_python.process.graph_traversal import GraphTraversalSource
from gremlin_python.process.traversal import T

from lineage_platform.errors import LineageError
from lineage_platform.graph.dsl import __, lineage_source
from lineage_platform.graph.vocabulary import Key

PARTITION_COLUMNS = frozenset({"dt", "ds", "pt", "day", "date", "p_date", "partition_date", "biz_date"})
_DAY = r"(?:'?\$\{[^}]+\}'?|current_date(?:\(\))?|current_timestamp(?:\(\))?|now\(\)|to_date\(\s*'?\$\{[^}]+\}'?\s*\))"
"""The run's own day: a scheduler variable (``${bizdate}``) or the current date."""
_RUN_DAY = re.compile(rf"^{_DAY}$", re.IGNORECASE)
_OFFSET = re.compile(
    rf"^(date_sub|date_add|add_months)\s*\(\s*({_DAY}|.+?)\s*,\s*(-?\d+)\s*\)$", re.IGNORECASE
)
_FIXED_DATE = re.compile(r"\d{4}-?\d{2}-?\d{2}")


@dataclass
class Use:
    """One downstream process reading the column, and how far back it reads."""

    process: str
    operation: str | None
    jobs: list[str]
    predicate: str
    days: int | None  # None: unbounded
    reason: str | None = None  # why days is None


@dataclass
class ColumnAdvice:
    """TTL advice for one column with its evidence."""

    column: str
    reads_back_days: int | None  # None: unbounded (or no partition filter)
    recommended_ttl_days: int | None
    uses: list[Use] = field(default_factory=list)

    @property
    def unused(self) -> bool:
        """No downstream job reads this column."""
        return not self.uses

    @property
    def no_advice_reason(self) -> str | None:
        """Why there is no advice (the unbounded readers), None when there is advice or nobody reads the column."""
        unbounded = [f"{', '.join(u.jobs) or u.process}: {u.reason}" for u in self.uses if u.days is None]
        return "no advice: " + "; ".join(unbounded) if unbounded else None


@dataclass
class TableAdvice:
    """TTL advice for a table: per column, and for the table as a whole."""

    table: str
    margin_days: int
    columns: list[ColumnAdvice]
    recommended_ttl_days: int | None
    retention_days: int | None = None
    partition_bytes: int | None = None

    @property
    def no_advice_reason(self) -> str | None:
        """Why the table gets no advice (its unbounded readers, or nobody reads it), None when it gets one."""
        if self.recommended_ttl_days is not None:
            return None
        reasons = sorted({reason for c in self.columns if (reason := c.no_advice_reason)})
        return reasons[0] if len(reasons) == 1 else "; ".join(reasons) or "no advice: no job reads this table"

    @property
    def savable_bytes(self) -> int | None:
        """Bytes freed by expiring partitions older than the advice, where sizes are known."""
        if None in (self.retention_days, self.partition_bytes, self.recommended_ttl_days):
            return None
        return max(0, self.retention_days - self.recommended_ttl_days) * self.partition_bytes  # type: ignore[operator]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "table": self.table,
            "margin_days": self.margin_days,
            "recommended_ttl_days": self.recommended_ttl_days,
            "no_advice_reason": self.no_advice_reason,
            "retention_days": self.retention_days,
            "savable_bytes": self.savable_bytes,
            "columns": [
                {
                    "column": c.column,
                    "reads_back_days": c.reads_back_days,
                    "recommended_ttl_days": c.recommended_ttl_days,
                    "no_advice_reason": c.no_advice_reason,
                    "unused": c.unused,
                    "uses": [u.__dict__ for u in c.uses],
                }
                for c in self.columns
            ],
        }


def _reach_of_reads(
    predicates: list[dict[str, Any]], partition_columns: frozenset[str]
) -> tuple[int | None, str | None]:
    """Partitions one process reads back from a table, with the reason when unbounded. Within one read the
    tightest lower bound wins (its filters are ANDed); a statement that reads the table several times reads as far
    back as its widest read, and a read without a partition filter of its own reads everything."""
    reads: dict[Any, list[dict[str, Any]]] = {}
    for predicate in predicates:
        reads.setdefault(predicate.get("read"), []).append(predicate)
    if len(reads) > 1:
        reads.pop(None, None)  # filters not tied to one read of a table read several times: not counted
    widest: int | None = 0
    reasons = []
    for group in reads.values() or [[]]:
        reaches = [_reach(p["op"], p["value"]) for p in group if p.get("column") in partition_columns]
        bounded = [days for days, _ in reaches if days is not None]
        if bounded and not any(p["op"] == "UNFILTERED" for p in group):
            widest = None if widest is None else max(widest, min(bounded))
            continue
        widest = None
        several = " (one of its reads of the table)" if len(reads) > 1 else ""
        reasons.append(
            "; ".join(why for _, why in reaches if why)
            or f"no partition filter{several} (reads every partition)"
        )
    return widest, "; ".join(reasons) or None


def lookback_days(op: str, value: Any) -> int | None:
    """Daily partitions a filter ``partition_column op value`` reaches back, the business date's own included;
    None when unbounded (a fixed date, or no lower bound).

    >>> lookback_days("=", "${bizdate}"), lookback_days(">=", "date_sub('${bizdate}', 20)")
    (1, 21)
    >>> lookback_days("BETWEEN", ["date_sub('${bizdate}', 7)", "'${bizdate}'"]), lookback_days(">=", "2024-01-01")
    (8, None)
    """
    return _reach(op, value)[0]


def _reach(op: str, value: Any) -> tuple[int | None, str | None]:
    """(partitions back, None) or (None, why it is unbounded) for one filter on the partition column."""
    op = op.upper()
    if op in ("=", ">=", ">"):
        return _bound(str(value), strict=op == ">")
    if op == "BETWEEN" and isinstance(value, list | tuple) and value:
        return _bound(str(value[0]), strict=False)
    if op == "IN" and isinstance(value, list | tuple) and value:
        reaches = [_bound(str(element), strict=False) for element in value]
        unbounded = [why for days, why in reaches if days is None]
        return (None, unbounded[0]) if unbounded else (max(days for days, _ in reaches), None)  # type: ignore[type-var]
    return None, f"no lower bound ({op} {value})"


def _bound(expression: str, *, strict: bool) -> tuple[int | None, str | None]:
    """Partitions from a lower bound to the business date: ``bizdate - n`` reaches n + 1 (n if ``strict``).

    Only the run's day and a whole date_sub/date_add/add_months of it count as relative; anything else (a fixed
    date, a month start built with trunc/concat, ...) is unbounded, since a guess could delete data still read.
    """
    text = expression.strip()
    if match := _OFFSET.match(text):
        function, base, amount = match.group(1).lower(), match.group(2), int(match.group(3))
        if not _RUN_DAY.match(base):
            return None, f"fixed date {text}" if _FIXED_DATE.search(base) else f"unrecognised bound {text}"
        back = {"date_sub": amount, "date_add": -amount, "add_months": -amount * 31}[function]
    elif _RUN_DAY.match(text):
        back = 0
    else:
        return None, f"fixed date {text}" if _FIXED_DATE.search(text) else f"unrecognised bound {text}"
    return max(1, back + (0 if strict else 1)), None


def advise(
    g: GraphTraversalSource,
    table: str,
    *,
    margin_days: int = 1,
    partition_columns: frozenset[str] = PARTITION_COLUMNS,
) -> TableAdvice:
    """TTL advice for every column of ``table`` from the partition filters of its downstream readers."""
    g = lineage_source(g)
    found = (
        g.tables(table.lower())
        .project("id", "props", "columns")
        .by(T.id)
        .by(__.value_map(Key.PARTITION_BYTES, Key.RETENTION_DAYS))
        .by(
            __.columns_of()
            .project("name", "procs")
            .by(__.qualified_name())
            .by(__.flows_out(weak=True).values(Key.PROCESS).dedup().fold())
            .fold()
        )
        .to_list()
    )
    if not found:
        raise LineageError(
            f"no table named {table!r} in the graph", hint="use db.table; `lineage trace` suggests names"
        )
    row = found[0]
    readers = {
        r["name"]: r
        for r in g.V(row["id"])
        .readers()
        .project("name", "operation", "predicates", "jobs")
        .by(__.qualified_name())
        .by(__.values(Key.OPERATION))
        .by(__.coalesce(__.values(Key.PREDICATES), __.constant("[]")))
        .by(__.runs().values(Key.JOB).dedup().fold())
        .to_list()
    }
    with_column_lineage = {proc for column in row["columns"] for proc in column["procs"]}
    read_all = [name for name in readers if name not in with_column_lineage]
    columns = []
    for column in sorted(row["columns"], key=lambda c: c["name"]):
        uses = [
            _use(readers[name], table.lower(), partition_columns)
            for name in sorted({*column["procs"], *read_all})
            if name in readers
        ]
        days = [use.days for use in uses]
        reach = None if not uses or None in days else max(days)  # type: ignore[type-var]
        columns.append(
            ColumnAdvice(column["name"], reach, None if reach is None else reach + margin_days, uses)
        )
    bounded = [c for c in columns if c.uses]
    overall = (
        None
        if not bounded or any(c.recommended_ttl_days is None for c in bounded)
        else max(
            c.recommended_ttl_days
            for c in bounded  # type: ignore[type-var]
        )
    )
    props = {k: v[0] for k, v in row["props"].items()}
    return TableAdvice(
        table.lower(),
        margin_days,
        columns,
        overall,
        props.get(Key.RETENTION_DAYS),
        props.get(Key.PARTITION_BYTES),
    )


def _use(reader: dict[str, Any], table: str, partition_columns: frozenset[str]) -> Use:
    on_table = [p for p in json.loads(reader["predicates"]) if p.get("table") == table]
    predicates = [p for p in on_table if p.get("column") in partition_columns]
    days, reason = _reach_of_reads(on_table, partition_columns)
    text = " AND ".join(f"{p['column']} {p['op']} {p['value']}" for p in predicates) or "no partition filter"
    return Use(reader["name"], reader["operation"], sorted(reader["jobs"]), text, days, reason)
