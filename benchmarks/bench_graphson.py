"""GraphSON import/export speed on the embedded engine.

Baselines measured in the same run:
- parse only: reading every line into records (the floor any import pays);
- one element per traversal: the obvious import, one ``addV`` per vertex and one ``addE`` per edge;
against the project's batched `import_graph`, and `export_graph`.

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

from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.process.traversal import T

from lineage_platform.graph.connect import connect
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
            t = g.add_e(edge.label).from_(__.V(record.id)).to(__.V(edge.other)).property(T.id, edge.id)
            for key, value in edge.properties.items():
                t = t.property(key, value)
            t.iterate()


def _timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def main() -> None:
    """Run the measurements and print the table."""
    copies = int(sys.argv[1]) if len(sys.argv) > 1 else int(os.environ.get("BENCH_GRAPHSON_COPIES", "1"))
    with tempfile.TemporaryDirectory() as folder:
        path = make_input(copies, Path(folder))
        lines = path.read_text().splitlines()
        parse = _timed(lambda: [parse_vertex_line(line) for line in lines])
        naive = _timed(lambda: one_element_per_traversal(connect("memory:"), path))
        g = connect("memory:")
        batched = _timed(lambda: import_graph(g, path, batch_size=200))
        exported = _timed(lambda: export_graph(g, Path(folder) / "out.json"))
    vertices, edges = 808 * copies, 8049 * copies
    print(f"GraphSON on the embedded engine: {vertices} vertices, {edges} edges")
    print(f"{'measurement':<40} {'seconds':>8} {'elements/s':>11} {'vs batched import':>18}")
    for name, seconds in [
        ("parse only (floor)", parse),
        ("import, one element per traversal", naive),
        ("import_graph (batched)", batched),
        ("export_graph", exported),
    ]:
        rate = (vertices + edges) / seconds
        print(f"{name:<40} {seconds:>8.2f} {rate:>11,.0f} {seconds / batched:>17.2f}x")


if __name__ == "__main__":
    main()
