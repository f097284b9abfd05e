"""Graphviz DOT text of a lineage trace: tables as clusters holding their columns at column level."""

from __future__ import annotations

import shutil
import subprocess
from collections import defaultdict
from typing import TYPE_CHECKING

from lineage_platform.errors import LineageError
from lineage_platform.graph.vocabulary import VertexLabel

if TYPE_CHECKING:
    from lineage_platform.model import LineageGraph

SHAPES = {
    VertexLabel.TABLE: "box",
    VertexLabel.FILE: "note",
    VertexLabel.TOPIC: "cds",
    VertexLabel.COLUMN: "ellipse",
}


def _quote(text: object) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_dot(lineage: LineageGraph) -> str:
    """DOT text: one node per vertex (root highlighted), one edge per lineage edge, labelled with the operation."""
    lines = ["digraph lineage {", "  rankdir=LR;", '  node [fontname="Helvetica", fontsize=10];']
    groups: dict[str, list] = defaultdict(list)
    for node in lineage.nodes.values():
        table = node.qualified_name.rsplit(".", 1)[0] if node.label == VertexLabel.COLUMN else ""
        groups[table].append(node)
    for cluster, (table, nodes) in enumerate(sorted(groups.items())):
        indent = "  "
        if table:
            lines += [f"  subgraph cluster_{cluster} {{", f"    label={_quote(table)}; style=rounded;"]
            indent = "    "
        for node in nodes:
            style = ', style=filled, fillcolor="#ffd54f"' if node.id == lineage.root else ""
            text = node.qualified_name.rsplit(".", 1)[-1] if table else node.qualified_name
            lines.append(
                f"{indent}{_quote(node.id)} [label={_quote(text)}, shape={SHAPES.get(node.label, 'box')}{style}];"
            )
        if table:
            lines.append("  }")
    for edge in lineage.edges:
        process = lineage.processes.get(edge.process)
        label = process.operation if process and process.operation else ""
        style = "" if edge.strength == "strong" else ", style=dashed"
        lines.append(f"  {_quote(edge.source)} -> {_quote(edge.target)} [label={_quote(label)}{style}];")
    lines.append("}")
    return "\n".join(lines)


def render_svg(lineage: LineageGraph) -> str:
    """SVG drawn by Graphviz's ``dot`` from :func:`render_dot`."""
    dot = shutil.which("dot")
    if dot is None:
        raise LineageError(
            "Graphviz `dot` is needed for SVG output", hint="apt-get install graphviz, or use --format html"
        )
    return subprocess.run(
        [dot, "-Tsvg"], input=render_dot(lineage), capture_output=True, text=True, check=True
    ).stdout
