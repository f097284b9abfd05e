"""Run history retention: recent runs in full, older ones rolled up per process and day, then per month.

A scheduled job runs every day, so its process gathers a run vertex a day (365 a year, 36 million for a
warehouse of 100,000 jobs) while its lineage stays the same. ``compact_runs(g, keep_days)`` keeps every run that
started within ``keep_days`` days before ``as_of`` (default: today, UTC) and replaces each older one by its day's
roll-up; with ``keep_day_rollups`` (at least ``keep_days``), the roll-ups of days more than that many days before
``as_of`` are rolled up again into their month's, and older runs go straight into their month's:

    process -hasRunDay->   runDay     qualifiedName ``runday:<process key>:<yyyy-mm-dd>``, day
    process -hasRunMonth-> runMonth   qualifiedName ``runmonth:<process key>:<yyyy-mm>``, month
                                      both: runs (count), firstStart, lastStart, statuses (JSON {status: count}),
                                      runKeys (JSON list of the qualifiedNames of the runs it counts)

A daily job's year then holds ``keep_days`` runs, at most ``keep_day_rollups`` day roll-ups and one roll-up a
month. A roll-up absorbs later compactions of the same period (counts add up, the first start is the earliest,
the last start the latest). Each run is rolled up in the same transaction that drops it, and a run key is counted
once across a process's day and month roll-ups (a run is not counted into a day when its month already counts it;
a day's roll-up moves into its month whole, with its keys), so compacting again, or after the same logs were
loaded again (which re-creates their runs), never counts a run twice. Runs without a start time are kept. Traces
read lineage edges (``usedBy``, ``generated``, ``flowsTo``) and at most a process's latest runs; neither runs nor
roll-ups are on their way.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from gremlin_python.process.graph_traversal import GraphTraversalSource
from gremlin_python.process.traversal import Direction, Merge, P, T
from gremlin_python.statics import long

from lineage_platform.errors import ConfigError
from lineage_platform.graph.dsl import __, lineage_source
from lineage_platform.graph.outbox import change_set
from lineage_platform.graph.vocabulary import EdgeLabel, Key, VertexLabel
from lineage_platform.graph.writer import edge_guid, guid, type_name

CHUNK = 100  # processes whose old runs are rolled up and dropped in one transaction


@dataclass(frozen=True)
class Period:
    """A roll-up granularity: its vertex label, the edge from the process, the key naming the period, the
    qualifiedName prefix, and how many leading characters of an ISO start time name the period."""

    label: str
    edge: str
    key: str
    prefix: str
    width: int


DAY = Period(VertexLabel.RUN_DAY, EdgeLabel.HAS_RUN_DAY, Key.DAY, "runday", len("yyyy-mm-dd"))
MONTH = Period(VertexLabel.RUN_MONTH, EdgeLabel.HAS_RUN_MONTH, Key.MONTH, "runmonth", len("yyyy-mm"))


@dataclass
class CompactSummary:
    """What a compaction did."""

    runs_rolled_up: int = 0
    days_written: int = 0
    days_rolled_up: int = 0
    months_written: int = 0
    processes: int = 0
    seconds: float = 0.0

    def rows(self) -> list[tuple[str, str]]:
        """(name, value) pairs for display."""
        return [
            ("runs rolled up", str(self.runs_rolled_up)),
            ("day roll-ups written", str(self.days_written)),
            ("day roll-ups moved into months", str(self.days_rolled_up)),
            ("month roll-ups written", str(self.months_written)),
            ("processes", str(self.processes)),
            ("seconds", f"{self.seconds:.2f}"),
        ]


@dataclass
class RollUp:
    """The roll-up of one process's runs of one period, with the keys of the runs it counts."""

    runs: int = 0
    first_start: str = ""
    last_start: str = ""
    statuses: Counter[str] = field(default_factory=Counter)
    keys: set[str] = field(default_factory=set)

    @classmethod
    def stored(cls, row: dict[str, Any]) -> RollUp:
        """The roll-up as the graph holds it."""
        return cls(
            row["runs"],
            row["first"],
            row["last"],
            Counter(json.loads(row["statuses"])),
            set(json.loads(row["keys"])),
        )

    def add(self, key: str, start: str, status: str) -> None:
        """Count one run, unless this roll-up already counts it (a run loaded again after it was rolled up)."""
        if key in self.keys:
            return
        self.keys.add(key)
        self.runs += 1
        self._span(start, start)
        self.statuses[status] += 1

    def absorb(self, other: RollUp) -> None:
        """Count the runs of ``other`` (a day's roll-up moving into its month; their keys are disjoint)."""
        self.keys |= other.keys
        self.runs += other.runs
        self._span(other.first_start, other.last_start)
        self.statuses.update(other.statuses)

    def _span(self, first: str, last: str) -> None:
        self.first_start = min(self.first_start or first, first)
        self.last_start = max(self.last_start, last)

    def properties(self) -> dict[str, Any]:
        return {
            Key.RUNS: long(self.runs),
            Key.FIRST_START: self.first_start,
            Key.LAST_START: self.last_start,
            Key.STATUSES: json.dumps(dict(sorted(self.statuses.items()))),
            Key.RUN_KEYS: json.dumps(sorted(self.keys)),
        }


def cutoff(keep_days: int, as_of: date | None = None) -> str:
    """The ISO date before which runs are rolled up: ``keep_days`` days before ``as_of`` (default: today, UTC).

    >>> cutoff(7, date(2026, 1, 31))
    '2026-01-24'
    """
    if keep_days < 0:
        raise ConfigError(
            f"--keep-days {keep_days} is negative", hint="give 0 or more days of runs to keep in full"
        )
    return ((as_of or datetime.now(UTC).date()) - timedelta(days=keep_days)).isoformat()


def compact_runs(
    g: GraphTraversalSource,
    keep_days: int,
    *,
    keep_day_rollups: int | None = None,
    as_of: date | None = None,
    chunk: int = CHUNK,
) -> CompactSummary:
    """Roll up every run that started before ``cutoff(keep_days, as_of)`` into its process's day roll-up and drop
    it; with ``keep_day_rollups``, day roll-ups before ``cutoff(keep_day_rollups, as_of)`` move into their month's
    roll-up and runs of those days go straight to it. See the module docstring."""
    started = time.perf_counter()
    before = cutoff(keep_days, as_of)
    months_before = None
    if keep_day_rollups is not None:
        if keep_day_rollups < keep_days:
            raise ConfigError(
                f"--keep-day-rollups {keep_day_rollups} is less than --keep-days {keep_days}",
                hint="keep day roll-ups at least as long as runs in full",
            )
        months_before = cutoff(keep_day_rollups, as_of)
    old = __.runs().has(Key.START_TIME, P.lt(before))
    if months_before is not None:
        old = __.union(old, __.out(DAY.edge).has(DAY.key, P.lt(months_before)))
    owners = lineage_source(g).processes().where(old).id_().to_list()  # one pass over processes and runs
    summary = CompactSummary(processes=len(owners))
    for start in range(0, len(owners), chunk):
        with change_set(g, atomic=True) as (gtx, ops):
            _compact(gtx, owners[start : start + chunk], before, months_before, ops, summary)
    summary.seconds = time.perf_counter() - started
    return summary


def _compact(
    g: GraphTraversalSource,
    owners: list[Any],
    before: str,
    months_before: str | None,
    ops: list[tuple] | None,
    summary: CompactSummary,
) -> None:
    """One transaction: the old runs of ``owners`` (and, with ``months_before``, their old day roll-ups) rolled
    up and dropped."""
    names = {
        row["id"]: row["name"] for row in _projected(g.V(*owners), {"id": T.id, "name": __.qualified_name()})
    }
    runs = _projected(
        lineage_source(g).V(*owners).as_("owner").runs().has(Key.START_TIME, P.lt(before)),
        {
            "id": T.id,
            "key": __.qualified_name(),
            "owner": __.select("owner").id_(),
            "start": __.values(Key.START_TIME),
            "status": __.coalesce(__.values(Key.STATUS), __.constant("UNKNOWN")),
        },
    )
    old_days: list[dict[str, Any]] = []
    to_month: list[dict[str, Any]] = []
    to_day = runs
    if months_before is not None:
        old_day_vertices = g.V(*owners).as_("owner").out(DAY.edge).has(DAY.key, P.lt(months_before))
        old_days = _rollup_rows(old_day_vertices, DAY, __.select("owner").id_())
        to_month = [r for r in runs if r["start"][: DAY.width] < months_before]
        to_day = [r for r in runs if r["start"][: DAY.width] >= months_before]
    month_keys = {(r["owner"], r["start"][: MONTH.width]) for r in runs} | {
        (row["owner"], row["period"][: MONTH.width]) for row in old_days
    }
    months = _stored(g, MONTH, names, month_keys)
    existing_months = set(months)
    day_keys = {(r["owner"], r["start"][: DAY.width]) for r in to_day}
    days = _stored(g, DAY, names, day_keys)
    existing_days = set(days)
    changed_months: set[tuple[Any, str]] = set()
    for row in old_days:
        key = (row["owner"], row["period"][: MONTH.width])
        months.setdefault(key, RollUp()).absorb(RollUp.stored(row))
        changed_months.add(key)
    for run in to_month:
        key = (run["owner"], run["start"][: MONTH.width])
        months.setdefault(key, RollUp()).add(run["key"], run["start"], run["status"])
        changed_months.add(key)
    for run in to_day:
        month = months.get((run["owner"], run["start"][: MONTH.width]))
        if month is None or run["key"] not in month.keys:  # else its month counts it already
            days.setdefault((run["owner"], run["start"][: DAY.width]), RollUp()).add(
                run["key"], run["start"], run["status"]
            )
    written_days = {key: days[key] for key in day_keys if key in days}
    _write(g, DAY, written_days, existing_days, names, ops)
    _write(g, MONTH, {key: months[key] for key in changed_months}, existing_months, names, ops)
    dropped = [row["id"] for row in old_days] + [run["id"] for run in runs]
    if dropped:
        g.V(*dropped).drop().iterate()
        if ops is not None:
            ops.extend(("dropV", vertex) for vertex in dropped)
    summary.runs_rolled_up += len(runs)
    summary.days_written += len(written_days)
    summary.days_rolled_up += len(old_days)
    summary.months_written += len(changed_months)


def _projected(traversal: Any, bys: dict[str, Any]) -> list[dict[str, Any]]:
    """``traversal.project(*bys).by(...)...``: one row per element, each key by its ``by`` modulator."""
    projected = traversal.project(*bys)
    for by in bys.values():
        projected = projected.by(by)
    return projected.to_list()


def _rollup_rows(traversal: Any, period: Period, owner: Any) -> list[dict[str, Any]]:
    """Each roll-up vertex of ``traversal`` as a row ``RollUp.stored`` reads, its process's id by ``owner``."""
    return _projected(
        traversal,
        {
            "id": T.id,
            "owner": owner,
            "name": __.qualified_name(),
            "period": __.values(period.key),
            "runs": __.values(Key.RUNS),
            "first": __.values(Key.FIRST_START),
            "last": __.values(Key.LAST_START),
            "statuses": __.values(Key.STATUSES),
            "keys": __.values(Key.RUN_KEYS),
        },
    )


def _qualified_name(period: Period, process_name: str, value: str) -> str:
    return f"{period.prefix}:{process_name.removeprefix('process:')}:{value}"


def _stored(
    g: GraphTraversalSource, period: Period, names: dict[Any, str], keys: set[tuple[Any, str]]
) -> dict[tuple[Any, str], RollUp]:
    """The roll-ups of ``period`` the graph already holds for ``keys`` ((process id, period value) pairs)."""
    if not keys:
        return {}
    wanted = {_qualified_name(period, names[owner], value): (owner, value) for owner, value in keys}
    rows = _rollup_rows(
        g.V().has(period.label, Key.QUALIFIED_NAME, P.within(*wanted)), period, __.in_(period.edge).id_()
    )
    return {wanted[row["name"]]: RollUp.stored(row) for row in rows}


def _write(
    g: GraphTraversalSource,
    period: Period,
    rollups: dict[tuple[Any, str], RollUp],
    existed: set[tuple[Any, str]],
    names: dict[Any, str],
    ops: list[tuple] | None,
) -> None:
    """Merge ``rollups`` into the graph (creating those not in ``existed``) and link each to its process."""
    if not rollups:
        return
    keys = list(rollups)
    qualified = {key: _qualified_name(period, names[key[0]], key[1]) for key in keys}
    token = long(time.time_ns() // 1_000_000)
    rows = [
        {
            "match": {T.label: period.label, Key.QUALIFIED_NAME: qualified[key]},
            "create": {
                Key.GUID: guid(period.label, qualified[key]),
                Key.NAME: key[1],
                Key.TYPE_NAME: type_name(period.label),
                Key.KIND: period.label,
                Key.CREATE_TIME: token,
                Key.CREATE_BY: "lineage",
                Key.VERSION: 1,
                period.key: key[1],
                **rollups[key].properties(),
            },
            "update": rollups[key].properties(),
        }
        for key in keys
    ]
    ids = (
        g.inject(*rows)
        .merge_v(__.select("match"))
        .option(Merge.on_create, __.select("create"))
        .option(Merge.on_match, __.select("update"))
        .id_()
        .to_list()
    )
    edges = [
        {
            "match": {T.label: period.edge, Direction.OUT: key[0], Direction.IN: vertex},
            "create": {
                Key.CREATE_TIME: token,
                Key.GUID: edge_guid(
                    period.edge, (VertexLabel.PROCESS, names[key[0]]), (period.label, qualified[key]), ()
                ),
                Key.NAME: f"{names[key[0]]} {period.edge} {qualified[key]}",
                Key.TYPE_NAME: period.edge,
            },
        }
        for key, vertex in zip(keys, ids)
    ]
    edge_ids = (
        g.inject(*edges)
        .merge_e(__.select("match"))
        .option(Merge.on_create, __.select("create"))
        .id_()
        .to_list()
    )
    if ops is not None:
        _record(ops, period, rows, ids, edges, edge_ids, [key in existed for key in keys])


def _record(
    ops: list[tuple],
    period: Period,
    rows: list[dict[str, Any]],
    ids: list[Any],
    edges: list[dict[str, Any]],
    edge_ids: list[Any],
    existed: list[bool],
) -> None:
    """Op tuples of the roll-ups for change capture: new vertices and edges, updated counts."""
    for row, vertex, edge, edge_id, was_there in zip(rows, ids, edges, edge_ids, existed):
        if was_there:
            ops.extend(("addVP", vertex, k, k, v) for k, v in row["update"].items())
            continue
        properties = {Key.QUALIFIED_NAME: row["match"][Key.QUALIFIED_NAME], **row["create"]}
        ops.append(("addV", vertex, period.label))
        ops.extend(("addVP", vertex, k, k, v) for k, v in properties.items())
        match = edge["match"]
        ops.append(("addE", edge_id, period.edge, match[Direction.OUT], match[Direction.IN]))
        ops.extend(("setEP", edge_id, k, v) for k, v in edge["create"].items())
