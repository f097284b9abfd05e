"""An indented text tree of a lineage trace, rooted at the traced vertex."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lineage_platform.model import LineageGraph


def render_tree(lineage: LineageGraph) -> str:
    """Upstream sources (▲) and downstream destinations (▼) of the root, one vertex per line; a table traced at
    column level lists each of its columns with the column's own tree under it."""
    lines = [lineage.nodes[lineage.root].qualified_name]
    both = lineage.direction == "both"
    if lineage.direction in ("up", "both"):
        lines += (["upstream:"] if both else []) + _branch(lineage, upstream=True)
    if lineage.direction in ("down", "both"):
        lines += (["downstream:"] if both else []) + _branch(lineage, upstream=False)
    lines += [f"note: {note}" for note in lineage.notes]
    return "\n".join(lines)


def _branch(lineage: LineageGraph, *, upstream: bool) -> list[str]:
    children: dict[Any, list[tuple[Any, str]]] = defaultdict(list)
    for edge in lineage.edges:
        parent, child = (edge.target, edge.source) if upstream else (edge.source, edge.target)
        node = lineage.nodes[child]
        if (node.depth > 0) == upstream or node.depth == 0:
            process = lineage.processes.get(edge.process)
            how = process.operation if process and process.operation else "?"
            weak = "" if edge.strength == "strong" else f", {edge.strength}"
            transform = f" {edge.transform}" if edge.transform else ""
            label = f"[{how}{transform}{weak}]"
            if (child, label) not in children[parent]:
                children[parent].append((child, label))
    arrow = "▲" if upstream else "▼"
    lines: list[str] = []

    def walk(vertex: Any, prefix: str, seen: frozenset) -> None:
        kids = sorted(children.get(vertex, []), key=lambda kid: lineage.nodes[kid[0]].qualified_name)
        for index, (kid, label) in enumerate(kids):
            last = index == len(kids) - 1
            node = lineage.nodes[kid]
            more = " (has more)" if (node.more_inputs if upstream else node.more_outputs) else ""
            cycle = " (cycle)" if kid in seen else ""
            lines.append(
                f"{prefix}{'└─' if last else '├─'}{arrow} {node.qualified_name} {label}{more}{cycle}"
            )
            if not cycle:
                walk(kid, prefix + ("   " if last else "│  "), seen | {kid})

    root = lineage.nodes[lineage.root]
    if root.more_inputs if upstream else root.more_outputs:
        lines.append(f"  {arrow} (has more {'inputs' if upstream else 'outputs'})")
    if not lineage.starts:
        walk(lineage.root, "", frozenset({lineage.root}))
    for index, column in enumerate(sorted(lineage.starts, key=lambda c: lineage.nodes[c].qualified_name)):
        last = index == len(lineage.starts) - 1
        lines.append(f"{'└─' if last else '├─'} {lineage.nodes[column].qualified_name}")
        walk(column, "   " if last else "│  ", frozenset({column}))
    return lines
