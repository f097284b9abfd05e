"""`lineage graph serve` under concurrent clients, against the same traversals run in process.

Workload (the same for both modes): lookups by qualifiedName (60 %), 3-hop column traces (30 %) and small
writes (10 %, one ``addV`` each, autocommitted) on a seeded lineage graph of tables, columns and flowsTo edges.

- baseline ("in-process"): the embedded engine in this process through ``EmbeddedRemoteConnection`` (what
  ``connect("embedded:...")`` gives), client threads sharing it;
- project ("served"): ``lineage graph serve`` in a subprocess on an identical store, each client thread with its
  own gremlinpython ``DriverRemoteConnection`` (GraphBinary over WebSocket), as separate processes would.

Prints throughput and p50/p99 latency per client count (1, 4, 16) and the served/in-process ratios, then the
per-traversal latency ratio at one client.

Usage: ``python benchmarks/bench_server.py [OPS_PER_CLIENT]`` (default 100; env BENCH_SERVER_OPS). The seeded
graph has 200 tables x 5 columns (env BENCH_SERVER_TABLES).
"""

from __future__ import annotations

import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gremlin_python.driver.driver_remote_connection import DriverRemoteConnection
from gremlin_python.process.anonymous_traversal import traversal
from gremlin_python.process.graph_traversal import GraphTraversalSource, __

from graph_schema import load_schema
from lineage_platform.graph.connect import EmbeddedRemoteConnection
from lineage_platform.graph.embedded.engine import EmbeddedGraph

REPO = Path(__file__).resolve().parents[1]
COLUMNS_PER_TABLE = 5
CLIENT_COUNTS = (1, 4, 16)
SERVE_ARGS = ("--port", "0", "--evaluation-timeout", "120", "--store")
MIX = (("lookup", 0.6), ("trace", 0.3), ("write", 0.1))


def open_graph(store: Path, *, sync: bool) -> EmbeddedGraph:
    """The engine on ``store`` with the schema's constraints and indexes, as ``lineage graph serve`` opens it."""
    schema = load_schema()
    return EmbeddedGraph(store, unique=schema.unique_keys, indexed=schema.indexed_keys, sync=sync)


def seed(g: GraphTraversalSource, tables: int) -> None:
    """Tables with columns; column i of table t flows to column i of table t+1."""
    for t in range(tables):
        table = g.add_v("table").property("qualifiedName", f"db.t{t}").property("name", f"t{t}").next()
        for c in range(COLUMNS_PER_TABLE):
            column = g.add_v("column").property("qualifiedName", f"db.t{t}.c{c}").next()
            g.V(table.id).add_e("hasColumn").to(__.V(column.id)).iterate()
            if t:
                g.V().has("column", "qualifiedName", f"db.t{t - 1}.c{c}").add_e("flowsTo").to(
                    __.V(column.id)
                ).iterate()


def operation(kind: str, g: GraphTraversalSource, rng: random.Random, tables: int) -> None:
    """One traversal of the workload."""
    t, c = rng.randrange(tables), rng.randrange(COLUMNS_PER_TABLE)
    if kind == "lookup":
        g.V().has("table", "qualifiedName", f"db.t{t}").values("name").to_list()
    elif kind == "trace":
        g.V().has("column", "qualifiedName", f"db.t{t}.c{c}").repeat(__.out("flowsTo")).times(3).values(
            "qualifiedName"
        ).to_list()
    else:
        g.add_v("process").property("name", f"p{rng.random()}").iterate()


def run_clients(
    sources: list[GraphTraversalSource], ops: int, tables: int
) -> tuple[float, dict[str, list[float]]]:
    """Each source is driven by its own thread for ``ops`` operations; returns wall time and latencies by kind."""
    latencies: dict[str, list[float]] = {kind: [] for kind, _ in MIX}
    lock = threading.Lock()

    def client(index: int) -> None:
        rng = random.Random(index)
        kinds = rng.choices([k for k, _ in MIX], weights=[w for _, w in MIX], k=ops)
        mine: list[tuple[str, float]] = []
        for kind in kinds:
            started = time.perf_counter()
            operation(kind, sources[index], rng, tables)
            mine.append((kind, time.perf_counter() - started))
        with lock:
            for kind, seconds in mine:
                latencies[kind].append(seconds)

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=len(sources)) as pool:
        list(pool.map(client, range(len(sources))))
    return time.perf_counter() - started, latencies


def percentile(values: list[float], fraction: float) -> float:
    """The value below which ``fraction`` of ``values`` lie."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def start_server(store: Path) -> tuple[subprocess.Popen, str]:
    """`lineage graph serve` on ``store`` in a subprocess; returns it and its URL."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from lineage_platform.cli.serve_commands import serve; serve()",
            *SERVE_ARGS,
            str(store),
        ],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stderr=subprocess.PIPE,
        text=True,
    )
    for line in process.stderr:
        if " on ws://" in line:
            threading.Thread(target=process.stderr.read, daemon=True).start()
            return process, line.split(" on ", 1)[1].split()[0]
    raise RuntimeError("the server did not start")


def measure(mode: str, make_source: Callable[[], GraphTraversalSource], ops: int, tables: int) -> list[dict]:
    """Run every client count in one mode; one row per count."""
    rows = []
    for clients in CLIENT_COUNTS:
        sources = [make_source() for _ in range(clients)]
        wall, latencies = run_clients(sources, ops, tables)
        everything = [s for values in latencies.values() for s in values]
        rows.append(
            {
                "mode": mode,
                "clients": clients,
                "throughput": len(everything) / wall,
                "p50": percentile(everything, 0.5),
                "p99": percentile(everything, 0.99),
                "by_kind": {kind: statistics.median(values) for kind, values in latencies.items() if values},
            }
        )
    return rows


def main() -> None:
    ops = int(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("BENCH_SERVER_OPS", 100))
    tables = int(os.environ.get("BENCH_SERVER_TABLES", 200))
    with tempfile.TemporaryDirectory(prefix="bench-server-") as scratch:
        stores = [Path(scratch) / "in-process", Path(scratch) / "served"]
        for store in stores:
            graph = open_graph(store, sync=False)
            seed(traversal().with_remote(EmbeddedRemoteConnection(graph)), tables)
            graph.close()
        print(f"seeded {tables} tables x {COLUMNS_PER_TABLE} columns; {ops} operations per client")

        graph = open_graph(stores[0], sync=True)
        try:
            local = measure(
                "in-process", lambda: traversal().with_remote(EmbeddedRemoteConnection(graph)), ops, tables
            )
        finally:
            graph.close()

        process, url = start_server(stores[1])
        connections: list[DriverRemoteConnection] = []

        def remote_source() -> GraphTraversalSource:
            connections.append(DriverRemoteConnection(url, "g"))
            return traversal().with_remote(connections[-1])

        try:
            served = measure("served", remote_source, ops, tables)
        finally:
            for connection in connections:
                connection.close()
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)

    print()
    print(f"{'clients':>7} {'mode':>10} {'ops/s':>9} {'p50 ms':>8} {'p99 ms':>8}   served/in-process")
    for base, row in zip(local, served, strict=True):
        for r in (base, row):
            print(
                f"{r['clients']:>7} {r['mode']:>10} {r['throughput']:>9.0f} "
                f"{r['p50'] * 1000:>8.2f} {r['p99'] * 1000:>8.2f}",
                end="",
            )
            if r is row:
                print(
                    f"   throughput x{row['throughput'] / base['throughput']:.2f}, "
                    f"p50 x{row['p50'] / base['p50']:.1f}, p99 x{row['p99'] / base['p99']:.1f}"
                )
            else:
                print()
    print()
    print(f"{'traversal':>9} {'in-process p50 ms':>18} {'served p50 ms':>14} {'ratio':>7}   (1 client)")
    for kind, _ in MIX:
        # with few operations the mix may never draw a kind (the same kinds in both modes: same seeds)
        if kind not in local[0]["by_kind"]:
            print(f"{kind:>9} {'-':>18} {'-':>14} {'-':>7}")
            continue
        base, row = local[0]["by_kind"][kind], served[0]["by_kind"][kind]
        print(f"{kind:>9} {base * 1000:>18.3f} {row * 1000:>14.3f} {row / base:>7.1f}")


if __name__ == "__main__":
    main()
