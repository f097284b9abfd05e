"""Job-log ingestion end to end: the Spark bulk load against one plain Python loop doing the same work.

Both read the same generated JSONL audit log, drop failed queries and statements without lineage,
de-duplicate statements, parse the distinct ones with ``extract_lineage`` and write lineage plus every
run into a fresh embedded graph. The table shows statements (lineage statement runs) per second, and
the share of time spent parsing and writing.

    .venv/bin/python benchmarks/bench_ingest.py            # 20k records, ~4k distinct statements
    .venv/bin/python benchmarks/bench_ingest.py --big      # 100k records, ~20k distinct statements
    .venv/bin/python benchmarks/bench_ingest.py --records 5000 --tables 900 --master 'local[2]'
    .venv/bin/python benchmarks/bench_ingest.py --served   # adds: executors write to `lineage graph serve`
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from lineage_platform.graph import close_all, connect
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.ingest.bulk_load import LoadOptions, bulk_load, parse_statement
from lineage_platform.ingest.catalog_index import CatalogIndex
from lineage_platform.ingest.readers import read_text
from lineage_platform.ingest.records import FAILED, QueryRecord
from lineage_platform.ingest.sample_logs import generate_sample
from lineage_platform.ingest.spark import session
from lineage_platform.ingest.statements import prepare_query
from lineage_platform.model import RunInfo

SIZES = {"default": (20_000, 3_600), "big": (100_000, 18_000)}  # (records, tables): ~5 runs per statement


@dataclass
class Measure:
    """One contender's result."""

    name: str
    statements: int
    distinct: int
    parse_seconds: float
    write_seconds: float
    seconds: float

    @property
    def per_second(self) -> float:
        """Lineage statement runs ingested per second, end to end."""
        return self.statements / self.seconds


def plain_loop(logs: Path, schema: dict, graph_url: str) -> Measure:
    """The baseline: read, de-duplicate, parse and write in one Python process, no Spark."""
    started = time.perf_counter()
    distinct: dict[str, tuple] = {}
    statements = 0
    for path in sorted(logs.iterdir()):
        for record in read_text(path.read_text(encoding="utf-8"), str(path)):
            if not isinstance(record, QueryRecord) or record.status == FAILED:
                continue
            run = record.run_info()
            for statement in prepare_query(
                record.sql, record.engine, start_time=record.start_time
            ).statements:
                statements += 1
                distinct.setdefault(statement.key, (statement, []))[1].append(run)
    parse_started = time.perf_counter()
    catalog = CatalogIndex(schema)
    parsed = [parse_statement(statement, runs, catalog) for statement, runs in distinct.values()]
    parse_seconds = time.perf_counter() - parse_started
    pairs: list[tuple[object, RunInfo]] = [
        (lineage, run) for item in parsed for lineage in item.lineage for run in item.runs
    ]
    written = LineageWriter(connect(graph_url)).write_runs(pairs)
    return Measure(
        "plain Python loop",
        statements,
        len(distinct),
        parse_seconds,
        written.seconds,
        time.perf_counter() - started,
    )


def spark_load(logs: Path, schema: dict, graph_url: str, state: Path, master: str) -> Measure:
    """The project: the Spark bulk load (session already started, so JVM start-up is reported apart)."""
    summary = bulk_load(
        LoadOptions(paths=(str(logs),), master=master, graph_url=graph_url, schema=schema, state_dir=state)
    )
    return Measure(
        f"Spark bulk load ({master})",
        summary.statements,
        summary.distinct,
        summary.parse_seconds,
        summary.write_seconds,
        summary.seconds,
    )


@contextmanager
def served_graph(store: Path) -> Iterator[str]:
    """A ``lineage graph serve`` process on a free loopback port; yields its ws:// URL, stops it after."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-c", "from lineage_platform.cli import main; main()", "graph", "serve"]
    server = subprocess.Popen(
        [*command, "--store", str(store), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("lineage graph serve did not start") from None
                time.sleep(0.2)
        yield f"ws://127.0.0.1:{port}/gremlin"
    finally:
        server.terminate()
        server.wait()


def _table(rows: list[Measure], baseline: Measure) -> str:
    header = f"{'contender':<28} {'stmts':>7} {'distinct':>8} {'seconds':>8} {'stmts/s':>8} {'parse %':>8} {'write %':>8} {'ratio':>6}"
    lines = [header, "-" * len(header)]
    for row in rows:
        lines.append(
            f"{row.name:<28} {row.statements:>7} {row.distinct:>8} {row.seconds:>8.1f} {row.per_second:>8.0f} "
            f"{100 * row.parse_seconds / row.seconds:>7.0f}% {100 * row.write_seconds / row.seconds:>7.0f}% "
            f"{row.per_second / baseline.per_second:>5.2f}x"
        )
    return "\n".join(lines)


def main() -> None:
    """Generate logs, run both contenders on them, print the table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--big", action="store_true", help="100k records / ~20k distinct statements")
    parser.add_argument("--records", type=int, help="query records to generate")
    parser.add_argument("--tables", type=int, help="tables of the generated warehouse (~distinct statements)")
    parser.add_argument("--master", default="local[*]", help="Spark master")
    parser.add_argument(
        "--served", action="store_true", help="also load into a served graph, executors writing"
    )
    args = parser.parse_args()
    records, tables = SIZES["big" if args.big else "default"]
    records, tables = args.records or records, args.tables or tables

    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as scratch:
        root = Path(scratch)
        sample = generate_sample(root / "logs", tables=tables, statements=records, seed=1)
        schema = json.loads((root / "logs" / "catalog.json").read_text())
        logs = root / "logs" / "query-log"
        print(
            f"{sample.records} records, {sample.jobs} scheduled jobs over {sample.days} days, {sample.tables} tables"
        )

        baseline = plain_loop(logs, schema, f"embedded:{root / 'graph-plain'}")
        started = time.perf_counter()
        session(args.master)
        startup = time.perf_counter() - started
        rows = [
            baseline,
            spark_load(logs, schema, f"embedded:{root / 'graph-spark'}", root / "state", args.master),
        ]
        if args.served:
            with served_graph(root / "graph-served") as url:
                served = spark_load(logs, schema, url, root / "state-served", args.master)
                served.name = "Spark, executors write (ws)"
                rows.append(served)
        close_all()  # before the scratch folder goes
        print(_table(rows, baseline))
        print(
            f"(Spark session start-up, not in the figures above: {startup:.1f} s; parse % is executor time summed over tasks)"
        )


if __name__ == "__main__":
    main()
