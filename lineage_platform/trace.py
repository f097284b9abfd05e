"""Lineage tracing: depth-first search up- or downstream over the lineage graph, at table or column level.

The search follows the DAG provenance method: mark a vertex visited, take its lineage edges, recurse into the
unvisited neighbours. It runs level by level so that each hop is one Gremlin round trip for the whole frontier,
not one per vertex, and the same traversals run unchanged on JanusGraph. That round trip also brings the
frontier's element maps and, for table lineage, each process's provenance; no traversal reads paths.

Big lineage stays usable: every vertex expands at most ``fanout`` neighbours per hop (the rest is marked "has more
inputs/outputs" for on-demand expansion, as Atlas's lineage API does), the whole result is bounded by ``limit``
vertices and the search by ``timeout`` seconds; when a bound cuts the result, ``notes`` say what was cut.
Depth has no small default cap; cycles across runs terminate because visited vertices are never expanded twice.

Plain SELECTs (reports, exports, ad-hoc queries) are processes writing a temporary result of their own
(``$result:<process key>``). They are read-only leaves and can be many, so a trace leaves them out unless
``include_selects`` is set: then they are followed like any other process (and compete for ``fanout``).
"""

from __future__ import annotations

import difflib
import time
from typing import Any

from gremlin_python.process.graph_traversal import GraphTraversal, GraphTraversalSource
from gremlin_python.process.traversal import Direction as End
from gremlin_python.process.traversal import P, T, TextP

from lineage_platform.errors import GraphError
from lineage_platform.graph.dsl import STRONG, WEAK, LineageTraversalSource, __, lineage_source
from lineage_platform.graph.vocabulary import Key, LabelGroup, VertexLabel
from lineage_platform.model import RESULT_DATASET, Direction, Edge, Level, LineageGraph, Node, Process

_EDGE_KEYS = (
    Key.PROCESS,
    Key.STRENGTH,
    Key.TRANSFORM,
    Key.KEY_PATH,
)  # what a column lineage edge contributes
RESULT_PREFIX = RESULT_DATASET + ":"  # qualifiedName prefix of a SELECT's result and of its columns


LATEST_RUNS = 5  # the runs a trace carries per process, newest first


def resolve(g: GraphTraversalSource, name: str) -> dict[str, Any]:
    """The vertex with this qualifiedName, or a GraphError listing the closest existing names."""
    lg = lineage_source(g)
    found = lg.named(name.lower()).element_map().to_list()
    if found:
        return found[0]
    prefix = name.lower().split(".", 1)[0]
    candidates = (
        lg.V()
        .has(Key.QUALIFIED_NAME, TextP.starting_with(prefix))
        .has_label(P.within(*LabelGroup.DATASET, VertexLabel.COLUMN))
        .qualified_name()
        .limit(10_000)
        .to_list()
    )
    close = difflib.get_close_matches(name.lower(), candidates, n=5, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}?" if close else "check the name: db.table or db.table.column"
    raise GraphError(f"no table or column named {name!r} in the graph", hint=hint)


def _hop(
    level: Level, upstream: bool, include_weak: bool, include_selects: bool, fanout: int
) -> GraphTraversal:
    """Anonymous traversal from a vertex to its hop rows, at most ``fanout + 1`` of them.

    Table level: one row per process, ``{p: its elementMap, runs: its latest runs, n: [neighbour ids]}`` (at
    most ``fanout + 1`` neighbours each), so the hop brings the provenance too. Column level: the elementMap of
    each lineage edge (its ends and its properties). No step reads a path, so the engine tracks none. Without
    ``include_selects`` downstream hops skip SELECT processes (table level) and edges into their results (column
    level); upstream hops never reach them."""
    if level == "table":
        if upstream:
            processes, neighbours = __.writers(), __.inputs()
        else:
            processes, neighbours = __.readers(selects=include_selects), __.outputs()
        return (
            processes.project("p", "runs", "n")
            .by(__.element_map())
            .by(__.run_maps(LATEST_RUNS))
            .by(neighbours.id_().limit(fanout + 1).fold())
            .limit(fanout + 1)
        )
    if upstream and include_weak:  # a column also depends on what weakly shapes its whole table
        edges = __.union(__.flows_in(weak=True), __.table_of().flows_in(weak=True).has(Key.STRENGTH, WEAK))
    else:
        edges = __.flows_in(weak=include_weak) if upstream else __.flows_out(weak=include_weak)
    if not upstream and not include_selects:
        edges = edges.not_(__.in_v().has(Key.QUALIFIED_NAME, TextP.starting_with(RESULT_PREFIX)))
    return edges.limit(fanout + 1).element_map(*_EDGE_KEYS)


def trace(
    g: GraphTraversalSource,
    name: str,
    *,
    direction: Direction = "up",
    depth: int | None = None,
    level: Level | None = None,
    include_weak: bool = False,
    include_selects: bool = False,
    since: str | None = None,
    fanout: int = 200,
    limit: int = 100_000,
    timeout: float = 60.0,
) -> LineageGraph:
    """Trace the lineage of a table or column (``db.table`` or ``db.table.column``).

    ``level`` defaults to the level of the named vertex; a table traced at column level is traced from all its
    columns (listed in ``starts``); ``include_selects`` also follows plain SELECTs to
    their temporary results (read-only consumers). The result holds every reached vertex with its depth,
    the edges between them, and the provenance of every process on those edges.
    """
    g = lineage_source(g)
    root = resolve(g, name)
    level = level or ("column" if root[T.label] == VertexLabel.COLUMN else "table")
    result = LineageGraph(root=root[T.id], direction=direction, level=level)
    result.nodes[root[T.id]] = _node(root, 0)
    if level == "column" and root[T.label] != VertexLabel.COLUMN:
        for column in g.V(root[T.id]).columns_of().element_map().to_list():
            result.nodes[column[T.id]] = _node(column, 0)
            result.starts.append(column[T.id])
    directions = ("up", "down") if direction == "both" else (direction,)
    deadline = time.monotonic() + timeout
    provenance: dict[str, Process] = {}  # processes the table hops brought, by qualifiedName
    for way in directions:
        hop = _hop(level, way == "up", include_weak, include_selects, fanout)
        _search(g, result, way == "up", hop, depth, since, fanout, limit, deadline, provenance)
    _load_processes(g, result, provenance)
    return result


def _search(
    g: GraphTraversalSource,
    result: LineageGraph,
    upstream: bool,
    hop_rows: GraphTraversal,
    depth: int | None,
    since: str | None,
    fanout: int,
    limit: int,
    deadline: float,
    provenance: dict[str, Process],
) -> None:
    """Walk one direction level by level: one round trip per level brings the element maps of the vertices
    reached by the previous level together with their hops."""
    visited = {result.root, *result.starts}
    pending = dict.fromkeys(
        result.start_ids, 0
    )  # reached vertices (id -> depth) whose element maps the next round trip brings
    hops_of = hop_rows.fold()  # built once, sent with every level
    hop = 0
    while pending:
        if depth is not None and hop >= depth:
            break
        if time.monotonic() > deadline:
            result.notes.append(f"stopped after {hop} hops: time limit reached; expand the leaves to go on")
            break
        hop += 1
        rows = g.V(*pending).project("v", "out").by(__.element_map()).by(hops_of).to_list()
        hops: dict[Any, list[Edge]] = {}
        for row in rows:
            node = _add_node(result, row["v"], pending)
            hops[node.id], cut = _edges(node.id, row["out"], result.level, upstream, provenance, fanout)
            if cut:
                _mark_more(node, upstream)
        if since:
            hops = _runs_since(g, hops, since)
        reached: list[Any] = []
        for vertex, edges in hops.items():
            if len(edges) > fanout:
                edges = edges[:fanout]
                _mark_more(result.nodes[vertex], upstream)
            result.edges.extend(edges)
            for edge in edges:
                other = edge.source if upstream else edge.target
                if other not in visited:
                    visited.add(other)
                    reached.append(other)
        cut = len(result.nodes) + len(reached) > limit
        if cut:
            reached = reached[: max(0, limit - len(result.nodes))]
        pending = dict.fromkeys(reached, hop if upstream else -hop)
        if cut:  # only a cut leaves edges to vertices outside the result
            kept = result.nodes.keys() | pending.keys()
            result.edges = [e for e in result.edges if e.source in kept and e.target in kept]
            result.notes.append(f"result cut at {limit} vertices (--limit); expand the leaves to see more")
        if result.notes:
            break
    _load_nodes(g, result, pending)


def _edges(
    vertex: Any, rows: list[dict], level: Level, upstream: bool, provenance: dict[str, Process], fanout: int
) -> tuple[list[Edge], bool]:
    """The edges of one vertex's hop rows (see :func:`_hop`), and whether the hop's process limit cut them."""
    edges = []
    if level == "table":
        for row in rows:
            process = _process(row["p"], row["runs"])
            provenance[process.qualified_name] = process
            for other in row["n"]:
                source, target = (other, vertex) if upstream else (vertex, other)
                edges.append(Edge(source, target, process.qualified_name))
        return edges, len(rows) > fanout
    for row in rows:
        other = row[End.OUT if upstream else End.IN][T.id]
        source, target = (other, vertex) if upstream else (vertex, other)
        strength, transform = row.get(Key.STRENGTH, STRONG), row.get(Key.TRANSFORM)
        key_path = row.get(Key.KEY_PATH) or None
        edges.append(Edge(source, target, row[Key.PROCESS], strength, transform, key_path))
    return edges, False


def _mark_more(node: Node, upstream: bool) -> None:
    """Flag that the node has more inputs (or outputs) than the fan-out cap let in."""
    if upstream:
        node.more_inputs = True
    else:
        node.more_outputs = True


def _add_node(result: LineageGraph, element: dict, depths: dict[Any, int]) -> Node:
    """Add a reached vertex from its element map (a vertex reached again only takes the new depth)."""
    vertex = element[T.id]
    node = result.nodes.get(vertex)
    if node is None:
        node = result.nodes[vertex] = _node(element, depths[vertex])
    else:
        node.depth = depths[vertex]
    return node


def _load_nodes(g: GraphTraversalSource, result: LineageGraph, pending: dict[Any, int]) -> None:
    """Add the reached vertices no level expanded (bounds and leaves of the walk), in one round trip."""
    for element in g.V(*pending).element_map().to_list() if pending else []:
        _add_node(result, element, pending)


def _runs_since(g: LineageTraversalSource, hops: dict[Any, list[Edge]], since: str) -> dict[Any, list[Edge]]:
    """Keep only hops made by processes with a run that started at or after ``since`` (one round trip)."""
    names = {edge.process for edges in hops.values() for edge in edges}
    if not names:
        return hops
    active = set(g.processes(*names).where(__.runs(since)).qualified_name().to_list())
    return {vertex: [e for e in edges if e.process in active] for vertex, edges in hops.items()}


def _node(element: dict, depth: int) -> Node:
    props = {k: v for k, v in element.items() if isinstance(k, str)}
    return Node(element[T.id], element[T.label], props.get(Key.QUALIFIED_NAME, ""), depth, props)


def _process(element: dict, runs: list[dict]) -> Process:
    """A process's provenance from its element map and its runs' element maps."""
    props = {k: v for k, v in element.items() if isinstance(k, str)}
    return Process(
        element[T.id],
        props[Key.QUALIFIED_NAME],
        props.get(Key.OPERATION),
        props.get(Key.QUERY_TEXT),
        [{k: v for k, v in run.items() if isinstance(k, str)} for run in runs],
    )


def _load_processes(g: LineageTraversalSource, result: LineageGraph, provenance: dict[str, Process]) -> None:
    """Set the provenance of every process on the result's edges: the hops brought those of table lineage, one
    round trip fetches the others (column edges name their process)."""
    names = {e.process for e in result.edges}
    missing = names - provenance.keys()
    if missing:
        rows = (
            g.processes(*missing)
            .project("p", "runs")
            .by(__.element_map())
            .by(__.run_maps(LATEST_RUNS))
            .to_list()
        )
        provenance.update(
            (process.qualified_name, process) for process in (_process(r["p"], r["runs"]) for r in rows)
        )
    result.processes.update((name, provenance[name]) for name in names if name in provenance)
