"""Self-contained HTML picture of a lineage trace (no network needed to open it).

The page inlines vis-network (shipped inside the ``pyvis`` package from PyPI) and draws the trace left to right by
hop: pan and zoom with the mouse, columns grouped with their table (a table's columns start folded into one
cluster; double-click a cluster to open it), and a click on a vertex or edge shows its provenance (operation, who,
when, where, job, query text) in the side panel.
"""

from __future__ import annotations

import json
from functools import cache
from html import escape
from importlib import resources
from typing import TYPE_CHECKING, Any

from lineage_platform.errors import LineageError

if TYPE_CHECKING:
    from lineage_platform.trace import LineageGraph

COLORS = {"table": "#90caf9", "file": "#ffcc80", "topic": "#ce93d8", "column": "#c5e1a5"}


@cache
def vis_network_js() -> str:
    """The vis-network library's minified source, from the installed pyvis package (highest bundled version)."""
    lib = resources.files("pyvis") / "lib"
    versions = sorted((d for d in lib.iterdir() if d.name.startswith("vis-")), key=lambda d: _version(d.name))
    if not versions:
        raise LineageError(
            "vis-network is missing from the pyvis package", hint="reinstall: pip install pyvis==0.3.2"
        )
    return (versions[-1] / "vis-network.min.js").read_text(encoding="utf-8")


def _version(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in name.removeprefix("vis-").split(".") if part.isdigit())


def _graph_data(lineage: LineageGraph) -> dict[str, Any]:
    nodes, edges = [], []
    for node in lineage.nodes.values():
        table = node.qualified_name.rsplit(".", 1)[0] if node.label == "column" else None
        nodes.append(
            {
                "id": str(node.id),
                "label": node.qualified_name.rsplit(".", 1)[-1] if table else node.qualified_name,
                "title": f"{node.label}: {node.qualified_name}",
                "level": -node.depth,  # sources (positive depth) on the left: data flows left to right
                "shape": "ellipse" if node.label == "column" else "box",
                "color": "#ffd54f" if node.id == lineage.root else COLORS.get(node.label, "#e0e0e0"),
                "table": table,
                "info": {
                    "kind": node.label,
                    "name": node.qualified_name,
                    "hop": node.depth,
                    "more inputs": node.more_inputs,
                    "more outputs": node.more_outputs,
                },
            }
        )
    for index, edge in enumerate(lineage.edges):
        process = lineage.processes.get(edge.process)
        run = process.runs[0] if process and process.runs else {}
        edges.append(
            {
                "id": f"e{index}",
                "from": str(edge.source),
                "to": str(edge.target),
                "arrows": "to",
                "dashes": edge.strength != "strong",
                "label": (process.operation if process else "") or "",
                "info": {
                    "operation": process.operation if process else None,
                    "transform": edge.transform,
                    "strength": edge.strength,
                    "key path": edge.key_path,
                    "user": run.get("user"),
                    "when": run.get("startTime"),
                    "where": " ".join(str(run[k]) for k in ("engine", "cluster", "host") if run.get(k)),
                    "job": run.get("job"),
                    "query": process.query_text if process else None,
                },
            }
        )
    return {"nodes": nodes, "edges": edges}


PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Lineage of {title}</title>
<style>
 body {{ margin: 0; font-family: Helvetica, Arial, sans-serif; display: flex; height: 100vh; }}
 #graph {{ flex: 1; }}
 #panel {{ width: 320px; padding: 10px; border-left: 1px solid #ccc; overflow: auto; font-size: 13px; }}
 #panel pre {{ white-space: pre-wrap; background: #f5f5f5; padding: 6px; }}
 .note {{ color: #b71c1c; }}
</style></head>
<body><div id="graph"></div><div id="panel"><h3>{title}</h3><p>{summary}</p>{notes}
<p>Click a vertex or an edge to see its provenance. Double-click a table cluster to show its columns.</p>
<div id="details"></div></div>
<script>{library}</script>
<script>
const data = {data};
const nodes = new vis.DataSet(data.nodes), edges = new vis.DataSet(data.edges);
const network = new vis.Network(document.getElementById("graph"), {{nodes, edges}}, {{
  layout: {{hierarchical: {{direction: "LR", sortMethod: "directed", levelSeparation: 220, nodeSpacing: 60}}}},
  physics: false, interaction: {{hover: true, navigationButtons: true, keyboard: true}},
  edges: {{smooth: {{type: "cubicBezier"}}, font: {{size: 9, align: "middle"}}}}
}});
const tables = [...new Set(data.nodes.filter(n => n.table).map(n => n.table))];
for (const table of tables) {{
  network.cluster({{joinCondition: n => n.table === table,
    clusterNodeProperties: {{id: "cluster:" + table, label: table + " (columns)", shape: "database", color: "#a5d6a7",
                              info: {{kind: "table", name: table}}}}}});
}}
function show(info) {{
  const rows = Object.entries(info).filter(([k, v]) => v !== null && v !== "" && v !== false)
    .map(([k, v]) => k === "query" ? "<p><b>query</b></p><pre>" + escapeHtml(String(v)) + "</pre>"
                                   : "<p><b>" + k + "</b>: " + escapeHtml(String(v)) + "</p>");
  document.getElementById("details").innerHTML = rows.join("");
}}
function escapeHtml(s) {{ return s.replace(/[&<>"]/g, c => ({{"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}})[c]); }}
network.on("click", params => {{
  if (params.nodes.length) {{
    const id = params.nodes[0];
    show(network.isCluster(id) ? network.body.nodes[id].options.info : nodes.get(id).info);
  }} else if (params.edges.length) {{
    const edge = edges.get(network.clustering.getBaseEdge(params.edges[0]) || params.edges[0]);
    if (edge) show(edge.info);
  }}
}});
network.on("doubleClick", params => {{
  if (params.nodes.length && network.isCluster(params.nodes[0])) network.openCluster(params.nodes[0]);
}});
window.lineageReady = true;
</script></body></html>
"""


def render_html(lineage: LineageGraph) -> str:
    """One self-contained HTML page drawing the trace."""
    root = lineage.nodes[lineage.root]
    data = json.dumps(_graph_data(lineage), default=str).replace("</", "<\\/")
    return PAGE.format(
        title=escape(root.qualified_name),
        summary=escape(
            f"{lineage.direction}stream, {lineage.level} level: {len(lineage.nodes)} vertices, {len(lineage.edges)} edges"
        ).replace("bothstream", "up- and downstream"),
        notes="".join(f'<p class="note">{escape(note)}</p>' for note in lineage.notes),
        library=vis_network_js(),
        data=data,
    )


def render_notebook_html(lineage: LineageGraph, height: int = 520) -> str:
    """The page inside an iframe, so notebooks show it without trusting scripts in their own DOM."""
    return (
        f'<iframe srcdoc="{escape(render_html(lineage), quote=True)}" '
        f'style="width: 100%; height: {height}px; border: 1px solid #ddd"></iframe>'
    )
