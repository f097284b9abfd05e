"""Embedded graph memory and load speed on lineage-shaped data, beside plain Python dicts of the same rows.

A warehouse of ``--tables`` tables (30 columns each, one process writing each table from two others, ``--runs``
runs per process) is generated as the rows ``MemGraph.export_state()`` holds, with the property set
``graph/writer.py`` writes: every vertex has qualifiedName, name, typeName, kind, guid, createTime, createBy and
version (a process also its operation, queryText and predicates, a run its user, times, host, job and status);
every edge createTime, guid, name and typeName (a flowsTo edge also process, strength, transform, keyPath and
masking). Each measure runs in a fresh process:

- memory: tracemalloc bytes per element (values included) and RSS growth of the graph built with
  ``MemGraph.import_state`` from the rows, the rows then dropped; the baseline holds the same rows as plain
  dicts: id -> (label, {key: value}) for vertices, id -> (label, out, in, props) for edges, and id -> [edge ids]
  out and in.
- import: elements/s of ``import_state`` vs building those dicts.
- insert: elements/s of the writer's upsert traversals (``graph/writer.py``'s ``upsert_traversal``:
  ``inject(rows).mergeV(select('match')).option(onCreate, select('create')).project('id', 'created')...``, then
  the same with mergeE, ``--batch`` rows a traversal) on an ``EmbeddedGraph`` for the first ``--insert-elements``
  elements, vs upserting the same rows into dicts keyed the same way; per second of wall time and of CPU time, the
  best of three runs each.
- checkpoint: seconds to write the graph's snapshot (``MemGraph.export_columns()`` through
  ``DurableLog.checkpoint``, synced) vs ``pickle.dump`` of the rows into one synced file.
- breakdown (``--breakdown``): bytes per element of the opened store by what holds them (records, ids, values,
  adjacency, maps and indexes; ``sys.getsizeof``, each object counted once).
- open: ``EmbeddedGraph(path)`` of a store holding the graph (a snapshot as the engine writes it plus N/1000 logged
  transactions), vs ``pickle.load`` of the same rows from one file.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_store_memory.py                  # 300 tables, ~40k elements
    PYTHONPATH=. .venv/bin/python benchmarks/bench_store_memory.py --tables 8000    # ~1M elements
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import random
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gremlin_python.process.graph_traversal import GraphTraversalSource
from gremlin_python.process.traversal import Direction, T, TraversalStrategies
from gremlin_python.structure.graph import Graph

from lineage_platform.graph.embedded.engine import EmbeddedGraph
from lineage_platform.graph.embedded.memgraph import MemGraph
from lineage_platform.graph.embedded.storage import DurableLog
from lineage_platform.graph.vocabulary import EdgeLabel, Key, VertexLabel
from lineage_platform.graph.writer import edge_guid, guid, upsert_traversal

COLUMNS = 30
FLOWS_PER_COLUMN = 2  # strong edges per output column; every fourth column also gets a weak one
CREATE_TIME = 1_764_000_000_000
USERS = ("etl", "analyst", "ops", "bi")
TRANSFORMS = ("direct", "expression", "aggregation")

State = tuple


class _Rows:
    """Accumulates export_state() rows with ids from one counter, as the engine numbers them."""

    def __init__(self) -> None:
        self.next_id = 0
        self.vertices: list[tuple] = []
        self.vprops: list[tuple] = []
        self.edges: list[tuple] = []
        self.ids: dict[str, int] = {}

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def vertex(self, label: str, qualified_name: str, **extra: Any) -> int:
        vid = self.ids[qualified_name] = self._id()
        self.vertices.append((vid, label))
        props = {
            Key.QUALIFIED_NAME: qualified_name,
            Key.NAME: qualified_name.rsplit(".", 1)[-1],
            Key.TYPE_NAME: "Process" if label in (VertexLabel.PROCESS, VertexLabel.RUN) else "Dataset",
            Key.KIND: label,
            Key.GUID: guid(label, qualified_name),
            Key.CREATE_TIME: CREATE_TIME + vid,
            Key.CREATE_BY: USERS[vid % len(USERS)],
            Key.VERSION: 1,
            **extra,
        }
        self.vprops.extend((vid, self._id(), key, value, None) for key, value in props.items())
        return vid

    def edge(self, label: str, out: str, in_: str, **extra: Any) -> None:
        props = {
            Key.CREATE_TIME: CREATE_TIME + self.next_id,
            Key.GUID: edge_guid(label, (label, out), (label, in_), tuple(sorted(extra.items()))),
            Key.NAME: f"{out} {label} {in_}",
            Key.TYPE_NAME: label,
            **extra,
        }
        self.edges.append((self._id(), label, self.ids[out], self.ids[in_], props))

    def state(self) -> State:
        return (1, self.next_id, self.vertices, self.vprops, self.edges)


def lineage_state(tables: int, runs: int, seed: int = 21) -> State:
    """Deterministic lineage rows in MemGraph.export_state() shape for ``tables`` tables."""
    rng = random.Random(seed)
    rows = _Rows()
    databases = [f"db{d}" for d in range(max(1, tables // 100))]
    for database in databases:
        rows.vertex(VertexLabel.DATABASE, database)
    for t in range(tables):
        table = f"{databases[t % len(databases)]}.t{t}"
        rows.vertex(VertexLabel.TABLE, table, **{Key.DATASET_KIND: "table"})
        rows.edge(EdgeLabel.CONTAINS, table.split(".")[0], table)
        for c in range(COLUMNS):
            rows.vertex(VertexLabel.COLUMN, f"{table}.c{c}")
            rows.edge(EdgeLabel.HAS_COLUMN, table, f"{table}.c{c}")
        if t < 2:
            continue
        sources = [f"{databases[s % len(databases)]}.t{s}" for s in rng.sample(range(t), 2)]
        sql = f"INSERT OVERWRITE TABLE {table} SELECT * FROM {sources[0]} JOIN {sources[1]} USING (c0)"
        process = f"process:{t:08x}"
        rows.vertex(
            VertexLabel.PROCESS,
            process,
            **{Key.OPERATION: "INSERT", Key.QUERY_TEXT: sql, Key.PREDICATES: "[]"},
        )
        for source in sources:
            rows.edge(EdgeLabel.USED_BY, source, process)
        rows.edge(EdgeLabel.GENERATED, process, table)
        for c in range(COLUMNS):
            flows = [(sources[k % 2], "strong") for k in range(FLOWS_PER_COLUMN)]
            flows += [(sources[0], "weak")] if c % 4 == 0 else []
            for k, (source, strength) in enumerate(flows):
                rows.edge(
                    EdgeLabel.FLOWS_TO,
                    f"{source}.c{(c + k) % COLUMNS}",
                    f"{table}.c{c}",
                    **{
                        Key.PROCESS: process,
                        Key.STRENGTH: strength,
                        Key.TRANSFORM: TRANSFORMS[(c + k) % len(TRANSFORMS)],
                        Key.KEY_PATH: "",
                        Key.MASKING: False,
                    },
                )
        for r in range(runs):
            run = f"run:{t:08x}:{r}"
            started = f"2026-01-{1 + r % 28:02d}T02:{t % 60:02d}:00"
            rows.vertex(
                VertexLabel.RUN,
                run,
                **{
                    Key.USER: USERS[(t + r) % len(USERS)],
                    Key.START_TIME: started,
                    Key.END_TIME: started.replace("T02", "T03"),
                    Key.HOST: f"worker-{(t * 7 + r) % 40}",
                    Key.JOB: f"job_{t}",
                    Key.STATUS: "SUCCEEDED",
                },
            )
            rows.edge(EdgeLabel.HAS_RUN, process, run)
    return rows.state()


def elements(state: State) -> int:
    return len(state[2]) + len(state[4])


# ---------------------------------------------------------------------------------------------- the two sides
def build_dicts(state: State) -> tuple[dict, dict, dict, dict]:
    """The plain-Python baseline: the same rows as dicts, with out/in adjacency lists of edge ids."""
    _version, _next_id, vertex_rows, vprop_rows, edge_rows = state
    vertices = {vid: (label, {}) for vid, label in vertex_rows}
    for vid, _vpid, key, value, _meta in vprop_rows:
        vertices[vid][1][key] = value
    edges: dict[Any, tuple] = {}
    out_adj: dict[Any, list] = {}
    in_adj: dict[Any, list] = {}
    for eid, label, out_id, in_id, props in edge_rows:
        edges[eid] = (label, out_id, in_id, props)
        out_adj.setdefault(out_id, []).append(eid)
        in_adj.setdefault(in_id, []).append(eid)
    return vertices, edges, out_adj, in_adj


def build_graph(state: State) -> MemGraph:
    """The engine's graph of ``state``, with the indexes the product configures."""
    graph = MemGraph(unique=[(VertexLabel.TABLE, Key.QUALIFIED_NAME)], indexed=[Key.QUALIFIED_NAME])
    graph.import_state(state)
    return graph


BUILDERS: dict[str, Callable[[State], Any]] = {"dicts": build_dicts, "graph": build_graph}


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# ---------------------------------------------------------------------------------------------- child measures
def child_memory(side: str, tables: int, runs: int) -> dict[str, float]:
    """tracemalloc bytes and RSS growth of the structure built from freshly generated rows (rows dropped)."""
    gc.collect()
    rss_before = rss_bytes()
    tracemalloc.start()
    state = lineage_state(tables, runs)
    count = elements(state)
    built = BUILDERS[side](state)
    del state
    gc.collect()
    traced = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert built is not None
    return {"elements": count, "traced": traced, "rss": rss_bytes() - rss_before}


def child_import(side: str, tables: int, runs: int) -> dict[str, float]:
    """Seconds to build the structure from rows already in memory (GC paused, as the engine's open does)."""
    state = lineage_state(tables, runs)
    gc.collect()
    gc.disable()
    started = time.perf_counter()
    built = BUILDERS[side](state)
    seconds = time.perf_counter() - started
    assert built is not None
    return {"elements": elements(state), "seconds": seconds}


def _upsert_rows(state: State, limit: int) -> tuple[dict[int, dict], list[tuple]]:
    """The first vertices (with their properties) and the edges between them, ``limit`` elements at most."""
    _version, _next_id, vertex_rows, vprop_rows, edge_rows = state
    vertex_rows = vertex_rows[: limit // 3]
    labels = dict(vertex_rows)
    props: dict[int, dict[str, Any]] = {vid: {} for vid in labels}
    for vid, _vpid, key, value, _meta in vprop_rows:
        if vid in props:
            props[vid][key] = value
    vertices = {
        vid: {"match": {T.label: labels[vid], Key.QUALIFIED_NAME: p[Key.QUALIFIED_NAME]}, "create": p}
        for vid, p in props.items()
    }
    edges = [row for row in edge_rows if row[2] in labels and row[3] in labels]
    return vertices, edges[: limit - len(vertices)]


def _graph_upserts(vertices: dict[int, dict], edges: list[tuple], batch: int) -> None:
    graph = EmbeddedGraph(unique=[(VertexLabel.TABLE, Key.QUALIFIED_NAME)], indexed=[Key.QUALIFIED_NAME])
    g = GraphTraversalSource(Graph(), TraversalStrategies())
    ids: dict[int, Any] = {}
    items = list(vertices.items())
    for start in range(0, len(items), batch):
        chunk = items[start : start + batch]
        traversal = upsert_traversal(g, "V", [row for _vid, row in chunk])
        for (vid, _row), traverser in zip(chunk, graph.execute(traversal.bytecode)):
            ids[vid] = traverser.object["id"]
    for start in range(0, len(edges), batch):
        rows = []
        for _eid, label, out_id, in_id, props in edges[start : start + batch]:
            match = {T.label: label, Direction.OUT: ids[out_id], Direction.IN: ids[in_id]}
            rows.append(
                {"match": {**match, **{k: v for k, v in props.items() if k != Key.GUID}}, "create": props}
            )
        graph.execute(upsert_traversal(g, "E", rows).bytecode)


def _dict_upserts(vertices: dict[int, dict], edges: list[tuple], _batch: int) -> None:
    by_key: dict[tuple, dict] = {}
    keys: dict[int, tuple] = {}
    for vid, row in vertices.items():
        key = keys[vid] = (row["match"][T.label], row["match"][Key.QUALIFIED_NAME])
        if key not in by_key:
            by_key[key] = dict(row["create"])
    out_adj: dict[tuple, list] = {}
    for _eid, label, out_id, in_id, props in edges:
        out_key, in_key = keys[out_id], keys[in_id]
        found = [
            e
            for e in out_adj.get(out_key, ())
            if e[0] == label
            and e[1] == in_key
            and all(e[2].get(k) == v for k, v in props.items() if k != Key.GUID)
        ]
        if not found:
            out_adj.setdefault(out_key, []).append((label, in_key, dict(props)))


def child_insert(side: str, tables: int, runs: int, limit: int, batch: int) -> dict[str, float]:
    """Wall and CPU seconds of upserting the first ``limit`` elements in batches (the writer's traversals, or
    dicts), the best of three fresh runs (CPU time is the figure that holds on a machine others load too)."""
    vertices, edges = _upsert_rows(lineage_state(tables, runs), limit)
    upsert = _graph_upserts if side == "graph" else _dict_upserts
    seconds = cpu = float("inf")
    for _ in range(3):
        started, started_cpu = time.perf_counter(), time.process_time()
        upsert(vertices, edges, batch)
        seconds = min(seconds, time.perf_counter() - started)
        cpu = min(cpu, time.process_time() - started_cpu)
    return {"elements": len(vertices) + len(edges), "seconds": seconds, "cpu": cpu}


def child_checkpoint(side: str, tables: int, runs: int) -> dict[str, float]:
    """Seconds to write the graph's snapshot into a store (``DurableLog.checkpoint``, synced) or to pickle the
    rows into one synced file."""
    state = lineage_state(tables, runs)
    count = elements(state)
    work = Path(tempfile.mkdtemp(prefix="bench-checkpoint-"))
    gc.collect()
    gc.disable()
    try:
        if side == "graph":
            graph = build_graph(state)
            del state
            with DurableLog(work / "store", sync=False) as log:
                log.recover()
                started = time.perf_counter()
                log.checkpoint(graph.export_columns())
        else:
            started = time.perf_counter()
            with (work / "rows.pickle").open("wb") as file:
                pickle.dump(state, file, protocol=5)
                file.flush()
                os.fsync(file.fileno())
        return {"elements": count, "seconds": time.perf_counter() - started}
    finally:
        shutil.rmtree(work)


def child_open(side: str, path: str) -> dict[str, float]:
    """Seconds and RSS growth of opening the store (engine) or unpickling the same rows (baseline)."""
    gc.collect()
    rss_before = rss_bytes()
    started = time.perf_counter()
    if side == "graph":
        opened: Any = EmbeddedGraph(
            path, unique=[(VertexLabel.TABLE, Key.QUALIFIED_NAME)], indexed=[Key.QUALIFIED_NAME]
        )
        count = len(opened.graph.vertices) + len(opened.graph.edges)
    else:
        with open(path, "rb") as file:
            gc.disable()
            opened = pickle.load(file)
            gc.enable()
        count = elements(opened[0])
    seconds = time.perf_counter() - started
    return {"elements": count, "seconds": seconds, "rss": rss_bytes() - rss_before}


def child_breakdown(_side: str, path: str) -> dict[str, float]:
    """Bytes per element of the graph opened from the store, by what holds them (``sys.getsizeof``, each object
    counted once, under the first kind that reaches it: vertices before edges)."""
    graph = EmbeddedGraph(
        path, unique=[(VertexLabel.TABLE, Key.QUALIFIED_NAME)], indexed=[Key.QUALIFIED_NAME]
    ).graph
    seen: set[int] = set()
    sizes: dict[str, int] = dict.fromkeys(BREAKDOWN, 0)

    def add(kind: str, obj: object) -> None:
        if id(obj) not in seen:
            seen.add(id(obj))
            sizes[kind] += sys.getsizeof(obj)

    for vid, v in graph.vertices.items():
        add("vertex record", v)
        add("vertex and edge ids", vid)
        add("vertex property lists (VertexRec.vals)", v.vals)
        for vp in v.all_props():
            add("vertex property records", vp)
            add("vertex property ids", vp.id)
            add("vertex property values", vp.value)
        for adjacency in (v.out_e, v.in_e):
            add("adjacency dicts and lists", adjacency)
            for edges in adjacency.values():
                add("adjacency dicts and lists", edges)
    for eid, e in graph.edges.items():
        add("edge records", e)
        add("vertex and edge ids", eid)
        add("edge value tuples", e.vals)
        for value in e.vals:
            add("edge property values", value)
    add("id maps, label and value indexes", graph.vertices)
    add("id maps, label and value indexes", graph.edges)
    for index in (*graph.vertices_by_label.values(), *graph.indexes.values()):
        add("id maps, label and value indexes", index)
        for bucket in index.values():
            if type(bucket) is dict:
                add("id maps, label and value indexes", bucket)
    count = len(graph.vertices) + len(graph.edges)
    return {kind: size / count for kind, size in sizes.items()}


BREAKDOWN = (
    "vertex property records",
    "vertex property ids",
    "vertex property values",
    "vertex property lists (VertexRec.vals)",
    "vertex record",
    "edge records",
    "edge value tuples",
    "edge property values",
    "adjacency dicts and lists",
    "vertex and edge ids",
    "id maps, label and value indexes",
)

CHILDREN: dict[str, Callable[..., dict[str, float]]] = {
    "memory": child_memory,
    "import": child_import,
    "insert": child_insert,
    "checkpoint": child_checkpoint,
    "open": child_open,
    "breakdown": child_breakdown,
}


def run_child(name: str, *args: Any) -> dict[str, float]:
    """Run one measure in a fresh interpreter (so that memory and caches start the same for both sides)."""
    command = [sys.executable, __file__, "--child", name, *map(str, args)]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------- the table
def write_stores(work: Path, tables: int, runs: int) -> tuple[Path, Path]:
    """A store holding the graph (snapshot + N/1000 transactions of the tail rows) and a pickle of the rows."""
    state = lineage_state(tables, runs)
    store, rows_file = work / "store", work / "rows.pickle"
    _version, next_id, vertex_rows, vprop_rows, edge_rows = state
    tail = max(1, elements(state) // 1000)
    head_edges, tail_edges = edge_rows[:-tail], edge_rows[-tail:]
    graph = MemGraph()
    graph.import_state((1, next_id, vertex_rows, vprop_rows, head_edges))
    with DurableLog(store, sync=False) as log:
        log.recover()
        log.checkpoint(graph.export_columns())  # the snapshot the engine writes
        del graph
        for eid, label, out_id, in_id, props in tail_edges:
            ops = [("addE", eid, label, out_id, in_id)] + [("setEP", eid, k, v) for k, v in props.items()]
            log.append(ops)
    with rows_file.open("wb") as file:
        pickle.dump((state, []), file, protocol=5)
    return store, rows_file


def measure(
    tables: int, runs: int, insert_elements: int, batch: int, breakdown: bool = False
) -> list[tuple[str, str, str, str]]:
    """The table's rows; with ``breakdown``, then the bytes per element of the opened store by what holds them."""
    rows: list[tuple[str, str, str, str]] = []
    base, ours = run_child("memory", "dicts", tables, runs), run_child("memory", "graph", tables, runs)
    n = ours["elements"]
    for field, what in (("traced", "tracemalloc"), ("rss", "RSS growth")):
        b, o = base[field] / n, ours[field] / n
        rows.append((f"bytes/element in memory ({what})", f"{b:,.0f}", f"{o:,.0f}", f"{o / b:.2f}x"))
    base, ours = run_child("import", "dicts", tables, runs), run_child("import", "graph", tables, runs)
    b, o = base["elements"] / base["seconds"], ours["elements"] / ours["seconds"]
    rows.append(
        (
            "import_state of the rows elements/s (vs building the dicts)",
            f"{b:,.0f}",
            f"{o:,.0f}",
            f"{o / b:.2f}x",
        )
    )
    base = run_child("insert", "dicts", tables, runs, insert_elements, batch)
    ours = run_child("insert", "graph", tables, runs, insert_elements, batch)
    for field, what in (("seconds", "elements/s"), ("cpu", "elements per CPU-second")):
        b, o = base["elements"] / base[field], ours["elements"] / ours[field]
        rows.append(
            (
                f"upsert {what}, mergeV/mergeE batches of {batch} ({ours['elements']:,.0f} elements)",
                f"{b:,.0f}",
                f"{o:,.0f}",
                f"{o / b:.3f}x",
            )
        )
    base, ours = (
        run_child("checkpoint", "dicts", tables, runs),
        run_child("checkpoint", "graph", tables, runs),
    )
    rows.append(
        (
            "checkpoint seconds, snapshot written (vs pickle.dump of the rows)",
            f"{base['seconds']:.2f}",
            f"{ours['seconds']:.2f}",
            f"{ours['seconds'] / base['seconds']:.2f}x",
        )
    )
    work = Path(tempfile.mkdtemp(prefix="bench-store-memory-"))
    try:
        store, rows_file = write_stores(work, tables, runs)
        base, ours = run_child("open", "pickle", rows_file), run_child("open", "graph", store)
        rows.append(
            (
                "open seconds (vs pickle.load of the rows)",
                f"{base['seconds']:.2f}",
                f"{ours['seconds']:.2f}",
                f"{ours['seconds'] / base['seconds']:.2f}x",
            )
        )
        b, o = base["rss"] / n, ours["rss"] / n
        rows.append(
            ("RSS growth of the open, bytes/element (vs the rows)", f"{b:,.0f}", f"{o:,.0f}", f"{o / b:.2f}x")
        )
        rows.append(
            (
                "store on disk, bytes/element (vs the pickle)",
                f"{rows_file.stat().st_size / n:,.0f}",
                f"{sum(p.stat().st_size for p in store.iterdir()) / n:,.0f}",
                "",
            )
        )
        if breakdown:
            parts = run_child("breakdown", "graph", store)
            rows.append(("opened store by what holds it (sys.getsizeof), bytes/element", "", "", ""))
            rows.extend((f"  {kind}", "", f"{size:,.1f}", "") for kind, size in parts.items())
            rows.append(("  total", "", f"{sum(parts.values()):,.0f}", ""))
    finally:
        shutil.rmtree(work)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tables", type=int, default=300, help="tables of 30 columns (8,000 ~ 1M elements)")
    parser.add_argument("--runs", type=int, default=3, help="run vertices per process")
    parser.add_argument("--insert-elements", type=int, default=20_000, help="elements upserted by traversals")
    parser.add_argument(
        "--batch", type=int, default=500, help="rows per upsert traversal (the writer's batch)"
    )
    parser.add_argument(
        "--breakdown", action="store_true", help="also the opened store's bytes/element by what holds them"
    )
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        name, side, *rest = args.child
        print(json.dumps(CHILDREN[name](side, *(int(x) if x.isdigit() else x for x in rest))))
        return
    state = lineage_state(args.tables, args.runs)
    print(
        f"lineage graph: {args.tables:,} tables, {len(state[2]):,} vertices, {len(state[3]):,} vertex properties, "
        f"{len(state[4]):,} edges = {elements(state):,} elements (Python {sys.version.split()[0]})"
    )
    del state
    table = [
        ("measure", "plain dicts", "embedded graph", "graph / dicts"),
        *measure(args.tables, args.runs, args.insert_elements, args.batch, args.breakdown),
    ]
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)))


if __name__ == "__main__":
    main()
