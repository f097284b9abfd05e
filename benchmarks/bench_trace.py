"""Trace latency vs graph size, and a 20-hop trace with a 100k-vertex result, against a plain-Python DFS.

    python benchmarks/bench_trace.py                 # graphs of 10k and 100k tables
    python benchmarks/bench_trace.py --sizes 10000,100000,1000000 --deep-width 5000
    python benchmarks/bench_trace.py --served        # also both traces through `lineage graph serve`

Each graph holds the same probe lineage (a fixed result) inside random background lineage of growing size: the
trace's latency should depend on the result, not on the graph. Two baselines over Python dicts of the same edges:
a DFS collecting the reached names only ("dict DFS"), and a DFS collecting what the trace returns: each vertex's
properties and depth, the edges with their process, each process's properties ("same-result DFS"). Each ratio is
trace latency / baseline latency. With ``--served``, the probe trace of the first size and the 20-hop trace also
run through ``lineage graph serve`` on the same store (gremlinpython over WebSocket), beside the in-process time.
"""

from __future__ import annotations

import argparse
import gc
import signal
import statistics
import tempfile
import time
from pathlib import Path

from bench_server import open_graph, start_server  # beside this script
from gremlin_python.process.anonymous_traversal import traversal
from synthetic_lineage import (
    dict_dfs,
    dict_trace,
    layered_dag,
    load,
    properties,
    upstream_dict,
)

from lineage_platform.graph import connect, disconnect
from lineage_platform.graph.connect import EmbeddedRemoteConnection
from lineage_platform.model import LineageGraph
from lineage_platform.trace import trace


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _time(function, repeats: int) -> list[float]:
    """Seconds per call, after collecting the garbage earlier measurements left (not between calls: a full
    collection leaves the CPU caches cold for a call of microseconds)."""
    gc.collect()
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        samples.append(time.perf_counter() - started)
    return samples


def _same_result(result: LineageGraph, reached: tuple) -> None:
    """The same-result DFS found what the trace did: vertices, edges, processes."""
    nodes, edges, processes = reached
    names = {n.id: n.qualified_name for n in result.nodes.values()}
    assert set(names.values()) == set(nodes)
    assert sorted((names[e.source], names[e.target], e.process) for e in result.edges) == sorted(edges)
    assert set(result.processes) == set(processes)


PROBE_ROOT = "probe.l7_0"


def _probe() -> list[tuple[str, str]]:
    return layered_dag(layers=8, width=40, fan_in=2, seed=7, prefix="probe")


def _background(size: int) -> list[tuple[str, str]]:
    return layered_dag(layers=20, width=max(1, size // 20), fan_in=2, seed=size, prefix="bg")


DEEP_ROOT = "deep.l20_0"


def _deep(width: int) -> list[tuple[str, str]]:
    return layered_dag(layers=21, width=width, fan_in=3, seed=1, prefix="deep")


def size_sweep(sizes: list[int], repeats: int) -> None:
    probe = _probe()
    root = PROBE_ROOT
    print(
        f"{'tables':>9} {'result':>7} {'load s':>7} {'trace p50 ms':>13} {'p95 ms':>8} {'dict DFS ms':>12} "
        f"{'ratio':>6} {'same-result DFS ms':>19} {'ratio':>6}"
    )
    for size in sizes:
        g = connect("memory:")
        background = _background(size)
        started = time.perf_counter()
        load(g, probe + background)
        loaded = time.perf_counter() - started
        result = trace(g, root, direction="up", fanout=10_000, limit=10_000_000)
        adjacency = upstream_dict(probe + background)
        props = properties(probe + background)
        assert {n.qualified_name for n in result.nodes.values()} == dict_dfs(adjacency, root)
        _same_result(result, dict_trace(adjacency, props, root))
        p50, p95 = _percentiles(_time(lambda g=g: trace(g, root, direction="up", fanout=10_000), repeats))
        base, _ = _percentiles(_time(lambda a=adjacency: dict_dfs(a, root), repeats))
        same, _ = _percentiles(_time(lambda a=adjacency, p=props: dict_trace(a, p, root), repeats))
        tables = len({n for pair in probe + background for n in pair})
        print(
            f"{tables:>9} {len(result.nodes):>7} {loaded:>7.1f} {p50 * 1e3:>13.1f} {p95 * 1e3:>8.1f} "
            f"{base * 1e3:>12.3f} {p50 / base:>6.0f} {same * 1e3:>19.3f} {p50 / same:>6.0f}"
        )


def deep_trace(width: int) -> None:
    pairs = _deep(width)
    g = connect("memory:")
    started = time.perf_counter()
    load(g, pairs)
    loaded = time.perf_counter() - started
    root = DEEP_ROOT
    adjacency = upstream_dict(pairs)
    props = properties(pairs)
    gc.collect()
    started = time.perf_counter()
    result = trace(g, root, direction="up", fanout=100_000, limit=10_000_000, timeout=3600)
    traced = time.perf_counter() - started
    gc.collect()  # the trace pauses the collector: what it left to collect is not the baselines' cost
    started = time.perf_counter()
    reached = dict_dfs(adjacency, root)
    base = time.perf_counter() - started
    gc.collect()
    started = time.perf_counter()
    collected = dict_trace(adjacency, props, root)
    same = time.perf_counter() - started
    assert {n.qualified_name for n in result.nodes.values()} == reached
    _same_result(result, collected)
    hops = max(n.depth for n in result.nodes.values())
    print(
        f"\n20-hop trace: {hops} hops, {len(result.nodes)} vertices and {len(result.edges)} edges in the result "
        f"(Atlas caps lineage responses at 9,000 nodes); graph loaded in {loaded:.1f}s"
    )
    print(
        f"trace {traced:.2f}s vs dict DFS {base * 1e3:.1f}ms: ratio {traced / base:.0f}x; "
        f"vs same-result DFS {same * 1e3:.1f}ms: ratio {traced / same:.0f}x"
    )


def served_vs_in_process(name: str, pairs: list[tuple[str, str]], root: str, repeats: int) -> None:
    """The same upstream trace on one store, in process and through ``lineage graph serve``: p50 and ratio."""
    with tempfile.TemporaryDirectory(prefix="bench-trace-") as scratch:
        store = Path(scratch) / "graph"
        graph = open_graph(store, sync=False)
        try:
            g = traversal().with_remote(EmbeddedRemoteConnection(graph))
            load(g, pairs)
            size = len(trace(g, root, direction="up", fanout=100_000, limit=10_000_000).nodes)
            local, _ = _percentiles(
                _time(lambda: trace(g, root, direction="up", fanout=100_000, limit=10_000_000), repeats)
            )
        finally:
            graph.close()
        process, url = start_server(store)
        remote = connect(url)
        try:
            assert len(trace(remote, root, direction="up", fanout=100_000, limit=10_000_000).nodes) == size
            served, _ = _percentiles(
                _time(lambda: trace(remote, root, direction="up", fanout=100_000, limit=10_000_000), repeats)
            )
        finally:
            disconnect(remote)
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
    print(
        f"{name}: {size} vertices; in process {local * 1e3:.1f} ms, served {served * 1e3:.1f} ms (p50 of {repeats}): "
        f"served/in-process {served / local:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000", help="graph sizes in tables, comma separated")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--deep-width", type=int, default=5000, help="tables per layer of the 20-hop graph")
    parser.add_argument("--served", action="store_true", help="also trace through `lineage graph serve`")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    size_sweep(sizes, args.repeats)
    deep_trace(args.deep_width)
    if args.served:
        print()
        served_vs_in_process(
            f"probe trace in {sizes[0]} tables", _probe() + _background(sizes[0]), PROBE_ROOT, args.repeats
        )
        served_vs_in_process("20-hop trace", _deep(args.deep_width), DEEP_ROOT, 3)


if __name__ == "__main__":
    main()
