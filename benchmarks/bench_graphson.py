"""GraphSON import/export speed on the embedded engine.

Baselines measured in the same run:
- parse only: reading every line into records (the floor any import pays);
- one element per traversal: the obvious import, one ``addV`` per vertex and one ``addE`` per edge;
against the project's batched `import_graph`, and `export_graph`; once in process and once through
``lineage graph serve`` (WebSocket + GraphBinary, as a JanusGraph Server is reached), where round trips
count.

Usage: ``python benchmarks/bench_graphson.py [COPIES]`` — the Grateful Dead graph (808 vertices, 8049
edges) repeated COPIES times with shifted ids (default 1; env BENCH_GRAPHSON_COPIES).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

from gremlin_python.process.graph_traversal import GraphTraversalSource
from gremlin_python.process.traversal import T
from gremlin_python.structure.graph import Vertex

os.environ.setdefault("LINEAGE_GRAPH_SCHEMA", "open")  # TinkerPop's sample graphs are not lineage graphs

from lineage_platform.graph.connect import close_all, connect
from lineage_platform.graph.embedded.engine import EmbeddedGraph
from lineage_platform.graph.embedded.server.server import BackgroundServer
from lineage_platform.graph.graphson import export_graph, import_graph, parse_vertex_line

GRATEFUL = (
    Path(__file__).resolve().parents[2] / "shared" / "tinkerpop-features" / "data" / "grateful-dead.json"
)


def _shift(value: dict, offset: int) -> dict:
    return {"@type": value["@type"], "@value": value["@value"] + offset}


def make_input(copies: int, folder: Path) -> Path:
    """Grateful Dead `copies` times, ids shifted per copy so the copies stay apart."""
    path = folder / f"grateful-x{copies}.json"
    lines = GRATEFUL.read_text().splitlines()
    with open(path, "w") as out:
        for copy in range(copies):
            offset = copy * 100_000
            for line in lines:
                doc = json.loads(line)
                doc["id"] = _shift(doc["id"], offset)
                for direction, far in (("outE", "inV"), ("inE", "outV")):
                    for edges in doc.get(direction, {}).values():
                        for edge in edges:
                            edge["id"], edge[far] = _shift(edge["id"], offset), _shift(edge[far], offset)
                out.write(json.dumps(doc) + "\n")
    return path


def one_element_per_traversal(g: GraphTraversalSource, path: Path) -> None:
    """The baseline import: a traversal per vertex, then a traversal per edge."""
    records = [parse_vertex_line(line) for line in path.read_text().splitlines()]
    for record in records:
        t = g.add_v(record.label).property(T.id, record.id)
        for prop in record.properties:
            t = t.property(prop.key, prop.value)
        t.iterate()
    for record in records:
        for edge in record.out_edges:
            t = g.add_e(edge.label).from_(Vertex(record.id)).to(Vertex(edge.other)).property(T.id, edge.id)
            for key, value in edge.properties.items():
                t = t.property(key, value)
            t.iterate()


def _timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _measure(open_graph, path: Path, folder: Path) -> list[tuple[str, float]]:
    """Naive and batched import, then export, each on a fresh graph from `open_graph()`."""
    naive = _timed(lambda: one_element_per_traversal(open_graph(), path))
    g = open_graph()
    batched = _timed(lambda: import_graph(g, path, batch_size=200))
    exported = _timed(lambda: export_graph(g, folder / "out.json"))
    copies = len(path.read_text().splitlines()) // 808
    if (g.V().count().next(), g.E().count().next()) != (808 * copies, 8049 * copies):
        raise SystemExit("the batched import did not write the whole graph")
    return [
        ("import, one element per traversal", naive),
        ("import_graph (batched)", batched),
        ("export_graph", exported),
    ]


def _print_table(title: str, rows: list[tuple[str, float]], elements: int) -> None:
    batched = dict(rows)["import_graph (batched)"]
    print(title)
    print(f"  {'measurement':<38} {'seconds':>8} {'elements/s':>11} {'vs batched import':>18}")
    for name, seconds in rows:
        print(f"  {name:<38} {seconds:>8.2f} {elements / seconds:>11,.0f} {seconds / batched:>17.2f}x")


def main() -> None:
    """Run the measurements and print the tables: in process, and through `lineage graph serve`."""
    copies = int(sys.argv[1]) if len(sys.argv) > 1 else int(os.environ.get("BENCH_GRAPHSON_COPIES", "1"))
    elements = (808 + 8049) * copies
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        path = make_input(copies, folder)
        lines = path.read_text().splitlines()
        parse = ("parse only (floor)", _timed(lambda: [parse_vertex_line(line) for line in lines]))
        in_process = _measure(lambda: connect("memory:"), path, folder)
        servers: list[BackgroundServer] = []

        def served_graph() -> GraphTraversalSource:
            servers.append(BackgroundServer(EmbeddedGraph()).start())
            return connect(servers[-1].url)

        try:
            remote = _measure(served_graph, path, folder)
        finally:
            close_all()
            for server in servers:
                server.stop()
    print(f"GraphSON import/export: {808 * copies} vertices, {8049 * copies} edges")
    _print_table("embedded engine, in process (memory:)", [parse, *in_process], elements)
    _print_table("embedded engine behind lineage graph serve (ws://, GraphBinary)", remote, elements)


if __name__ == "__main__":
    main()
