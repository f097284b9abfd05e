"""Start steps (V, E, inject) and writes (addV, addE, property, drop)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from gremlin_python.process.traversal import Cardinality, CardinalityValue, Pop, T
from gremlin_python.structure.graph import Edge, Element, Vertex

from lineage_platform.errors import TraversalError
from lineage_platform.graph.embedded.access import flatten_ids, lookup
from lineage_platform.graph.embedded.memgraph import EdgeRec, MemGraph, PropRec, VertexPropRec, VertexRec
from lineage_platform.graph.embedded.modulation import NOTHING
from lineage_platform.graph.embedded.pipeline import SEED, Compiler, StepCall, StepFn, Trav, as_bytecode, step
from lineage_platform.graph.embedded.predicates import equality_values
from lineage_platform.graph.embedded.scoping import select_value
from lineage_platform.graph.embedded.steps_filter import element_test


def _candidates(graph: MemGraph, folded: list[StepCall], ids: list[Any]) -> Callable[[], Iterable[VertexRec]]:
    """The cheapest source of vertex candidates for V(ids).has(...): ids, an exact-value index, a label, or all."""
    if ids:
        return lambda: [v for v in (lookup(graph.vertices, i) for i in ids) if v is not None]
    for call in folded:
        if call.name == "has" and len(call.args) in (2, 3) and isinstance(call.args[-2], str):
            values = equality_values(call.args[-1])
            key = call.args[-2]
            if values is not None and key in graph.indexed_keys:

                def by_index(key: str = key, values: list[Any] = values) -> list[VertexRec]:
                    found: dict[Any, VertexRec] = {}
                    for value in values:
                        found.update((v.id, v) for v in graph.vertices_with(key, value) or ())
                    return list(found.values())

                return by_index
    for call in folded:
        label_arg = None
        if call.name == "hasLabel" and len(call.args) >= 1:
            label_arg = list(dict.fromkeys(call.args)) if all(isinstance(a, str) for a in call.args) else None
        elif call.name == "has" and len(call.args) == 3 and isinstance(call.args[0], str):
            label_arg = [call.args[0]]
        if label_arg:

            def by_label(labels: list[str] = label_arg) -> list[VertexRec]:
                return [v for label in labels for v in list(graph.vertices_by_label.get(label, {}).values())]

            return by_label
    return lambda: list(graph.vertices.values())


@step("V")
def compile_v(call: StepCall, c: Compiler) -> StepFn:
    """V(ids...): vertices by id or all, using indexes for has()/hasLabel() filters folded into it."""
    ids = flatten_ids(call.args)
    candidates = _candidates(c.graph, call.folded, ids)
    tests = [element_test(f, c) for f in call.folded]
    check_cancelled = c.check_cancelled

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            check_cancelled()
            for v in candidates():
                if all(test(v) for test in tests):
                    yield c.spawn(t, v)

    return run


@step("E")
def compile_e(call: StepCall, c: Compiler) -> StepFn:
    """E(ids...): edges by id or all."""
    ids = flatten_ids(call.args)
    tests = [element_test(f, c) for f in call.folded]
    graph = c.graph

    def edges() -> list[EdgeRec]:
        if ids:
            return [e for e in (lookup(graph.edges, i) for i in ids) if e is not None]
        return list(graph.edges.values())

    check_cancelled = c.check_cancelled

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            check_cancelled()
            for e in edges():
                if all(test(e) for test in tests):
                    yield c.spawn(t, e)

    return run


def attach(value: Any, graph: MemGraph) -> Any:
    """A detached vertex/edge given as a value refers to the stored element with its id (when there is one)."""
    if isinstance(value, Vertex):
        return graph.vertices.get(value.id, value)
    if isinstance(value, Edge):
        return graph.edges.get(value.id, value)
    return value


@step("inject")
def compile_inject(call: StepCall, c: Compiler) -> StepFn:
    """inject(values...): the values once, ahead of the incoming traversers."""
    values = [attach(v, c.graph) for v in call.args]

    if call.starts_child:
        # in a nested traversal the incoming traverser is queued before the injected values, as in TinkerPop
        return lambda travs: (
            r for t in travs for r in ([t] if t.obj is not SEED else []) + [c.spawn(t, v) for v in values]
        )

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        injected = False
        for t in travs:
            if not injected:
                injected = True
                yield from (c.spawn(t, v) if t.obj is SEED else c.start(v) for v in values)
            if t.obj is not SEED:
                yield t
        if not injected:
            yield from (c.start(v) for v in values)

    return run


def evaluate_arg(value: Any, t: Trav, c: Compiler, step_name: str) -> Any:
    """An argument that may be a traversal: its first result for ``t``."""
    nested = as_bytecode(value)
    if nested is None:
        return value
    result = c.compile(nested).first(t)
    if result is None:
        raise TraversalError(
            f"the traversal given to {step_name}() produced no value",
            hint="make the argument traversal productive",
        )
    return result.obj


def _split_props(folded: list[StepCall]) -> tuple[list[Any], list[StepCall]]:
    """Separate property(T.id/T.label, x) calls (which set identity at creation) from plain ones."""
    identity: list[Any] = []
    rest: list[StepCall] = []
    for call in folded:
        if len(call.args) == 2 and isinstance(call.args[0], T):
            identity.append(call.args)
        else:
            rest.append(call)
    return identity, rest


@step("addV")
def compile_add_v(call: StepCall, c: Compiler) -> StepFn:
    """addV(label?) with any property() calls that follow it."""
    identity, props = _split_props(call.folded)
    setters = [compile_property(p, c) for p in props]
    label_arg = call.args[0] if call.args else "vertex"

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            label, vid = evaluate_arg(label_arg, t, c, "addV"), None
            for token, value in identity:
                value = evaluate_arg(value, t, c, "addV")
                if token == T.label:
                    label = value
                else:
                    vid = value
            _check_label(label, "addV")
            nt = c.spawn(t, c.graph.add_vertex(label, vid))
            for setter in setters:
                setter(nt, t)
            yield nt

    return run


def _check_label(label: Any, step_name: str) -> None:
    if not isinstance(label, str) or not label:
        raise TraversalError(
            f"{step_name}() needs a non-empty string label, got {label!r}", hint="pass a label"
        )


def _endpoint(value: Any, t: Trav, c: Compiler, step_name: str, which: str) -> VertexRec:
    """Resolve from()/to() of addE: a name select() resolves (side effect or as-label), a traversal, a vertex or a
    vertex id."""
    if isinstance(value, str):
        selected = select_value(t, value, Pop.last, step_name, c.side_effects)
        if selected is not NOTHING:
            value = selected
    else:
        value = evaluate_arg(value, t, c, step_name)
    if isinstance(value, VertexRec):
        return value
    found = lookup(c.graph.vertices, value.id if isinstance(value, Element) else value)
    if found is None:
        raise TraversalError(
            f"{step_name}().{which}() does not resolve to a vertex: {value!r}",
            hint=f"pass an as-label, a traversal or a vertex to {which}()",
        )
    return found


@step("addE")
def compile_add_e(call: StepCall, c: Compiler) -> StepFn:
    """addE(label).from(x).to(y): x/y default to the current vertex."""
    identity, props = _split_props(call.folded)
    setters = [compile_property(p, c) for p in props]
    label_arg = call.args[0] if call.args else None
    if label_arg is None:
        raise TraversalError("addE() needs an edge label", hint="write addE('label')")
    ends: dict[str, Any] = {}
    for name, args in call.modulators:
        if name in ("from", "to"):
            ends[name] = args[0]

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            label, eid = evaluate_arg(label_arg, t, c, "addE"), None
            for token, value in identity:
                if token == T.label:
                    label = evaluate_arg(value, t, c, "addE")
                else:
                    eid = evaluate_arg(value, t, c, "addE")
            _check_label(label, "addE")
            out_v = _endpoint(ends["from"], t, c, "addE", "from") if "from" in ends else t.obj
            in_v = _endpoint(ends["to"], t, c, "addE", "to") if "to" in ends else t.obj
            if not isinstance(out_v, VertexRec) or not isinstance(in_v, VertexRec):
                raise TraversalError(
                    "addE() needs vertices at both ends", hint="add from()/to() or start addE() from a vertex"
                )
            nt = c.spawn(t, c.graph.add_edge(label, out_v, in_v, eid))
            for setter in setters:
                setter(nt, t)
            yield nt

    return run


Setter = Callable[[Trav, Trav], None]


def compile_property(call: StepCall, c: Compiler) -> Setter:
    """A function applying property(...) to the element of its first traverser (values read from the second)."""
    args = list(call.args)
    cardinality = args.pop(0) if args and isinstance(args[0], Cardinality) else None
    if len(args) == 1 and args[0] is None:
        return lambda target, source: None
    if len(args) == 1 and isinstance(args[0], dict):
        pairs = list(args[0].items())

        def set_all(target: Trav, source: Trav) -> None:
            for key, value in pairs:
                set_property(target.obj, cardinality, key, value, [], source, c)

        return set_all
    if len(args) < 2 or len(args) % 2:
        raise TraversalError(
            f"property() takes a key and a value (then meta key/value pairs), got {call.args!r}",
            hint="write property('key', value) or property(Cardinality.list_, 'key', value, 'metaKey', metaValue)",
        )
    key, value, meta = args[0], args[1], args[2:]

    def setter(target: Trav, source: Trav) -> None:
        set_property(target.obj, cardinality, key, value, meta, source, c)

    return setter


def set_property(
    obj: Any, cardinality: Any, key: Any, value: Any, meta: list[Any], source: Trav, c: Compiler
) -> None:
    """Set one property on a vertex (honouring cardinality), an edge or a vertex property (meta-property)."""
    graph = c.graph
    if isinstance(value, CardinalityValue):
        _, cardinality, value = value.source_instructions[0]
    key = evaluate_arg(key, source, c, "property")
    value = evaluate_arg(value, source, c, "property")
    if isinstance(key, T):
        raise TraversalError(
            f"property({key}, ...) can only be set when the element is created",
            hint="put property(T.id/T.label, ...) right after addV()/addE()",
        )
    if not isinstance(key, str):
        raise TraversalError(f"property() key must be a string, got {key!r}", hint="use a string key")
    if isinstance(obj, VertexRec):
        if cardinality is not None and graph.rules is not None:
            graph.rules.check_cardinality(key, cardinality.name.rstrip("_"))
        existing = obj.props_of(key)
        if value is None:
            for vp in list(existing):
                graph.drop_vertex_property(vp)
            return
        if cardinality in (None, Cardinality.single):
            for vp in list(existing):
                graph.drop_vertex_property(vp)
        elif cardinality == Cardinality.set_:
            same = [vp for vp in existing if type(vp.value) is type(value) and vp.value == value]
            if same:
                _set_meta(graph, same[0], meta, source, c)
                return
        vpid, meta = _property_id(meta, source, c)
        vp = graph.add_vertex_property(obj, key, value, vpid)
        _set_meta(graph, vp, meta, source, c)
    elif isinstance(obj, EdgeRec):
        if cardinality not in (None, Cardinality.single) or meta:
            raise TraversalError(
                "edge properties are single-valued and have no meta-properties",
                hint="drop the cardinality and meta arguments",
            )
        if value is None:
            graph.drop_edge_property(obj, key)
        else:
            graph.set_edge_property(obj, key, value)
    elif isinstance(obj, VertexPropRec):
        if value is None:
            graph.drop_meta(obj, key)
        else:
            graph.set_meta(obj, key, value)
    else:
        raise TraversalError(
            f"property() needs a graph element but got {type(obj).__name__} {obj!r}",
            hint="apply property() to vertices, edges or vertex properties",
        )


def _property_id(meta: list[Any], source: Trav, c: Compiler) -> tuple[Any, list[Any]]:
    """A vertex property's own id given as ``T.id, x`` among its meta pairs (as TinkerGraph takes it), and the
    remaining meta pairs; the id is None when not given."""
    vpid, rest = None, []
    for i in range(0, len(meta), 2):
        if meta[i] == T.id:
            vpid = evaluate_arg(meta[i + 1], source, c, "property")
        else:
            rest += meta[i : i + 2]
    return vpid, rest


def _set_meta(graph: MemGraph, vp: VertexPropRec, meta: list[Any], source: Trav, c: Compiler) -> None:
    for i in range(0, len(meta), 2):
        mkey, mvalue = meta[i], evaluate_arg(meta[i + 1], source, c, "property")
        if mvalue is None:
            graph.drop_meta(vp, mkey)
        else:
            graph.set_meta(vp, mkey, mvalue)


@step("property")
def compile_property_step(call: StepCall, c: Compiler) -> StepFn:
    """property(...) on the current element; passes the traverser on."""
    setter = compile_property(call, c)

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            setter(t, t)
            yield t

    return run


@step("drop")
def compile_drop(call: StepCall, c: Compiler) -> StepFn:
    """drop(): remove elements/properties (collects first, so iterators stay valid); produces nothing."""
    graph = c.graph

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in list(travs):
            obj = t.obj
            if isinstance(obj, VertexRec):
                graph.drop_vertex(obj)
            elif isinstance(obj, EdgeRec):
                graph.drop_edge(obj)
            elif isinstance(obj, VertexPropRec):
                graph.drop_vertex_property(obj)
            elif isinstance(obj, PropRec):
                if isinstance(obj.element, EdgeRec):
                    graph.drop_edge_property(obj.element, obj.key)
                else:
                    graph.drop_meta(obj.element, obj.key)
            else:
                raise TraversalError(
                    f"drop() needs a graph element or property but got {obj!r}",
                    hint="apply drop() to vertices, edges or properties",
                )
        return
        yield

    return run
