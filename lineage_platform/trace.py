"""Lineage tracing: depth-first search up- or downstream over the lineage graph, at table or column level.

The search follows the DAG provenance method: mark a vertex visited, take its lineage edges, recurse into the
unvisited neighbours. It runs level by level over hop rows that one walk fetches in a single Gremlin request per
direction, whatever the depth: a ``repeat()`` over each vertex's capped neighbours brings every vertex the search
can expand with its element map and its hop rows (for table lineage each process's provenance too). The first
walk comes in the same request as the named vertex. The same traversals run unchanged on JanusGraph; no
traversal reads paths.

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
import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gremlin_python.process.graph_traversal import GraphTraversal, GraphTraversalSource
from gremlin_python.process.traversal import Direction as End
from gremlin_python.process.traversal import P, T, TextP

from lineage_platform.errors import GraphError, TraversalInterrupted
from lineage_platform.gc_pause import gc_paused
from lineage_platform.graph.dsl import STRONG, WEAK, LineageTraversalSource, __, lineage_source
from lineage_platform.graph.vocabulary import Key, LabelGroup, VertexLabel
from lineage_platform.model import RESULT_DATASET, Direction, Edge, Level, LineageGraph, Node, Process

_EDGE_KEYS = (
    Key.PROCESS,
    Key.STRENGTH,
    Key.TRANSFORM,
    Key.KEY_PATH,
)  # what a column lineage edge contributes
_PROCESS_KEYS = (Key.QUALIFIED_NAME, Key.OPERATION, Key.QUERY_TEXT)  # what a process's provenance reads of it
RESULT_PREFIX = RESULT_DATASET + ":"  # qualifiedName prefix of a SELECT's result and of its columns


LATEST_RUNS = 5  # the runs a trace carries per process, newest first
_TIMED_OUT = 598  # a Gremlin Server's status for a request past its evaluationTimeout


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


@dataclass(frozen=True)
class _Hops:
    """The anonymous traversals of one direction's hops, built once per set of options (see :func:`_hops`)."""

    rows: GraphTraversal  # from a vertex to one list: its hop rows, at most fanout + 1 of them
    neighbours: GraphTraversal  # from a vertex to the vertices a trace may expand after it (per-vertex cap)


@functools.lru_cache(maxsize=64)
def _hops(
    level: Level, upstream: bool, include_weak: bool, include_selects: bool, fanout: int, since: str | None
) -> _Hops:
    """The hop traversals of one direction.

    ``rows``: at table level one row per process, ``{p: its elementMap, runs: its latest runs, n: [neighbour
    ids]}`` (at most ``fanout + 1`` neighbours each), so the hop brings the provenance too; at column level the
    elementMap of each lineage edge (its ends and its properties). No step reads a path, so the engine tracks
    none. Without ``include_selects`` downstream hops skip SELECT processes (table level) and edges into their
    results (column level); upstream hops never reach them.

    ``neighbours``: every vertex the rows can make the search expand next, and no more than that: the ends of
    the first ``fanout`` edges the rows give (``fanout + 1`` at column level with ``since``, which the client
    applies before the cap), so a walk over it fetches what the search needs.
    """
    if level == "table":  # gremlinpython's steps append to a traversal: each use starts a fresh one
        if upstream:
            processes, ends = __.writers, __.inputs
        else:
            processes, ends = functools.partial(__.readers, selects=include_selects), __.outputs
        rows = (
            processes()
            .limit(fanout + 1)
            .project("p", "runs", "n")
            .by(__.element_map(*_PROCESS_KEYS))
            .by(__.run_maps(LATEST_RUNS))
            .by(ends().id_().limit(fanout + 1).fold())
        )
        reached = processes().limit(fanout + 1)
        if since:
            reached = reached.where(__.runs(since))
        return _Hops(rows.fold(), reached.flat_map(ends().limit(fanout + 1)).limit(fanout))
    rows = _column_edges(upstream, include_weak, include_selects).limit(fanout + 1).element_map(*_EDGE_KEYS)
    kept = _column_edges(upstream, include_weak, include_selects).limit(fanout + 1 if since else fanout)
    return _Hops(rows.fold(), kept.out_v() if upstream else kept.in_v())


def _column_edges(upstream: bool, include_weak: bool, include_selects: bool) -> GraphTraversal:
    """From a column to the lineage edges a column hop follows."""
    if upstream and include_weak:  # a column also depends on what weakly shapes its whole table
        return __.union(__.flows_in(weak=True), __.table_of().flows_in(weak=True).has(Key.STRENGTH, WEAK))
    edges = __.flows_in(weak=include_weak) if upstream else __.flows_out(weak=include_weak)
    if not upstream and not include_selects:
        edges = edges.not_(__.in_v().has(Key.QUALIFIED_NAME, TextP.starting_with(RESULT_PREFIX)))
    return edges


@gc_paused()  # a big result is ~a million objects next to the graph's records (see graph/gc_pause.py)
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
    directions = ("up", "down") if direction == "both" else (direction,)
    bounds = _Bounds(depth, fanout, limit, time.monotonic() + timeout)
    first: list[dict] = []  # the first direction's walk, when it came with the name
    if level is None:  # the level follows from the vertex: find it and walk in one request
        walk = _walk_either(directions[0] == "up", include_weak, include_selects, fanout, since, depth, limit)
        found = _named_walk(g, name, walk, bounds.time_left())
        root, first = found if found else (resolve(g, name), [])
    else:
        root = resolve(g, name)
    level = level or ("column" if root[T.label] == VertexLabel.COLUMN else "table")
    result = LineageGraph(root=root[T.id], direction=direction, level=level)
    result.nodes[root[T.id]] = _node(root, 0)
    if level == "column" and root[T.label] != VertexLabel.COLUMN:
        for column in g.V(root[T.id]).columns_of().element_map().to_list():
            result.nodes[column[T.id]] = _node(column, 0)
            result.starts.append(column[T.id])
    provenance: dict[str, Process] = {}  # processes the table hops brought, by qualifiedName
    active: dict[str, bool] = {}  # whether a process ran since ``since``, by qualifiedName
    leaves: dict[Any, int] = {}  # reached vertices no walk brought (cut by a bound), with their depths
    for way in directions:
        hops = _hops(level, way == "up", include_weak, include_selects, fanout, since)
        prefetched = first if way == directions[0] else []
        found = _Search(g, result, way == "up", hops, bounds, since, provenance, active, prefetched).run()
        leaves = {vertex: d for vertex, d in leaves.items() if vertex not in result.nodes}  # reached again
        leaves.update(found)
    _load_nodes(g, result, leaves)
    _load_processes(g, result, provenance)
    return result


@dataclass(frozen=True)
class _Bounds:
    """What bounds a trace: hops, neighbours per vertex and hop, vertices, and the monotonic deadline."""

    depth: int | None
    fanout: int
    limit: int
    deadline: float

    def time_left(self) -> int:
        """Milliseconds to the deadline, at least 1 (a request's evaluationTimeout)."""
        return max(1, int((self.deadline - time.monotonic()) * 1000))


class _Search:
    """One direction of a trace: a breadth-first search over hop rows that walks fetch in bulk.

    A walk (:func:`_walk`) brings, in one request, the element maps and hop rows of every vertex the search can
    expand from the vertices it starts at, within the remaining depth, so the number of requests does not grow
    with depth. The search itself applies the bounds exactly as a level-by-level search would; a vertex it reaches
    that the walk did not bring (the walk's order differs from the search's, or the walk was cut at ``limit``)
    starts another walk."""

    def __init__(
        self,
        g: LineageTraversalSource,
        result: LineageGraph,
        upstream: bool,
        hops: _Hops,
        bounds: _Bounds,
        since: str | None,
        provenance: dict[str, Process],
        active: dict[str, bool],
        fetched: Sequence[dict] = (),
    ) -> None:
        self.g, self.result, self.upstream, self.hops, self.bounds = g, result, upstream, hops, bounds
        self.since, self.provenance, self.active = since, provenance, active
        self.fetched: dict[Any, dict] = {}  # vertex id -> {v: its element map, out: its hop rows}
        self._keep(fetched)

    def run(self) -> dict[Any, int]:
        """Search level by level; the reached vertices left unexpanded (id -> depth) that no walk brought."""
        result, bounds = self.result, self.bounds
        visited = {result.root, *result.starts}
        pending = dict.fromkeys(result.start_ids, 0)  # reached vertices (id -> depth) to expand next
        hop = 0
        while pending:
            if bounds.depth is not None and hop >= bounds.depth:
                break
            remaining = None if bounds.depth is None else bounds.depth - hop
            if time.monotonic() > bounds.deadline or not self._fetch(pending, remaining):
                result.notes.append(
                    f"stopped after {hop} hops: time limit reached; expand the leaves to go on"
                )
                break
            hop += 1
            hops: dict[Any, list[Edge]] = {}
            for vertex in pending:
                row = self.fetched.get(vertex)
                if row is None:  # gone since it was reached
                    continue
                node = _add_node(result, row["v"], pending, vertex)
                hops[vertex], cut = _edges(
                    vertex, row["out"], result.level, self.upstream, self.provenance, bounds.fanout
                )
                if cut:
                    _mark_more(node, self.upstream)
            if self.since:
                hops = self._runs_since(hops)
            reached = self._follow(hops, visited)
            cut = len(result.nodes) + len(reached) > bounds.limit
            if cut:
                reached = reached[: max(0, bounds.limit - len(result.nodes))]
            pending = dict.fromkeys(reached, hop if self.upstream else -hop)
            if cut:  # only a cut leaves edges to vertices outside the result
                kept = result.nodes.keys() | pending.keys()
                result.edges = [e for e in result.edges if e.source in kept and e.target in kept]
                result.notes.append(
                    f"result cut at {bounds.limit} vertices (--limit); expand the leaves to see more"
                )
            if result.notes:
                break
        for vertex in [v for v in pending if v in self.fetched]:
            _add_node(result, self.fetched[vertex]["v"], pending, vertex)
            del pending[vertex]
        return pending

    def _fetch(self, pending: dict[Any, int], remaining: int | None) -> bool:
        """Walk from the pending vertices the search has no hop rows of, ``remaining`` levels deep at most,
        within the time left; False when the time ran out first."""
        missing = [vertex for vertex in pending if vertex not in self.fetched]
        if not missing:
            return True
        try:
            rows = _walk(
                self.g.with_("evaluationTimeout", self.bounds.time_left()),
                missing,
                self.hops,
                remaining,
                self.bounds.limit,
            )
        except Exception as exc:
            if _timed_out(exc):
                return False
            raise
        self._keep(rows)
        return True

    def _keep(self, rows: Sequence[dict]) -> None:
        """Keep the rows of a walk (the first walk's row of a vertex wins)."""
        for row in rows:
            self.fetched.setdefault(row["v"][T.id], row)

    def _follow(self, hops: dict[Any, list[Edge]], visited: set[Any]) -> list[Any]:
        """Add each vertex's edges (at most ``fanout``, else it has more) to the result; the new vertices."""
        reached: list[Any] = []
        fanout, result = self.bounds.fanout, self.result
        for vertex, edges in hops.items():
            if len(edges) > fanout:
                edges = edges[:fanout]
                _mark_more(result.nodes[vertex], self.upstream)
            result.edges.extend(edges)
            for edge in edges:
                other = edge.source if self.upstream else edge.target
                if other not in visited:
                    visited.add(other)
                    reached.append(other)
        return reached

    def _runs_since(self, hops: dict[Any, list[Edge]]) -> dict[Any, list[Edge]]:
        """Keep only hops made by processes with a run that started at or after ``since``. The processes not
        asked about yet are asked about with all those of the rows already fetched, in one round trip."""
        if any(e.process not in self.active for edges in hops.values() for e in edges):
            names = {e.process for edges in hops.values() for e in edges} | {
                name
                for row in self.fetched.values()
                for name in _row_processes(row["out"], self.result.level)
            }
            names -= self.active.keys()
            ran = set(self.g.processes(*names).where(__.runs(self.since)).qualified_name().to_list())
            self.active.update((name, name in ran) for name in names)
        return {vertex: [e for e in edges if self.active[e.process]] for vertex, edges in hops.items()}


def _walk(
    g: LineageTraversalSource, starts: list[Any], hops: _Hops, remaining: int | None, cap: int
) -> list[dict]:
    """One request: ``{v: element map, out: hop rows}`` of the starts and of every vertex their hops reach
    within ``remaining - 1`` further hops (all of them if None), breadth-first, at most ``cap`` vertices."""
    return _walk_steps(g.V(*starts), hops, remaining, cap).to_list()


def _walk_steps(start: GraphTraversal, hops: _Hops, remaining: int | None, cap: int) -> GraphTraversal:
    """The walk of :func:`_walk` appended to ``start`` (vertices).

    The ``dedup()`` inside ``repeat()`` expands each vertex once whatever the order the walk runs in, and
    ``times()`` bounds it when the trace has a depth. A server that walks depth-first may reach a vertex first
    by a longer path and, at the bound, leave out neighbours a shorter path would reach: the search then walks
    again from those (correct, one more request). Without the dedup, a bounded walk would expand a vertex again
    at every depth a path reaches it (a warehouse's 20-hop column trace: 3x slower). ``flatMap()`` gives each
    vertex's hop its own fan-out cap (its child sees bulk 1)."""
    if remaining is None:
        start = start.emit().repeat(__.flat_map(hops.neighbours).dedup())
    elif remaining > 1:
        start = start.emit().repeat(__.flat_map(hops.neighbours).dedup()).times(remaining - 1)
    return start.dedup().limit(cap).project("v", "out").by(__.element_map()).by(hops.rows)


@functools.lru_cache(maxsize=64)
def _walk_either(
    upstream: bool,
    include_weak: bool,
    include_selects: bool,
    fanout: int,
    since: str | None,
    remaining: int | None,
    cap: int,
) -> GraphTraversal:
    """From a vertex to the rows of the walk from it at its own level (column for a column, else table); built
    once per set of options, as :func:`_hops` builds the hops."""
    column, table = (
        _walk_steps(
            __.start(), _hops(level, upstream, include_weak, include_selects, fanout, since), remaining, cap
        )
        for level in ("column", "table")
    )
    return __.choose(__.has_label(VertexLabel.COLUMN), column, table)


def _named_walk(
    g: LineageTraversalSource, name: str, walk: GraphTraversal, left: int
) -> tuple[dict, list[dict]] | None:
    """One request: the vertex named ``name`` (its element map) and the rows of its ``walk`` (see
    :func:`_walk_either`), each a result of its own (a server sends them in batches, however big the walk);
    None when no vertex has that name or the time ran out."""
    try:
        found = (
            g.with_("evaluationTimeout", left)
            .named(name.lower())
            .limit(1)
            .union(__.element_map(), walk)
            .to_list()
        )
    except Exception as exc:
        if _timed_out(exc):
            return None
        raise
    roots = [row for row in found if T.id in row]  # the walk's rows are {v: ..., out: ...}
    return (roots[0], [row for row in found if T.id not in row]) if roots else None


def _timed_out(exc: Exception) -> bool:
    """Whether a request failed because it ran past its evaluationTimeout (in process or on a server)."""
    return isinstance(exc, TraversalInterrupted) or getattr(exc, "status_code", None) == _TIMED_OUT


def _row_processes(rows: list[dict], level: Level) -> list[str]:
    """The qualifiedNames of the processes behind one vertex's hop rows."""
    if level == "table":
        return [row["p"][Key.QUALIFIED_NAME] for row in rows]
    return [row[Key.PROCESS] for row in rows]


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


def _add_node(result: LineageGraph, element: dict, depths: dict[Any, int], vertex: Any = None) -> Node:
    """Add a reached vertex (id ``vertex`` when the caller knows it) from its element map (a vertex reached
    again only takes the new depth)."""
    if vertex is None:
        vertex = element[T.id]
    node = result.nodes.get(vertex)
    if node is None:
        node = result.nodes[vertex] = _node(element, depths[vertex])
    else:
        node.depth = depths[vertex]
    return node


def _load_nodes(g: GraphTraversalSource, result: LineageGraph, pending: dict[Any, int]) -> None:
    """Add the reached vertices no walk brought (those a bound left unexpanded), in one round trip."""
    for element in g.V(*pending).element_map().to_list() if pending else []:
        _add_node(result, element, pending)


def _properties(element: dict) -> dict[str, Any]:
    """A vertex's properties from its element map (whose only other keys are ``T.id`` and ``T.label``)."""
    props = element.copy()  # (a copy keeps the keys' hashes: T's members hash in Python, slowly)
    del props[T.id], props[T.label]
    return props


def _node(element: dict, depth: int) -> Node:
    props = element.copy()
    vertex, label = props.pop(T.id), props.pop(T.label)
    return Node(vertex, label, props.get(Key.QUALIFIED_NAME, ""), depth, props)


def _process(element: dict, runs: list[dict]) -> Process:
    """A process's provenance from its element map and its runs' element maps."""
    return Process(
        element[T.id],
        element[Key.QUALIFIED_NAME],
        element.get(Key.OPERATION),
        element.get(Key.QUERY_TEXT),
        [_properties(run) for run in runs],
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
            .by(__.element_map(*_PROCESS_KEYS))
            .by(__.run_maps(LATEST_RUNS))
            .to_list()
        )
        provenance.update(
            (process.qualified_name, process) for process in (_process(r["p"], r["runs"]) for r in rows)
        )
    result.processes.update((name, provenance[name]) for name in names if name in provenance)
