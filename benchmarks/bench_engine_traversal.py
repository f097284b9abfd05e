"""Embedded Gremlin engine vs plain Python on a synthetic column-lineage graph.

Builds a layered DAG of `column` vertices (each column fed by 3 columns of the layer before through `flowsTo`),
then measures, each against a plain-Python baseline on the same data in the same run:

- bulk insert through Gremlin bytecode (elements/s) vs filling adjacency dicts; memory per element (RSS growth);
- point lookup by the indexed `qualifiedName` vs a dict lookup;
- a 10-hop upstream walk (`repeat(in('flowsTo')).emit().times(10).dedup()`, returning the ids or only their
  count) vs a depth-limited DFS over a dict of int adjacency lists;
- traversals through the general per-traverser steps (`V().out().out().count()`, a repeat() with simplePath()),
  engine only: they show the cost of per-traverser work such as the cancellation checks.

Times are CPU seconds (process_time), best of several runs: the machine is shared.

Layers hold 5,000 columns; below 55,000 vertices they shrink to VERTICES / 11, so that a small run still has the
10 hops to walk (the smoke test in tests/benchmarks runs 300).

Usage: python benchmarks/bench_engine_traversal.py [VERTICES]   (default 100000; edges = 3 x vertices)
       LINEAGE_BENCH_VERTICES=1000000 python benchmarks/bench_engine_traversal.py
"""

from __future__ import annotations

import os
import random
import sys
import time
from collections.abc import Callable

from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.process.traversal import Scope, TraversalStrategies
from gremlin_python.structure.graph import Graph

from lineage_platform.graph.embedded.engine import EmbeddedGraph

FAN_IN = 3
LAYER_SIZE = 5000
HOPS = 10
BATCH = 5000
LOOKUPS = 2000


def rss_bytes() -> int:
    """Resident set size of this process."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def synthetic_lineage(vertices: int, seed: int = 7) -> tuple[list[str], list[tuple[int, int]]]:
    """Qualified names and (upstream index, downstream index) flowsTo pairs of a layered DAG."""
    rng = random.Random(seed)
    layer = max(FAN_IN, min(LAYER_SIZE, vertices // (HOPS + 1)))  # a small graph still has HOPS layers above
    names = [f"db{i // layer}.t{(i % layer) // 50}.c{i % 50}" for i in range(vertices)]
    edges = []
    for i in range(layer, vertices):
        layer_start = (i // layer - 1) * layer
        for parent in rng.sample(range(layer_start, layer_start + layer), FAN_IN):
            edges.append((parent, i))
    return names, edges


def timed(fn: Callable[[], object], repeat: int = 1) -> tuple[float, object]:
    """Best seconds over `repeat` calls of fn() (the machine is shared: the minimum is the least noisy) and the
    last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        result = fn()
        best = min(best, time.process_time() - start)
    return best, result


def build_engine(names: list[str], edges: list[tuple[int, int]]) -> tuple[EmbeddedGraph, list[int]]:
    """Load the graph through Gremlin bytecode in batches; returns the graph and the vertex ids by index."""
    graph = EmbeddedGraph(indexed=["qualifiedName"], unique=[("column", "qualifiedName")])
    g = GraphTraversalSource(Graph(), TraversalStrategies())
    ids: list[int] = []
    for start in range(0, len(names), BATCH):
        batch = names[start : start + BATCH]
        added = graph.execute(
            g.inject(*batch).addV("column").property("qualifiedName", __.identity()).id_().bytecode
        )
        ids.extend(t.object for t in added)
    for start in range(0, len(edges), BATCH):
        pairs = [[ids[a], ids[b]] for a, b in edges[start : start + BATCH]]
        graph.execute(
            g.inject(*pairs)
            .addE("flowsTo")
            .from_(__.limit(Scope.local, 1))
            .to(__.tail(Scope.local, 1))
            .none()
            .bytecode
        )
    return graph, ids


def build_baseline(
    names: list[str], edges: list[tuple[int, int]]
) -> tuple[dict[str, int], dict[int, list[int]]]:
    """The plain-Python equivalent: a name index and an upstream adjacency dict."""
    by_name = {name: i for i, name in enumerate(names)}
    upstream: dict[int, list[int]] = {i: [] for i in range(len(names))}
    for parent, child in edges:
        upstream[child].append(parent)
    return by_name, upstream


def baseline_dfs(upstream: dict[int, list[int]], start: int, hops: int) -> set[int]:
    """All vertices within `hops` upstream of start (depth-limited DFS with a visited set)."""
    seen: set[int] = set()
    stack = [(start, 0)]
    while stack:
        node, depth = stack.pop()
        if depth == hops:
            continue
        for parent in upstream[node]:
            if parent not in seen:
                seen.add(parent)
                stack.append((parent, depth + 1))
    return seen


def main() -> None:
    """Run every measurement and print the table."""
    vertices = int(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("LINEAGE_BENCH_VERTICES", 100_000))
    names, edges = synthetic_lineage(vertices)
    elements = len(names) + len(edges)
    rows: list[tuple[str, str, str, str]] = []

    base_time, (by_name, upstream) = timed(lambda: build_baseline(names, edges))
    rss_before = rss_bytes()
    engine_time, (graph, ids) = timed(lambda: build_engine(names, edges))
    per_element = (rss_bytes() - rss_before) / elements
    rows.append(
        (
            f"bulk insert ({len(names):,} V + {len(edges):,} E)",
            f"{elements / base_time:,.0f} el/s",
            f"{elements / engine_time:,.0f} el/s",
            f"{engine_time / base_time:.1f}x",
        )
    )
    rows.append(("memory per element (RSS growth)", "-", f"{per_element:.0f} B", "-"))

    g = GraphTraversalSource(Graph(), TraversalStrategies())
    rng = random.Random(11)
    probes = [names[rng.randrange(len(names))] for _ in range(LOOKUPS)]
    base_lookup, _ = timed(lambda: [by_name[p] for p in probes], repeat=3)
    engine_lookup, found = timed(
        lambda: [graph.execute(g.V().has("column", "qualifiedName", p).id_().bytecode) for p in probes],
        repeat=3,
    )
    assert all(len(r) == 1 for r in found)  # type: ignore[union-attr]
    rows.append(
        (
            f"point lookup by qualifiedName (x{LOOKUPS})",
            f"{base_lookup / LOOKUPS * 1e6:.2f} us",
            f"{engine_lookup / LOOKUPS * 1e6:.1f} us",
            f"{engine_lookup / base_lookup:.0f}x",
        )
    )

    start = len(names) - 1
    base_walk, expected = timed(lambda: baseline_dfs(upstream, start, HOPS), repeat=7)
    walk = g.V(ids[start]).repeat(__.in_("flowsTo")).emit().times(HOPS).dedup()
    engine_ids, result = timed(lambda: graph.execute(walk.clone().id_().bytecode), repeat=7)
    reached = {t.object for t in result}  # type: ignore[union-attr]
    assert reached == {ids[i] for i in expected}, "engine and baseline disagree"  # type: ignore[union-attr]
    engine_count, counted = timed(lambda: graph.execute(walk.clone().count().bytecode), repeat=7)
    assert counted[0].object == len(reached)  # type: ignore[index]
    for what, seconds in (("ids returned", engine_ids), ("count()", engine_count)):
        rows.append(
            (
                f"{HOPS}-hop upstream walk, {what} ({len(reached):,} reached)",
                f"{base_walk * 1e3:.1f} ms",
                f"{seconds * 1e3:.1f} ms",
                f"{seconds / base_walk:.2f}x",
            )
        )

    two_hops = g.V().out("flowsTo").out("flowsTo").count()
    generic_repeat = g.V(ids[start]).repeat(__.in_("flowsTo").simple_path()).times(7).count()
    for what, traversal_ in (
        ("out().out().count() from every vertex (per-traverser steps)", two_hops),
        ("7-hop repeat(in().simplePath()) walk (generic repeat, paths)", generic_repeat),
    ):
        seconds, _ = timed(lambda traversal_=traversal_: graph.execute(traversal_.bytecode), repeat=5)
        rows.append((what, "-", f"{seconds * 1e3:.1f} ms", "-"))

    widths = [max(len(r[i]) for r in [*rows, ("measure", "baseline", "engine", "ratio")]) for i in range(4)]
    for row in [("measure", "baseline (plain Python)", "engine", "ratio"), *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)))


if __name__ == "__main__":
    main()
