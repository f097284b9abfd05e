"""Lineage tracing: depth-first search up- or downstream over the lineage graph, at table or column level.

The search follows the DAG provenance method: mark a vertex visited, take its lineage edges, recurse into the
unvisited neighbours. It runs level by level so that each hop is one Gremlin round trip for the whole frontier,
not one per vertex, and the same traversals run unchanged on JanusGraph.

Big lineage stays usable: every vertex expands at most ``fanout`` neighbours per hop (the rest is marked "has more
inputs/outputs" for on-demand expansion, as Atlas's lineage API does), the whole result is bounded by ``limit``
vertices and the search by ``timeout`` seconds; when a bound cuts the result, ``notes`` say what was cut.
Depth has no small default cap; cycles across runs terminate because visited vertices are never expanded twice.
"""

from __future__ import annotations

import difflib
import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.process.traversal import Order, P, T, TextP

from lineage_platform.errors import GraphError

Direction = Literal["up", "down", "both"]
Level = Literal["table", "column"]
DATASET_LABELS = ("table", "file", "topic")


@dataclass
class Node:
    """A dataset (table, file, topic) or column in the traced lineage."""

    id: Any
    label: str
    qualified_name: str
    depth: int
    properties: dict[str, Any] = field(default_factory=dict)
    more_inputs: bool = False
    more_outputs: bool = False


@dataclass
class Edge:
    """A lineage edge of the result: source feeds target through a process (its qualifiedName)."""

    source: Any
    target: Any
    process: str
    strength: str = "strong"
    transform: str | None = None
    key_path: str | None = None


@dataclass
class Process:
    """Provenance of a process: how (operation, query text) and its latest runs (who, when, where, why)."""

    id: Any
    qualified_name: str
    operation: str | None
    query_text: str | None
    runs: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class LineageGraph:
    """The subgraph a trace returns: nodes, edges and each process's provenance."""

    root: Any
    direction: Direction
    level: Level
    nodes: dict[Any, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    processes: dict[str, Process] = field(default_factory=dict)  # by process qualifiedName
    notes: list[str] = field(default_factory=list)

    @property
    def partial(self) -> bool:
        """True when a bound cut the result (see ``notes``)."""
        return bool(self.notes)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping (ids become strings)."""
        return {
            "root": str(self.root),
            "direction": self.direction,
            "level": self.level,
            "partial": self.partial,
            "notes": self.notes,
            "nodes": [{**asdict(n), "id": str(n.id)} for n in self.nodes.values()],
            "edges": [{**asdict(e), "source": str(e.source), "target": str(e.target)} for e in self.edges],
            "processes": [{**asdict(p), "id": str(p.id)} for p in self.processes.values()],
        }

    def to_json(self, indent: int | None = 2) -> str:
        """The result as JSON text."""
        return json.dumps(self.to_dict(), indent=indent, default=str)

    def to_dot(self) -> str:
        """The result as Graphviz DOT text."""
        from lineage_platform.render.dot import render_dot

        return render_dot(self)

    def to_svg(self) -> str:
        """The result drawn as SVG by Graphviz."""
        from lineage_platform.render.dot import render_svg

        return render_svg(self)

    def to_tree(self) -> str:
        """The result as an indented text tree from the root."""
        from lineage_platform.render.tree import render_tree

        return render_tree(self)

    def to_html(self) -> str:
        """The result as one self-contained HTML page (pan/zoom, click for provenance)."""
        from lineage_platform.render.html import render_html

        return render_html(self)

    def _repr_html_(self) -> str:
        from lineage_platform.render.html import render_notebook_html

        return render_notebook_html(self)


def resolve(g: GraphTraversalSource, name: str) -> dict[str, Any]:
    """The vertex with this qualifiedName, or a GraphError listing the closest existing names."""
    found = g.V().has("qualifiedName", name.lower()).element_map().to_list()
    if found:
        return found[0]
    prefix = name.lower().split(".", 1)[0]
    candidates = (
        g.V()
        .has("qualifiedName", TextP.starting_with(prefix))
        .has_label(P.within(*DATASET_LABELS, "column"))
        .values("qualifiedName")
        .limit(10_000)
        .to_list()
    )
    close = difflib.get_close_matches(name.lower(), candidates, n=5, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}?" if close else "check the name: db.table or db.table.column"
    raise GraphError(f"no table or column named {name!r} in the graph", hint=hint)


def _hop(level: Level, upstream: bool, include_weak: bool):
    """Anonymous traversal from a vertex to {p: process qualifiedName, pid: its id, n: neighbour id, ...} rows."""
    if level == "table":
        if upstream:
            step = __.in_("generated").as_("p").in_("usedBy")
        else:
            step = __.out("usedBy").as_("p").out("generated")
        return (
            step.project("p", "pid", "n")
            .by(__.select("p").values("qualifiedName"))
            .by(__.select("p").id_())
            .by(__.id_())
        )
    edges = __.in_e("flowsTo") if upstream else __.out_e("flowsTo")
    if upstream and include_weak:
        edges = __.union(__.in_e("flowsTo"), __.in_("hasColumn").in_e("flowsTo").has("strength", "weak"))
    if not include_weak:
        edges = edges.has("strength", "strong")
    other = __.out_v() if upstream else __.in_v()
    return (
        edges.project("p", "n", "strength", "transform", "keyPath")
        .by(__.values("process"))
        .by(other.id_())
        .by(__.values("strength"))
        .by(__.values("transform"))
        .by(__.coalesce(__.values("keyPath"), __.constant("")))
    )


def trace(
    g: GraphTraversalSource,
    name: str,
    *,
    direction: Direction = "up",
    depth: int | None = None,
    level: Level | None = None,
    include_weak: bool = False,
    since: str | None = None,
    fanout: int = 200,
    limit: int = 100_000,
    timeout: float = 60.0,
) -> LineageGraph:
    """Trace the lineage of a table or column (``db.table`` or ``db.table.column``).

    ``level`` defaults to the level of the named vertex. The result holds every reached vertex with its depth,
    the edges between them, and the provenance of every process on those edges.
    """
    root = resolve(g, name)
    level = level or ("column" if root[T.label] == "column" else "table")
    result = LineageGraph(root=root[T.id], direction=direction, level=level)
    result.nodes[root[T.id]] = _node(root, 0)
    directions = ("up", "down") if direction == "both" else (direction,)
    deadline = time.monotonic() + timeout
    process_ids: dict[str, Any] = {}
    for way in directions:
        _search(g, result, way == "up", depth, include_weak, since, fanout, limit, deadline, process_ids)
    _load_processes(g, result, process_ids)
    return result


def _search(
    g: GraphTraversalSource,
    result: LineageGraph,
    upstream: bool,
    depth: int | None,
    include_weak: bool,
    since: str | None,
    fanout: int,
    limit: int,
    deadline: float,
    process_ids: dict[str, Any],
) -> None:
    visited = {result.root}
    frontier = [result.root]
    hop = 0
    while frontier and (depth is None or hop < depth):
        if time.monotonic() > deadline:
            result.notes.append(f"stopped after {hop} hops: time limit reached; expand the leaves to go on")
            return
        hop += 1
        rows = (
            g.V(*frontier)
            .project("id", "out")
            .by(T.id)
            .by(_hop(result.level, upstream, include_weak).limit(fanout + 1).fold())
            .to_list()
        )
        if since:
            rows = _runs_since(g, rows, since)
        reached: list[Any] = []
        for row in rows:
            neighbours = row["out"]
            if len(neighbours) > fanout:
                neighbours = neighbours[:fanout]
                node = result.nodes[row["id"]]
                if upstream:
                    node.more_inputs = True
                else:
                    node.more_outputs = True
            for item in neighbours:
                other = item["n"]
                if "pid" in item:
                    process_ids[item["p"]] = item["pid"]
                edge = Edge(other, row["id"], item["p"]) if upstream else Edge(row["id"], other, item["p"])
                edge.strength = item.get("strength", "strong")
                edge.transform = item.get("transform")
                edge.key_path = item.get("keyPath") or None
                result.edges.append(edge)
                if other not in visited:
                    visited.add(other)
                    reached.append(other)
        if len(result.nodes) + len(reached) > limit:
            reached = reached[: max(0, limit - len(result.nodes))]
            result.notes.append(f"result cut at {limit} vertices (--limit); expand the leaves to see more")
        for element in g.V(*reached).element_map().to_list() if reached else []:
            result.nodes[element[T.id]] = _node(element, hop if upstream else -hop)
        kept = set(result.nodes)
        result.edges = [e for e in result.edges if e.source in kept and e.target in kept]
        if result.notes:
            return
        frontier = reached


def _runs_since(g: GraphTraversalSource, rows: list[dict], since: str) -> list[dict]:
    """Keep only hops made by processes with a run that started at or after ``since`` (one round trip)."""
    names = {item["p"] for row in rows for item in row["out"]}
    if not names:
        return rows
    active = set(
        g.V()
        .has("process", "qualifiedName", P.within(*names))
        .where(__.out("hasRun").has("startTime", P.gte(since)))
        .values("qualifiedName")
        .to_list()
    )
    return [{"id": row["id"], "out": [item for item in row["out"] if item["p"] in active]} for row in rows]


def _node(element: dict, depth: int) -> Node:
    props = {k: v for k, v in element.items() if isinstance(k, str)}
    return Node(element[T.id], element[T.label], props.get("qualifiedName", ""), depth, props)


def _load_processes(g: GraphTraversalSource, result: LineageGraph, process_ids: dict[str, Any]) -> None:
    """Fetch provenance for every process on the result's edges in one round trip (by id where known)."""
    names = {e.process for e in result.edges}
    if not names:
        return
    known = [process_ids[name] for name in names if name in process_ids]
    if len(known) == len(names):
        start = g.V(*known)
    else:
        start = g.V().has("process", "qualifiedName", P.within(*names))
    rows = (
        start.project("id", "p", "runs")
        .by(T.id)
        .by(__.element_map())
        .by(__.out("hasRun").order().by("startTime", Order.desc).limit(5).element_map().fold())
        .to_list()
    )
    for row in rows:
        props = row["p"]
        runs = [{k: v for k, v in run.items() if isinstance(k, str)} for run in row["runs"]]
        result.processes[props["qualifiedName"]] = Process(
            row["id"], props["qualifiedName"], props.get("operation"), props.get("queryText"), runs
        )
