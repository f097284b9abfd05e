"""NetFlow partition catalog against DuckDB over the same records in one unclustered (time-ordered) Parquet file.

Ingest: records/s and bytes/record on disk (the project's pipelined Arrow path, catalogue included, against DuckDB's
own Parquet writer). Both start from the same records already in memory (generating them is not timed); the project's
time covers sizing the layout from a sample, partitioning, writing and indexing the files, and cataloguing them in the
(embedded) graph; DuckDB's covers COPY of the Arrow table to one zstd Parquet file. Besides wall time the project's
records per CPU-second are shown: on a shared machine they move much less than wall time.

Queries, per class: point (src+dst IP, no time bound), single attribute (dst IP), time window (10 minutes, no
address), aggregate (grouped, top talkers), and wide (dst IP ranges from /12 to /1, i.e. up to about half the
records) — wall time (median of repeats, planning included; the catalog snapshot is warm, as in a long-running
process, after the first run of each query, whose answer is checked) and bytes read; the ratio is DuckDB's time over
the project's (above 1: the project is faster). The repeats alternate (DuckDB, project, DuckDB, ...) so both see the
same load; the CPU column is the same ratio of CPU time (this process, DuckDB's threads included), which moves much
less than wall time on a shared machine. The baseline's bytes are the
referenced column chunks of the row groups its min/max statistics cannot exclude (what DuckDB's zone maps skip).
Every query's answer is checked against the baseline's.

    .venv/bin/python benchmarks/bench_netflow.py                 # 1M records (about half a minute)
    .venv/bin/python benchmarks/bench_netflow.py --records 1000000 5000000 20000000 --spark   # sizes in one run
    .venv/bin/python benchmarks/bench_netflow.py --ingest-only --repeats 5   # ingest only, medians of 5 runs
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import sqlglot
from gremlin_python.process.graph_traversal import GraphTraversalSource

from lineage_platform.graph import connect
from lineage_platform.netflow.catalog import add_partitions, register_dataset
from lineage_platform.netflow.generate import FlowProfile, generate
from lineage_platform.netflow.ingest import IngestSummary, ingest_batches
from lineage_platform.netflow.layout import PartitionLayout
from lineage_platform.netflow.query import QueryPlan, engine_sql, plan_query, run_query
from lineage_platform.netflow.records import RAW_RECORD_BYTES, int_to_ip
from lineage_platform.netflow.rectangles import where_boxes
from lineage_platform.netflow.spark_query import spark_batches

DATASET = "netflow.flows"
REPEATS = 5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--records",
        type=int,
        nargs="+",
        default=[int(os.environ.get("NETFLOW_BENCH_RECORDS", 1_000_000))],
        help="one or more sizes, each measured in turn in this run",
    )
    parser.add_argument("--hours", type=int, default=4)
    parser.add_argument(
        "--cells",
        type=int,
        default=None,
        help="cells per time bucket on src_ip, dst_ip (default: from the volume)",
    )
    parser.add_argument("--ingest-only", action="store_true", help="measure ingest only (no queries)")
    parser.add_argument("--repeats", type=int, default=1, help="ingest runs (medians are reported)")
    parser.add_argument(
        "--spark",
        action="store_true",
        help="also run one query per class with --engine spark on local[1] and local[2] (scaling table)",
    )
    args = parser.parse_args()
    for count in args.records:
        with tempfile.TemporaryDirectory(prefix="bench-netflow-") as work:
            run(args, count, Path(work))


@dataclass
class IngestRun:
    """One ingest of the same records both ways: where they went and how long each took."""

    raw: Path
    g: GraphTraversalSource
    layout: PartitionLayout
    summary: IngestSummary
    baseline_seconds: float
    project_seconds: float
    project_cpu_seconds: float


def ingest_both(records: pa.Table, batches: list[pa.RecordBatch], cells: int | None, work: Path) -> IngestRun:
    """DuckDB's COPY to one file, then the project's ingest and catalogue, each timed."""
    work.mkdir(parents=True)
    raw = work / "raw.parquet"
    connection = duckdb.connect()
    connection.register("records", records)
    started = time.perf_counter()
    connection.execute(f"COPY records TO '{raw}' (FORMAT parquet, COMPRESSION zstd)")
    baseline = time.perf_counter() - started

    g = connect("memory:")
    started, cpu_started = time.perf_counter(), time.process_time()
    layout = PartitionLayout.from_sample(records.slice(0, 200_000), ("src_ip", "dst_ip"), cells)
    summary = ingest_batches(batches, layout, work / "clustered", workers=2, block_rows=1 << 14)
    register_dataset(g, DATASET, layout, work / "clustered")
    add_partitions(g, DATASET, work / "clustered", summary.files)
    project, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    return IngestRun(raw, g, layout, summary, baseline, project, cpu)


def run(args: argparse.Namespace, count: int, work: Path) -> None:
    """Generate, ingest both ways, query both ways, print the tables."""
    print(f"\n== {count:,} records over {args.hours} h", flush=True)
    batches = list(generate(count, profile=FlowProfile(hours=args.hours), batch_rows=1 << 18))
    records = pa.Table.from_batches(batches)

    runs = [
        ingest_both(records, batches, args.cells, work / f"run{number}") for number in range(args.repeats)
    ]
    last = runs[-1]
    raw, g, summary = last.raw, last.g, last.summary
    rows = [
        (
            "ingest records/s",
            statistics.median(count / item.baseline_seconds for item in runs),
            statistics.median(count / item.project_seconds for item in runs),
            "higher",
        ),
        (
            "bytes/record on disk",
            raw.stat().st_size / count,
            summary.bytes / count,
            "lower",
        ),
    ]
    cpu_rate = statistics.median(count / item.project_cpu_seconds for item in runs)
    print(
        f"layout: {last.layout.describe()}; {len(summary.files)} partition files; raw record {RAW_RECORD_BYTES} B"
    )
    imbalance, empty = summary.cell_imbalance(last.layout.cells)
    print(
        f"cell balance: max/min records per cell of a time bucket up to {imbalance:.2f}x; {empty} empty cells"
    )
    print(
        f"{'ingest' + (f' (median of {len(runs)})' if len(runs) > 1 else ''):<28}{'DuckDB':>14}{'project':>14}{'ratio':>9}"
    )
    for name, base, mine, better in rows:
        ratio = mine / base if better == "higher" else base / mine
        print(f"{name:<28}{base:>14,.1f}{mine:>14,.1f}{ratio:>8.1f}x")
    print(f"{'project records/CPU-second':<28}{'':>14}{cpu_rate:>14,.1f}")
    if args.ingest_only:
        return
    connection = duckdb.connect()

    rng = random.Random(1)
    picks = [records.slice(rng.randrange(records.num_rows), 1).to_pylist()[0] for _ in range(5)]
    starts = [records.column("first_ts")[rng.randrange(records.num_rows)].as_py() for _ in range(3)]
    windows = [(start, start + timedelta(minutes=10)) for start in starts]
    workloads: list[tuple[str, list[str]]] = [
        (
            "point src+dst",
            [
                f"SELECT * FROM flows WHERE src_ip = '{int_to_ip(p['src_ip'])}' AND dst_ip = '{int_to_ip(p['dst_ip'])}' "
                "ORDER BY first_ts, src_port, dst_port"
                for p in picks
            ],
        ),
        (
            "single dst_ip",
            [
                f"SELECT count(*), sum(bytes) FROM flows WHERE dst_ip = '{int_to_ip(p['dst_ip'])}'"
                for p in picks
            ],
        ),
        (
            "time window 10 min",
            [
                f"SELECT count(*), sum(bytes) FROM flows WHERE first_ts >= '{start:%Y-%m-%d %H:%M:%S}' "
                f"AND first_ts < '{end:%Y-%m-%d %H:%M:%S}'"
                for start, end in windows
            ],
        ),
        (
            "agg: src_ip, 1 h, group by",
            [
                f"SELECT dst_port, count(*) n, sum(bytes) FROM flows WHERE src_ip = '{int_to_ip(p['src_ip'])}' "
                "AND first_ts >= '2026-01-01 01:00:00' AND first_ts < '2026-01-01 02:00:00' GROUP BY 1 ORDER BY n DESC, 1"
                for p in picks
            ],
        ),
        (
            "agg: dst /16, top talkers",
            [
                f"SELECT src_ip, sum(bytes) b FROM flows WHERE in_cidr(dst_ip, '{int_to_ip(p['dst_ip'])}/16') "
                "GROUP BY 1 ORDER BY b DESC, 1 LIMIT 10"
                for p in picks
            ],
        ),
    ]
    for bits in (12, 8, 4, 2, 1):
        workloads.append(
            (
                f"{'wide' if bits <= 2 else 'range'} dst_ip /{bits}",
                [
                    f"SELECT count(*), sum(packets) FROM flows WHERE in_cidr(dst_ip, '{int_to_ip(p['dst_ip'])}/{bits}')"
                    for p in picks[:2]
                ],
            )
        )

    print(
        f"\n{'query':<28}{'select.':>8}{'DuckDB ms':>11}{'project ms':>12}{'speedup':>9}{'CPU':>7}"
        f"{'DuckDB MB':>11}{'project MB':>12}{'less':>8}"
    )
    for name, queries in workloads:
        base_times, mine_times, base_cpu, mine_cpu, base_bytes, mine_bytes, matched = [], [], [], [], 0, 0, 0
        for sql in queries:
            _, text = engine_sql(sql, f"read_parquet('{raw}')")
            expected = connection.sql(text).fetchall()
            result = run_query(g, DATASET, sql)
            assert [tuple(row.values()) for row in result.table.to_pylist()] == expected, sql
            walls, cpus = _paired(
                lambda text=text: connection.sql(text).fetchall(), lambda sql=sql: run_query(g, DATASET, sql)
            )
            base_times.append(walls[0])
            mine_times.append(walls[1])
            base_cpu.append(cpus[0])
            mine_cpu.append(cpus[1])
            base_bytes += _baseline_bytes(raw, sql)
            mine_bytes += result.bytes_read
            _, count_text = engine_sql(_as_count(sql), f"read_parquet('{raw}')")
            matched += connection.sql(count_text).fetchall()[0][0]
        base, mine = statistics.mean(base_times), statistics.mean(mine_times)
        selectivity = matched / (len(queries) * count)
        print(
            f"{name:<28}{selectivity:>7.2%}{base * 1000:>11.1f}{mine * 1000:>12.1f}{base / mine:>8.1f}x"
            f"{statistics.mean(base_cpu) / statistics.mean(mine_cpu):>6.1f}x"
            f"{base_bytes / len(queries) / 1e6:>11.2f}{mine_bytes / len(queries) / 1e6:>12.2f}{base_bytes / max(mine_bytes, 1):>7.1f}x"
        )
    if args.spark:
        spark_scaling(g, connection, raw, [(name, queries[0]) for name, queries in workloads])


def spark_scaling(
    g: GraphTraversalSource, connection: duckdb.DuckDBPyConnection, raw: Path, queries: list[tuple[str, str]]
) -> None:
    """One query per class with ``--engine spark`` on local[1] and on local[2]: answers checked, medians timed."""
    from lineage_platform.ingest.spark import session

    times: dict[str, list[float]] = {name: [] for name, _ in queries}
    for master in ("local[1]", "local[2]"):
        spark = session(master, f"bench-netflow-{master}")
        plans = {name: plan_query(g, DATASET, sql) for name, sql in queries}
        for name, sql in queries:  # answers checked; this pass also warms the new session up
            _, text = engine_sql(sql, f"read_parquet('{raw}')")
            assert _spark_rows(spark, plans[name]) == connection.sql(text).fetchall(), sql
        for name, plan in plans.items():
            times[name].append(_median(lambda plan=plan, spark=spark: _spark_rows(spark, plan)))
        spark.stop()
    print(f"\n{'Spark query (planned here)':<28}{'local[1] ms':>12}{'local[2] ms':>12}{'scaling':>9}")
    for name, (one, two) in times.items():
        print(f"{name:<28}{one * 1000:>12.0f}{two * 1000:>12.0f}{one / two:>8.2f}x")


def _spark_rows(spark: object, plan: QueryPlan) -> list[tuple]:
    """The plan's rows from Spark, with its decimal sums as integers (as DuckDB gives them)."""
    with spark_batches(spark, plan) as reader:  # type: ignore[arg-type]
        rows = reader.read_all().to_pylist()
    return [tuple(int(v) if isinstance(v, Decimal) else v for v in row.values()) for row in rows]


def _paired(
    base: Callable[[], object], mine: Callable[[], object]
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Medians of (wall, CPU) seconds of two actions run alternately, so both see the same load."""
    walls: tuple[list[float], list[float]] = ([], [])
    cpus: tuple[list[float], list[float]] = ([], [])
    for _ in range(REPEATS):
        for number, action in enumerate((base, mine)):
            started, cpu_started = time.perf_counter(), time.process_time()
            action()
            walls[number].append(time.perf_counter() - started)
            cpus[number].append(time.process_time() - cpu_started)
    return (
        (statistics.median(walls[0]), statistics.median(walls[1])),
        (statistics.median(cpus[0]), statistics.median(cpus[1])),
    )


def _median(action: Callable[[], object]) -> float:
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _as_count(sql: str) -> str:
    """The same WHERE clause, counting matching records."""
    where = sqlglot.parse_one(sql, read="duckdb").args["where"]
    return f"SELECT count(*) FROM flows {where.sql(dialect='duckdb')}"


def _baseline_bytes(raw: Path, sql: str) -> int:
    """Bytes of referenced column chunks in row groups that min/max statistics cannot rule out."""
    select, _ = engine_sql(sql)
    boxes = where_boxes(select).boxes
    metadata = pq.read_metadata(raw)
    names = metadata.schema.to_arrow_schema().names
    used = {column.name for column in select.find_all(sqlglot.exp.Column)} & set(names)
    if any(isinstance(star.parent, sqlglot.exp.Select) for star in select.find_all(sqlglot.exp.Star)):
        used = set(names)
    total = 0
    for number in range(metadata.num_row_groups):
        group = metadata.row_group(number)
        ranges = {}
        for name in names:
            stats = group.column(names.index(name)).statistics
            low, high = stats.min, stats.max
            if isinstance(low, datetime):
                low, high = (round(v.replace(tzinfo=UTC).timestamp() * 1000) for v in (low, high))
            ranges[name] = (low, high)
        if any(
            all(ranges[c][0] <= hi and lo <= ranges[c][1] for c, (lo, hi) in box.items()) for box in boxes
        ):
            total += sum(group.column(names.index(name)).total_compressed_size for name in used)
    return total


if __name__ == "__main__":
    main()
