"""What a lineage graph holds, by qualified names, for tests that compare two graphs written different ways."""

from __future__ import annotations

from gremlin_python.process.graph_traversal import __
from gremlin_python.process.traversal import T


def edge_rows(g) -> set[tuple]:
    """Every edge as (label, out qualifiedName, in qualifiedName, its properties but createTime, sorted)."""
    rows = (
        g.E()
        .project("label", "out", "in", "props")
        .by(T.label)
        .by(__.out_v().values("qualifiedName"))
        .by(__.in_v().values("qualifiedName"))
        .by(__.value_map())
        .to_list()
    )
    return {(row["label"], row["out"], row["in"], without_create_time(row["props"])) for row in rows}


def without_create_time(properties: dict) -> tuple:
    """A property map's string keys and values (as strings), createTime left out, sorted."""
    return tuple(
        sorted((k, str(v)) for k, v in properties.items() if isinstance(k, str) and k != "createTime")
    )
