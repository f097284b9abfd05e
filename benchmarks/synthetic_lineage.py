"""Synthetic table-level lineage graphs for benchmarks, built through Gremlin (the public path).

A graph is a list of (source table, target table) pairs; every pair becomes ``source -usedBy-> process
-generated-> target`` with one process per target table, as the lineage writer lays out real loads.
"""

from __future__ import annotations

import random
from collections import defaultdict

from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.structure.graph import Vertex

CHAIN = 200  # steps per traversal when edges are chained (deep step chains cost recursion in the engine)


def layered_dag(layers: int, width: int, fan_in: int, seed: int, prefix: str) -> list[tuple[str, str]]:
    """Tables ``prefix.l<layer>_<i>``; each table of a layer reads ``fan_in`` random tables of the layer below."""
    rng = random.Random(seed)
    pairs = []
    for layer in range(1, layers):
        for i in range(width):
            for source in rng.sample(range(width), min(fan_in, width)):
                pairs.append((f"{prefix}.l{layer - 1}_{source}", f"{prefix}.l{layer}_{i}"))
    return pairs


def load(g: GraphTraversalSource, pairs: list[tuple[str, str]], batch: int = 2000) -> dict[str, object]:
    """Write the pairs as table/process vertices and usedBy/generated edges; returns vertex ids by name."""
    tables = sorted({name for pair in pairs for name in pair})
    targets = sorted({target for _, target in pairs})
    ids: dict[str, object] = {}
    for label, names in (("table", tables), ("process", [f"process:{t}" for t in targets])):
        for start in range(0, len(names), batch):
            chunk = names[start : start + batch]
            created = (
                g.inject(*chunk)
                .as_("n")
                .add_v(label)
                .property("qualifiedName", __.select("n"))
                .property("operation", "INSERT")
                .id_()
                .to_list()
            )
            ids.update(zip(chunk, created))
    edges = [(ids[f"process:{t}"], ids[t], "generated") for t in targets]
    edges += [(ids[s], ids[f"process:{t}"], "usedBy") for s, t in pairs]
    for start in range(0, len(edges), CHAIN):
        traversal = g.inject(0)
        for out_id, in_id, label in edges[start : start + CHAIN]:
            traversal = traversal.add_e(label).from_(Vertex(out_id)).to(Vertex(in_id))
        traversal.iterate()
    return ids


def upstream_dict(pairs: list[tuple[str, str]]) -> dict[str, list[tuple[str, str]]]:
    """The baseline's adjacency: target -> [(process, source)]."""
    adjacency: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for source, target in pairs:
        adjacency[target].append((f"process:{target}", source))
    return adjacency


def dict_dfs(adjacency: dict[str, list[tuple[str, str]]], root: str) -> set[str]:
    """Plain-Python DFS: every table upstream of root (the baseline a Gremlin trace is compared to)."""
    seen = {root}
    stack = [root]
    while stack:
        for _, source in adjacency.get(stack.pop(), ()):
            if source not in seen:
                seen.add(source)
                stack.append(source)
    return seen
