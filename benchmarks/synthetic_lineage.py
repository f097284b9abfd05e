"""Synthetic table-level lineage graphs for benchmarks, built through Gremlin (the public path).

A graph is a list of (source table, target table) pairs; every pair becomes ``source -usedBy-> process
-generated-> target`` with one process per target table, as the lineage writer lays out real loads.
"""

from __future__ import annotations

import itertools
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
            added = g.inject(*chunk).as_("n").add_v(label).property("qualifiedName", __.select("n"))
            if label == "process":  # only processes carry an operation (graph_schema/schema.yaml)
                added = added.property("operation", "INSERT")
            ids.update(zip(chunk, added.id_().to_list()))
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


def properties(pairs: list[tuple[str, str]]) -> dict[str, dict[str, str]]:
    """The properties :func:`load` gives each table and process vertex, by qualifiedName."""
    names = {name for pair in pairs for name in pair} | {f"process:{target}" for _, target in pairs}
    return {name: {"qualifiedName": name, "operation": "INSERT"} for name in names}


def dict_trace(
    adjacency: dict[str, list[tuple[str, str]]], props: dict[str, dict[str, str]], root: str
) -> tuple[dict[str, tuple[int, dict[str, str]]], list[tuple[str, str, str]], dict[str, dict[str, str]]]:
    """Plain-Python DFS collecting what a trace returns: every table upstream of root with its depth and a copy
    of its properties, every edge (source, target, process), and a copy of each such process's properties."""
    nodes = {root: (0, dict(props[root]))}
    edges = []
    processes = {}
    stack = [root]
    while stack:
        target = stack.pop()
        depth = nodes[target][0] + 1
        for process, source in adjacency.get(target, ()):
            edges.append((source, target, process))
            if process not in processes:
                processes[process] = dict(props[process])
            if source not in nodes:
                nodes[source] = (depth, dict(props[source]))
                stack.append(source)
    return nodes, edges, processes


def column_warehouse(tables: int, columns: int, seed: int) -> dict[str, list]:
    """A layered warehouse (ods -> dwd -> dws -> ads) with column lineage, as plain rows.

    Each table reads 1-3 tables of the layer below; each of its columns comes from one source column through
    IDENTITY, TRANSFORMATION (some masked) or AGGREGATION, plus a weak FILTER dependency on the source's ``app``
    column; a third of the processes filter ``app = 'douyin'``.
    """
    rng = random.Random(seed)
    layers = ["ods", "dwd", "dws", "ads"]
    per_layer = max(1, tables // len(layers))
    names = {layer: [f"{layer}.t{i}" for i in range(per_layer)] for layer in layers}
    cols = [f"c{i}" for i in range(columns - 1)] + ["app"]
    flows, processes = [], []
    for below, layer in itertools.pairwise(layers):
        for target in names[layer]:
            sources = rng.sample(names[below], min(len(names[below]), rng.randint(1, 3)))
            process = f"process:{target}"
            predicates = (
                [{"table": sources[0], "column": "app", "op": "=", "value": "douyin"}]
                if rng.random() < 0.33
                else []
            )
            processes.append((process, sources, target, predicates))
            for column in cols:
                source = rng.choice(sources)
                transform, masking = rng.choices(
                    [
                        ("IDENTITY", False),
                        ("TRANSFORMATION", False),
                        ("TRANSFORMATION", True),
                        ("AGGREGATION", False),
                    ],
                    weights=[50, 25, 5, 20],
                )[0]
                flows.append(
                    (
                        f"{source}.{rng.choice(cols)}",
                        f"{target}.{column}",
                        process,
                        "strong",
                        transform,
                        masking,
                    )
                )
            flows.append((f"{sources[0]}.app", target, process, "weak", "FILTER", False))
    declared = [(table, f"APP={rng.choice(['douyin', 'toutiao'])}") for table in names["ods"]]
    declared += [
        (f"{table}.{column}", "PII") for table in names["ods"] for column in cols if rng.random() < 0.05
    ]
    all_tables = [t for layer in layers for t in names[layer]]
    return {
        "tables": all_tables,
        "columns": cols,
        "flows": flows,
        "processes": processes,
        "declared": declared,
    }


def load_warehouse(
    g: GraphTraversalSource, warehouse: dict[str, list], batch: int = 2000
) -> dict[str, object]:
    """Write a :func:`column_warehouse` through Gremlin; returns vertex ids by qualifiedName."""
    import json

    ids: dict[str, object] = {}
    column_names = [f"{t}.{c}" for t in warehouse["tables"] for c in warehouse["columns"]]
    rows = [("table", n, "") for n in warehouse["tables"]] + [("column", n, "") for n in column_names]
    rows += [("process", p, json.dumps(preds)) for p, _, _, preds in warehouse["processes"]]
    for start in range(0, len(rows), batch):
        chunk = rows[start : start + batch]
        for label in ("table", "column", "process"):  # only processes carry predicates and an operation
            same = [(name, preds) for row_label, name, preds in chunk if row_label == label]
            if not same:
                continue
            added = (
                g.inject(*[{"n": name, "p": preds} for name, preds in same])
                .as_("r")
                .add_v(label)
                .property("qualifiedName", __.select("r").select("n"))
            )
            if label == "process":
                added = added.property("predicates", __.select("r").select("p")).property(
                    "operation", "INSERT_OVERWRITE"
                )
            ids.update((name, vid) for (name, _), vid in zip(same, added.id_().to_list()))
    edges: list[tuple] = [
        (ids[t], ids[f"{t}.{c}"], "hasColumn", {}) for t in warehouse["tables"] for c in warehouse["columns"]
    ]
    for process, sources, target, _ in warehouse["processes"]:
        edges += [(ids[s], ids[process], "usedBy", {}) for s in sources] + [
            (ids[process], ids[target], "generated", {})
        ]
    for source, target, process, strength, transform, masking in warehouse["flows"]:
        props = {"process": process, "strength": strength, "transform": transform, "masking": masking}
        edges.append((ids[source], ids[target], "flowsTo", props))
    for start in range(0, len(edges), CHAIN):
        traversal = g.inject(0)
        for out_id, in_id, label, props in edges[start : start + CHAIN]:
            traversal = traversal.add_e(label).from_(Vertex(out_id)).to(Vertex(in_id))
            for key, value in props.items():
                traversal = traversal.property(key, value)
        traversal.iterate()
    return ids
