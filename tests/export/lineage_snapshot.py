"""Everything the graph says about lineage, as comparable sets (ids and creation times left out)."""

from __future__ import annotations

from typing import Any

from gremlin_python.process.graph_traversal import GraphTraversalSource, __

VOLATILE = {"createTime"}


def snapshot(g: GraphTraversalSource) -> tuple[set[tuple[Any, ...]], set[tuple[Any, ...]]]:
    """(vertices, edges): each vertex as its label and sorted properties; each edge as label, the endpoints'
    qualified names and its sorted properties."""
    vertices = {
        (row["label"], *sorted((key, value[0]) for key, value in row["props"].items() if key not in VOLATILE))
        for row in g.V().project("label", "props").by(__.label()).by(__.value_map()).to_list()
    }
    edges = {
        (
            row["label"],
            row["out"],
            row["in"],
            *sorted((key, value) for key, value in row["props"].items() if key not in VOLATILE),
        )
        for row in g.E()
        .project("label", "out", "in", "props")
        .by(__.label())
        .by(__.out_v().values("qualifiedName"))
        .by(__.in_v().values("qualifiedName"))
        .by(__.value_map())
        .to_list()
    }
    return vertices, edges
