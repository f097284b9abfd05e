"""Run history retention: recent runs in full, older ones rolled up into one vertex per process and day.

A scheduled job runs every day, so its process gathers a run vertex a day (365 a year, 36 million for a
warehouse of 100,000 jobs) while its lineage stays the same. ``compact_runs(g, keep_days)`` keeps every run that
started within ``keep_days`` days before ``as_of`` (default: today, UTC) and replaces each older one by its day's
roll-up:

    process -hasRunDay-> runDay   qualifiedName ``runday:<process key>:<yyyy-mm-dd>``
                                  day, runs (count), firstStart, lastStart, statuses (JSON {status: count}),
                                  runKeys (JSON list of the qualifiedNames of the runs it counts)

A roll-up absorbs later compactions of the same day (counts add up, the first start is the earliest, the last
start the latest). Each run is rolled up in the same transaction that drops it, and a roll-up counts a run key
once, so compacting again, or after the same logs were loaded again (which re-creates their runs), never counts
a run twice. Runs without a start time are kept. Traces read lineage edges
(``usedBy``, ``generated``, ``flowsTo``) and at most a process's latest runs; neither runs nor roll-ups are on
their way.
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

RUN_DAY, HAS_RUN_DAY = VertexLabel.RUN_DAY, EdgeLabel.HAS_RUN_DAY
CHUNK = 100  # processes whose old runs are rolled up and dropped in one transaction


@dataclass
class CompactSummary:
    """What a compaction did."""

    runs_rolled_up: int = 0
    days_written: int = 0
    processes: int = 0
    seconds: float = 0.0

    def rows(self) -> list[tuple[str, str]]:
        """(name, value) pairs for display."""
        return [
            ("runs rolled up", str(self.runs_rolled_up)),
            ("day roll-ups written", str(self.days_written)),
            ("processes", str(self.processes)),
            ("seconds", f"{self.seconds:.2f}"),
        ]


@dataclass
class _Day:
    """The roll-up of one process's runs of one day, with the keys of the runs it counts."""

    runs: int = 0
    first_start: str = ""
    last_start: str = ""
    statuses: Counter[str] = field(default_factory=Counter)
    keys: set[str] = field(default_factory=set)

    @classmethod
    def stored(cls, row: dict[str, Any]) -> _Day:
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
        self.first_start = min(self.first_start or start, start)
        self.last_start = max(self.last_start, start)
        self.statuses[status] += 1

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
    g: GraphTraversalSource, keep_days: int, *, as_of: date | None = None, chunk: int = CHUNK
) -> CompactSummary:
    """Roll up every run that started before ``cutoff(keep_days, as_of)`` into its process's day roll-up and drop
    it; see the module docstring."""
    started = time.perf_counter()
    before = cutoff(keep_days, as_of)
    old_runs = __.runs().has(Key.START_TIME, P.lt(before))
    owners = lineage_source(g).processes().where(old_runs).id_().to_list()  # one pass over processes and runs
    summary = CompactSummary(processes=len(owners))
    for start in range(0, len(owners), chunk):
        with change_set(g, atomic=True) as (gtx, ops):
            rows = (
                lineage_source(gtx)
                .V(*owners[start : start + chunk])
                .as_("owner")
                .runs()
                .has(Key.START_TIME, P.lt(before))
                .project("id", "key", "owner", "start", "status")
                .by(T.id)
                .by(__.qualified_name())
                .by(__.select("owner").id_())
                .by(__.values(Key.START_TIME))
                .by(__.coalesce(__.values(Key.STATUS), __.constant("UNKNOWN")))
                .to_list()
            )
            days = _roll_up(rows)
            _write_days(gtx, days, ops)
            gtx.V(*[row["id"] for row in rows]).drop().iterate()
            if ops is not None:
                ops.extend(("dropV", row["id"]) for row in rows)
        summary.runs_rolled_up += len(rows)
        summary.days_written += len(days)
    summary.seconds = time.perf_counter() - started
    return summary


def _roll_up(rows: list[dict[str, Any]]) -> dict[tuple[Any, str], list[dict[str, Any]]]:
    """The runs by (process id, day)."""
    days: dict[tuple[Any, str], list[dict[str, Any]]] = {}
    for row in rows:
        days.setdefault((row["owner"], row["start"][:10]), []).append(row)
    return days


def _write_days(
    g: GraphTraversalSource, runs: dict[tuple[Any, str], list[dict[str, Any]]], ops: list[tuple] | None
) -> None:
    """Merge the roll-ups into the graph's (creating those it lacks) and link each to its process."""
    keys = list(runs)
    found = g.V(*{process for process, _ in keys}).project("id", "name").by(T.id).by(__.qualified_name())
    process_names = {row["id"]: row["name"] for row in found.to_list()}
    qualified = {key: f"runday:{process_names[key[0]].removeprefix('process:')}:{key[1]}" for key in keys}
    existing = {
        row["name"]: row
        for row in g.V()
        .has(RUN_DAY, Key.QUALIFIED_NAME, P.within(*qualified.values()))
        .project("name", "runs", "first", "last", "statuses", "keys")
        .by(__.qualified_name())
        .by(__.values(Key.RUNS))
        .by(__.values(Key.FIRST_START))
        .by(__.values(Key.LAST_START))
        .by(__.values(Key.STATUSES))
        .by(__.values(Key.RUN_KEYS))
        .to_list()
    }
    token = long(time.time_ns() // 1_000_000)
    days = {}
    for key in keys:
        stored = existing.get(qualified[key])
        days[key] = _Day.stored(stored) if stored is not None else _Day()
        for run in runs[key]:
            days[key].add(run["key"], run["start"], run["status"])
    rows = [
        {
            "match": {T.label: RUN_DAY, Key.QUALIFIED_NAME: qualified[key]},
            "create": {
                Key.GUID: guid(RUN_DAY, qualified[key]),
                Key.NAME: key[1],
                Key.TYPE_NAME: type_name(RUN_DAY),
                Key.KIND: RUN_DAY,
                Key.CREATE_TIME: token,
                Key.CREATE_BY: "lineage",
                Key.VERSION: 1,
                Key.DAY: key[1],
                **days[key].properties(),
            },
            "update": days[key].properties(),
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
            "match": {T.label: HAS_RUN_DAY, Direction.OUT: key[0], Direction.IN: vertex},
            "create": {
                Key.CREATE_TIME: token,
                Key.GUID: edge_guid(
                    HAS_RUN_DAY, (VertexLabel.PROCESS, process_names[key[0]]), (RUN_DAY, qualified[key]), ()
                ),
                Key.NAME: f"{process_names[key[0]]} {HAS_RUN_DAY} {qualified[key]}",
                Key.TYPE_NAME: HAS_RUN_DAY,
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
        _record(ops, rows, ids, edges, edge_ids, existing)


def _record(
    ops: list[tuple],
    rows: list[dict[str, Any]],
    ids: list[Any],
    edges: list[dict[str, Any]],
    edge_ids: list[Any],
    existing: dict[str, Any],
) -> None:
    """Op tuples of the roll-ups for change capture: new vertices and edges, updated counts."""
    for row, vertex, edge, edge_id in zip(rows, ids, edges, edge_ids):
        if row["match"][Key.QUALIFIED_NAME] in existing:
            ops.extend(("addVP", vertex, k, k, v) for k, v in row["update"].items())
            continue
        properties = {Key.QUALIFIED_NAME: row["match"][Key.QUALIFIED_NAME], **row["create"]}
        ops.append(("addV", vertex, RUN_DAY))
        ops.extend(("addVP", vertex, k, k, v) for k, v in properties.items())
        match = edge["match"]
        ops.append(("addE", edge_id, HAS_RUN_DAY, match[Direction.OUT], match[Direction.IN]))
        ops.extend(("setEP", edge_id, k, v) for k, v in edge["create"].items())
