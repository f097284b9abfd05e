"""Every ``benchmarks/bench_*.py`` runs as users run it (``make bench``), at a tiny size, and prints its figures.

Each script runs in a subprocess from the repository root with ``PYTHONPATH`` set to it and the smallest arguments
that still take both the product's path and its baseline; the test wants exit code 0 and the line that carries the
script's ratio or summary. ``bench_sql_accuracy.py`` and ``bench_sql_tpc.py`` are covered by ``test_sql_*.py``
beside this file. Scripts on a Kafka broker get this run's Tansu broker (``LINEAGE_KAFKA_BOOTSTRAP``, as their
docstrings offer); the warehouse benchmark starts its own, as it does for users. Spark scripts start their own
local session."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.chromium import CHROMIUM

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = REPO / "benchmarks"
# covered by tests/benchmarks/test_sql_bench.py and test_sql_tpc.py
COVERED_ELSEWHERE = {"bench_sql_accuracy.py", "bench_sql_tpc.py"}
RATIO = r"\d[\d,]*(\.\d+)?x"  # a figure followed by x: 0.14x, 1,044x

pytestmark = pytest.mark.slow  # about two minutes in all on 2 vCPUs (JVM start-ups, a browser, brokers)


@dataclass(frozen=True)
class Smoke:
    """One tiny run of a benchmark script: its arguments and the lines (regexes) its output must contain."""

    script: str
    args: tuple[str, ...]
    summary: tuple[str, ...]
    broker: bool = False  # gets this run's broker in LINEAGE_KAFKA_BOOTSTRAP
    browser: bool = False
    needs: tuple[str, ...] = ()  # the suite's markers for what it starts: "spark", "broker"
    env: dict[str, str] = field(default_factory=dict)
    timeout: int = 240

    def marks(self) -> list[pytest.MarkDecorator]:
        """Markers for what the run needs (``-m "not spark"`` and ``-m "not broker"`` leave it out)."""
        return [getattr(pytest.mark, need) for need in self.needs]


SMOKES = {
    "cdc": Smoke(
        "bench_cdc.py",
        ("--scale", "0.01"),
        (
            rf"log -> Avro change events .* {RATIO}",
            rf"outbox on .* {RATIO}",
            rf"1 subscriber\(s\), each .* {RATIO}",
        ),
        broker=True,
        needs=("broker",),
    ),
    "collector": Smoke(
        "bench_collector.py",
        ("60", "--poll-records", "10"),
        (rf"throughput, 3 partition\(s\).*SQL events .* {RATIO}", rf"delay ms: .* {RATIO}"),
        broker=True,
        needs=("broker",),
    ),
    "engine_traversal": Smoke(
        "bench_engine_traversal.py",
        ("300",),
        (rf"10-hop upstream walk, count\(\) \([1-9][\d,]* reached\) .* {RATIO}",),
    ),
    "graphson": Smoke(
        "bench_graphson.py",
        ("1",),
        (r"embedded engine behind lineage graph serve", rf"export_graph .* {RATIO}\n*\Z"),
        env={"LINEAGE_GRAPH_SCHEMA": "open"},  # the script's own default: TinkerPop's graph is not lineage
    ),
    "gremlin_text": Smoke(
        "bench_gremlin_text.py",
        ("2",),
        (r"gremlinpython API calls\s+[\d.]+\s+[\d.]+", r"TinkerPop corpus: [1-9]\d* traversals"),
    ),
    "http_batch": Smoke(
        "bench_http_batch.py",
        ("5",),
        (
            r"one request per event \(baseline\)\s+5 events in .* events/s",
            r"one /batch request\s+5 events in",
        ),
    ),
    "ingest": Smoke(
        "bench_ingest.py",
        ("--records", "200", "--tables", "20", "--master", "local[2]"),
        (r"plain Python loop .* 1\.00x", rf"Spark bulk load \(local\[2\]\) .* {RATIO}"),
        needs=("spark",),
    ),
    "labels": Smoke(
        "bench_labels.py",
        ("--columns", "200", "--spark-columns", "200"),
        (rf"gremlin / networkx: {RATIO}", r"^\s+200\s+[\d.]+\s+[\d.]+\s+[\d.]+$"),
        needs=("spark",),
    ),
    "netflow": Smoke(
        "bench_netflow.py",
        ("--records", "2000", "--hours", "1"),
        (rf"ingest records/s .* {RATIO}", rf"wide dst_ip /1 .* {RATIO}"),
    ),
    "orc": Smoke(
        "bench_orc.py",
        ("--rows", "2000"),
        (rf"project: decrypt -> Python rows .* {RATIO}", rf"row range of 500 rows .* {RATIO}"),
        needs=("spark",),
    ),
    "orc_nested": Smoke(
        "bench_orc.py",
        ("--nested", "--stripes", "2", "--repeat", "1", "--rows", "2000"),
        (rf"seconds: iter_rows\(\) vs pyorc tuples {RATIO}", rf"CPU: .* rows\(\) vs pyorc's list {RATIO}"),
        needs=("spark",),
    ),
    "security": Smoke(
        "bench_security.py",
        ("--repeat", "1", "--customers", "5"),
        (r"extract blocks\s+[1-9]\d*\s+\d+\s+[\d.]+", r"table-level\s+\d+\s+[\d.]+"),
    ),
    "server": Smoke(
        "bench_server.py",
        ("5",),
        (r"16\s+served .* throughput x[\d.]+", r"trace\s+[\d.]+\s+[\d.]+\s+[\d.]+"),
        env={"BENCH_SERVER_TABLES": "20"},
    ),
    "sql_extract": Smoke(
        "bench_sql_extract.py",
        ("5",),
        (rf"extract_lineage, warm cache .* {RATIO}",),
    ),
    "sql_throughput": Smoke(  # the peers' venv is optional: without it their rows say "not installed"
        "bench_sql_throughput.py",
        ("--passes", "2", "--corpus", "dialects"),
        (r"^lineage_platform\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+\d+$",),
    ),
    "store_memory": Smoke(
        "bench_store_memory.py",
        ("--tables", "3", "--runs", "1", "--insert-elements", "200"),
        (rf"bytes/element in memory \(tracemalloc\) .* {RATIO}", rf"open seconds .* {RATIO}"),
    ),
    "store_open": Smoke(
        "bench_store_open.py",
        ("--vertices", "500", "--repeat", "1"),
        (rf"EmbeddedGraph\(path\) open .* {RATIO}", rf"tx/s, 5 ops each, sync off, .* {RATIO}"),
    ),
    "trace": Smoke(
        "bench_trace.py",
        ("--sizes", "50,100", "--repeats", "1", "--deep-width", "5"),
        (r"^\s+412\s+106\s", r"20-hop trace: 20 hops", r"ratio \d+x; vs same-result DFS"),
    ),
    "ui": Smoke(
        "bench_ui.py",
        ("--big-width", "10"),
        (rf"time to first picture, ~100 cards .* ratio picture/API {RATIO}", r"API latency of one expand"),
        browser=True,
    ),
    "warehouse": Smoke(  # 120 jobs: a day's hook events are more than one poll of 100, so the collector runs
        "bench_warehouse.py",
        ("--tables", "60", "--days", "2"),
        (
            rf"collector: a day of hook events \(120 SQL events, 120 applied.* {RATIO}",
            rf"trace up 20 hops, column level .* {RATIO}",
            rf"label propagation to fixpoint .* {RATIO}",
            r"compact runs: keep 1 days, days before the last 2 per month .* elements [\d,]+ -> [\d,]+",
        ),
        needs=("spark", "broker"),  # it starts its own Tansu broker, as for users
    ),
}


def test_every_benchmark_script_has_a_smoke_run() -> None:
    scripts = {path.name for path in BENCHMARKS.glob("bench_*.py")}
    assert scripts - COVERED_ELSEWHERE == {smoke.script for smoke in SMOKES.values()}


@pytest.mark.parametrize(
    "name", [pytest.param(name, marks=smoke.marks()) for name, smoke in sorted(SMOKES.items())]
)
def test_benchmark_runs_at_a_tiny_size(name: str, request: pytest.FixtureRequest) -> None:
    smoke = SMOKES[name]
    if smoke.browser and CHROMIUM is None:
        pytest.skip("Debian's chromium is absent (make system-deps)")
    env = {**os.environ, "PYTHONPATH": str(REPO), **smoke.env}
    if smoke.broker:
        env["LINEAGE_KAFKA_BOOTSTRAP"] = request.getfixturevalue("kafka_broker")
    command = [sys.executable, str(BENCHMARKS / smoke.script), *smoke.args]
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=smoke.timeout)
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stderr[-3000:]}"
    for line in smoke.summary:
        assert re.search(line, result.stdout, re.MULTILINE), f"no line matching {line!r} in:\n{result.stdout}"
