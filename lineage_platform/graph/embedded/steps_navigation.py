"""Moving along edges: out/in/both, outE/inE/bothE, outV/inV/otherV/bothV."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from lineage_platform.errors import TraversalError
from lineage_platform.graph.embedded.memgraph import EdgeRec, VertexRec
from lineage_platform.graph.embedded.pipeline import Compiler, StepCall, StepFn, Trav, step

EdgeSource = Callable[[VertexRec], Iterable[EdgeRec]]


def edge_source(attribute: str, labels: tuple[str, ...], snapshot: bool) -> EdgeSource:
    """Edges of a vertex in one direction, optionally restricted to labels; snapshotted while the graph is written."""
    if len(labels) == 1:
        label = labels[0]

        def one_label(v: VertexRec) -> Iterable[EdgeRec]:
            bucket = getattr(v, attribute).get(label)
            if not bucket:
                return ()
            return list(bucket) if snapshot else bucket

        return one_label

    def many(v: VertexRec) -> Iterable[EdgeRec]:
        adjacency = getattr(v, attribute)
        chosen = labels or tuple(adjacency)
        return [e for label in chosen for e in adjacency.get(label, ())]

    return many


def not_a_vertex(step_name: str, obj: object) -> TraversalError:
    return TraversalError(
        f"{step_name}() needs a vertex but got {type(obj).__name__} {obj!r}",
        hint=f"apply {step_name}() to vertices (use outV()/inV() to get from an edge to a vertex)",
    )


def _labels(call: StepCall) -> tuple[str, ...]:
    for label in call.args:
        if not isinstance(label, str):
            raise TraversalError(
                f"{call.name}() edge labels must be strings, got {label!r}", hint="pass label names"
            )
    return tuple(call.args)


def edges_of(source: EdgeSource, obj: object, step_name: str) -> Iterable[EdgeRec]:
    """``source``'s edges of ``obj``; a clear error when ``obj`` is no vertex."""
    try:
        return source(obj)  # type: ignore[arg-type]
    except AttributeError:
        raise not_a_vertex(step_name, obj) from None


def adjacent_sources(name: str, labels: tuple[str, ...], snapshot: bool) -> list[tuple[EdgeSource, str]]:
    """(edges of a vertex, the attribute naming the far end) for each direction ``name`` (out/in/both) walks."""
    sources = []
    if name in ("out", "both"):
        sources.append((edge_source("out_e", labels, snapshot), "in_v"))
    if name in ("in", "both"):
        sources.append((edge_source("in_e", labels, snapshot), "out_v"))
    return sources


@step("out", "in", "both")
def compile_adjacent(call: StepCall, c: Compiler) -> StepFn:
    """Adjacent vertices."""
    labels = _labels(call)
    check_cancelled = c.check_cancelled
    sources = adjacent_sources(call.name, labels, c.mutating)
    if len(sources) == 1 and sources[0][1] == "in_v":
        out_edges = sources[0][0]

        def run_out(travs: Iterator[Trav]) -> Iterator[Trav]:
            for t in travs:
                check_cancelled()
                try:
                    edges = out_edges(t.obj)
                except AttributeError:
                    raise not_a_vertex(call.name, t.obj) from None
                for e in edges:
                    yield t.split(e.in_v)

        return run_out
    if len(sources) == 1:
        in_edges = sources[0][0]

        def run_in(travs: Iterator[Trav]) -> Iterator[Trav]:
            for t in travs:
                check_cancelled()
                try:
                    edges = in_edges(t.obj)
                except AttributeError:
                    raise not_a_vertex(call.name, t.obj) from None
                for e in edges:
                    yield t.split(e.out_v)

        return run_in

    def run_both(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            check_cancelled()
            for source, end in sources:
                for e in edges_of(source, t.obj, call.name):
                    yield t.split(getattr(e, end))

    return run_both


@step("outE", "inE", "bothE")
def compile_incident(call: StepCall, c: Compiler) -> StepFn:
    """Incident edges."""
    labels = _labels(call)
    sources = []
    if call.name in ("outE", "bothE"):
        sources.append(edge_source("out_e", labels, c.mutating))
    if call.name in ("inE", "bothE"):
        sources.append(edge_source("in_e", labels, c.mutating))
    check_cancelled = c.check_cancelled

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            check_cancelled()
            for source in sources:
                try:
                    edges = source(t.obj)
                except AttributeError:
                    raise not_a_vertex(call.name, t.obj) from None
                for e in edges:
                    yield t.split(e)

    return run


@step("outV", "inV", "bothV", "otherV")
def compile_edge_vertices(call: StepCall, c: Compiler) -> StepFn:
    """Vertices of an edge; otherV() is the end the traverser did not come from."""
    name = call.name

    def ends(t: Trav) -> list[VertexRec]:
        e = t.obj
        if not isinstance(e, EdgeRec):
            raise TraversalError(
                f"{name}() needs an edge but got {type(e).__name__} {e!r}", hint=f"apply {name}() to edges"
            )
        if name == "outV":
            return [e.out_v]
        if name == "inV":
            return [e.in_v]
        if name == "bothV":
            return [e.out_v, e.in_v]
        previous = t.path.prev.obj if t.path is not None and t.path.prev is not None else None
        if previous is None:
            raise TraversalError(
                "otherV() needs to know the vertex the edge was reached from",
                hint="reach the edge from a vertex (e.g. outE()/bothE()) before otherV()",
            )
        return [e.in_v if previous is e.out_v else e.out_v]

    return lambda travs: (t.split(v) for t in travs for v in ends(t))
