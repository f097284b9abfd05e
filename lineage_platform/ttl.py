"""Per-column TTL advice from how far back downstream jobs read a table's partitions.

For every column of a table, the downstream processes that read it (column lineage, or table lineage for
processes without column lineage, which are taken to read every column) and, for each, how many days of
partitions its filter on the partition column reaches back:

- ``dt = '${bizdate}'`` (or any single day) -> 1 day; ``dt >= date_sub('${bizdate}', 20)`` -> 20 days;
  ``BETWEEN date_sub('${bizdate}', 30) AND '${bizdate}'`` -> 30 days; ``add_months(..., -1)`` -> 31 days;
- a fixed start date (``dt >= '2024-01-01'``) or no partition filter at all -> unbounded.

The advice for a column is the maximum over its readers plus a margin; the table's is the maximum over its
columns. Where the table's ``partitionBytes`` and ``retentionDays`` are known, the storage that expiring at the
advised TTL would free is reported too.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.process.traversal import T

from lineage_platform.errors import LineageError

PARTITION_COLUMNS = frozenset({"dt", "ds", "pt", "day", "date", "p_date", "partition_date", "biz_date"})
_OFFSET = re.compile(r"(date_sub|date_add|add_months)\s*\(\s*(.+?)\s*,\s*(-?\d+)\s*\)", re.IGNORECASE)
_BIZDATE = re.compile(r"\$\{[^}]+\}|current_date|current_timestamp|now\(\)", re.IGNORECASE)
_FIXED_DATE = re.compile(r"^'?\d{4}-?\d{2}-?\d{2}'?$")


@dataclass
class Use:
    """One downstream process reading the column, and how far back it reads."""

    process: str
    operation: str | None
    jobs: list[str]
    predicate: str
    days: int | None  # None: unbounded


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
            "retention_days": self.retention_days,
            "savable_bytes": self.savable_bytes,
            "columns": [
                {
                    "column": c.column,
                    "reads_back_days": c.reads_back_days,
                    "recommended_ttl_days": c.recommended_ttl_days,
                    "unused": c.unused,
                    "uses": [u.__dict__ for u in c.uses],
                }
                for c in self.columns
            ],
        }


def lookback_days(op: str, value: Any) -> int | None:
    """Days of partitions a filter ``partition_column op value`` reaches back; None when unbounded.

    >>> lookback_days("=", "${bizdate}"), lookback_days(">=", "date_sub('${bizdate}', 20)")
    (1, 20)
    >>> lookback_days("BETWEEN", ["date_sub('${bizdate}', 7)", "'${bizdate}'"]), lookback_days(">=", "2024-01-01")
    (7, None)
    """
    op = op.upper()
    if op in ("=", "IN"):
        return 1
    if op == "BETWEEN" and isinstance(value, list | tuple) and value:
        return _offset_days(str(value[0]))
    if op in (">=", ">"):
        return _offset_days(str(value))
    return None  # <, <=, !=, LIKE ...: no lower bound


def _offset_days(expression: str) -> int | None:
    match = _OFFSET.search(expression)
    if match:
        function, base, amount = match.group(1).lower(), match.group(2), int(match.group(3))
        if not _BIZDATE.search(base):
            return None  # an offset from a fixed date: unbounded like the date itself
        back = {"date_sub": amount, "date_add": -amount, "add_months": -amount * 31}[function]
        return max(1, back)
    if _BIZDATE.search(expression) and not _FIXED_DATE.match(expression.strip()):
        return 1  # the run's own day
    return None  # a fixed start date: the reader's range grows without bound


def advise(
    g: GraphTraversalSource,
    table: str,
    *,
    margin_days: int = 1,
    partition_columns: frozenset[str] = PARTITION_COLUMNS,
) -> TableAdvice:
    """TTL advice for every column of ``table`` from the partition filters of its downstream readers."""
    found = (
        g.V()
        .has("table", "qualifiedName", table.lower())
        .project("id", "props", "columns")
        .by(T.id)
        .by(__.value_map("partitionBytes", "retentionDays"))
        .by(
            __.out("hasColumn")
            .project("name", "procs")
            .by(__.values("qualifiedName"))
            .by(__.out_e("flowsTo").values("process").dedup().fold())
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
        .out("usedBy")
        .project("name", "operation", "predicates", "jobs")
        .by(__.values("qualifiedName"))
        .by(__.values("operation"))
        .by(__.coalesce(__.values("predicates"), __.constant("[]")))
        .by(__.out("hasRun").values("job").dedup().fold())
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
        table.lower(), margin_days, columns, overall, props.get("retentionDays"), props.get("partitionBytes")
    )


def _use(reader: dict[str, Any], table: str, partition_columns: frozenset[str]) -> Use:
    predicates = [
        p
        for p in json.loads(reader["predicates"])
        if p.get("table") == table and p.get("column") in partition_columns
    ]
    reaches = [lookback_days(p["op"], p["value"]) for p in predicates]
    bounded = [days for days in reaches if days is not None]
    days = min(bounded) if bounded else None  # conjunctive filters: the tightest lower bound wins
    text = " AND ".join(f"{p['column']} {p['op']} {p['value']}" for p in predicates) or "no partition filter"
    return Use(reader["name"], reader["operation"], sorted(reader["jobs"]), text, days)
