"""mergeV() / mergeE(): upsert by a search map, with option(onCreate|onMatch|outV|inV)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from gremlin_python.process.traversal import CardinalityValue, Direction, Merge, T
from gremlin_python.statics import long
from gremlin_python.structure.graph import Element

from lineage_platform.errors import TraversalError
from lineage_platform.graph.embedded.access import lookup
from lineage_platform.graph.embedded.memgraph import MISSING, EdgeRec, VertexPropRec, VertexRec
from lineage_platform.graph.embedded.pipeline import SEED, Compiler, StepCall, StepFn, Trav, as_bytecode, step
from lineage_platform.graph.embedded.steps_graph import set_property
from lineage_platform.graph.embedded.values import gremlin_eq

_DIRECTIONS = (Direction.OUT, Direction.IN)
_ABSENT = object()  # a search map without T.id / T.label
_PLAIN_TYPES = frozenset({str, int, long, float, bool})  # values a merge map stores as they are


def _resolve_map(arg: Any, t: Trav, c: Compiler, step_name: str) -> dict[Any, Any] | None:
    """A merge/option argument for traverser ``t``: a map, a traversal yielding one, or null (None)."""
    nested = as_bytecode(arg)
    if nested is not None:
        result = c.compile(nested).first(t)
        arg = None if result is None else result.obj
    if arg is None:
        return None
    if isinstance(arg, (Element, VertexRec, EdgeRec)):
        raise TraversalError(
            f"The incoming traverser for {step_name} cannot be an Element",
            hint="give mergeV()/mergeE() a map (or a traversal producing one)",
        )
    if not isinstance(arg, dict):
        raise TraversalError(
            f"{step_name} needs a map argument, got {type(arg).__name__} {arg!r}",
            hint="pass a map such as [name: 'x']",
        )
    return arg


def _check_keys(values: dict[Any, Any], allowed_tokens: tuple[Any, ...]) -> None:
    for key, value in values.items():
        if isinstance(key, str):
            if key.startswith("~"):
                raise TraversalError(
                    f"Property key can not be a hidden key: {key}", hint="remove keys starting with ~"
                )
            continue  # a string key is no token: the checks below would only compare it with each
        if key in (T.id, T.label) and key not in allowed_tokens:
            hidden = "~id" if key == T.id else "~label"
            raise TraversalError(
                f"Property key can not be a hidden key: {hidden}", hint=f"remove {key} from the map"
            )
        elif key not in allowed_tokens:
            raise TraversalError(
                f"merge map key {key!r} is not allowed here", hint="use T.id, T.label or strings"
            )
        if key == T.label and (not isinstance(value, str) or value.startswith("~")):
            raise TraversalError(
                f"Label can not be a hidden key: {value}", hint="use a non-empty label without ~"
            )


def _check_override(search: dict[Any, Any], create: dict[Any, Any]) -> None:
    for key, value in create.items():
        if key in search and not gremlin_eq(search[key], value):
            raise TraversalError(
                "option(onCreate) cannot override values from merge() argument",
                hint=f"drop {key!r} from onCreate or make it equal to the merge() value",
            )


def _property_matcher(search: dict[Any, Any]) -> Callable[[Any], bool]:
    """A test of an element against a search map, with the map's keys sorted out once (a merge compares one map
    with many candidates: parallel edges, or every vertex of a label)."""
    ident = search.get(T.id, _ABSENT)
    label = search.get(T.label, _ABSENT)
    pairs = [
        (key, value.source_instructions[0][2] if isinstance(value, CardinalityValue) else value)
        for key, value in search.items()
        if isinstance(key, str)
    ]

    def matches(element: Any) -> bool:
        if ident is not _ABSENT and not gremlin_eq(element.id, ident) and str(element.id) != str(ident):
            return False
        if label is not _ABSENT and element.label != label:
            return False
        if isinstance(element, VertexRec):
            return all(
                any(_same(vp.value, expected) for vp in element.props_of(key)) for key, expected in pairs
            )
        return all(
            (found := element.prop(key)) is not MISSING and _same(found, expected) for key, expected in pairs
        )

    return matches


def _same(value: Any, expected: Any) -> bool:
    """gremlin_eq, with the common case (two strings) decided without it."""
    if type(value) is str and type(expected) is str:
        return value == expected
    return gremlin_eq(value, expected)


def _apply_properties(element: Any, values: dict[Any, Any], t: Trav, c: Compiler, default: Any) -> None:
    for key, value in values.items():
        if isinstance(key, str):
            set_property(element, default, key, value, [], t, c)


def _set_created(element: VertexRec | EdgeRec, values: dict[Any, Any], t: Trav, c: Compiler) -> None:
    """The properties of an element the merge has just created: a plain value goes straight to the store (the
    element has no value to replace and no cardinality is asked for); any other (null, a cardinality value) is set
    as property() sets it."""
    add = c.graph.add_vertex_property if isinstance(element, VertexRec) else c.graph.set_edge_property
    for key, value in values.items():
        if type(value) in _PLAIN_TYPES and isinstance(key, str):
            add(element, key, value)
        elif isinstance(key, str):
            set_property(element, None, key, value, [], t, c)


def _on_match(
    options: dict[Any, Any], t: Trav, element: Any, c: Compiler, step_name: str
) -> dict[Any, Any] | None:
    """The onMatch map for ``element``. An onMatch traversal reads the incoming traverser mid-traversal, the matched
    element when the merge step starts the traversal (there is no incoming object then), as in TinkerPop, which
    refuses an incoming element there (the traversal could not tell it from the match)."""
    arg = options[Merge.on_match][0]
    if t.obj is SEED:
        source = c.spawn(t, element)
    elif as_bytecode(arg) is not None and isinstance(t.obj, (VertexRec, EdgeRec, VertexPropRec)):
        raise TraversalError(
            f"The incoming traverser for {step_name} cannot be an Element",
            hint="start the traversal with the merge step, or map the element to a map before it",
        )
    else:
        source = t
    on_match = _resolve_map(arg, source, c, step_name)
    if on_match:
        _check_keys(on_match, ())
    return on_match


def _options(call: StepCall, create_tokens: tuple[Any, ...]) -> dict[Any, Any]:
    """The option(Merge.x, value) modulators; constant onCreate/onMatch maps are validated up front."""
    options: dict[Any, Any] = {}
    for args in call.modulator_args("option"):
        if len(args) < 2 or not isinstance(args[0], Merge):
            raise TraversalError(
                f"option() of {call.name}() takes a Merge token and a value",
                hint="option(Merge.onCreate, [..])",
            )
        options[args[0]] = args[1:]
        if isinstance(args[1], dict) and args[0] in (Merge.on_create, Merge.on_match):
            _check_keys(args[1], create_tokens if args[0] == Merge.on_create else ())
    return options


def _search_arg(call: StepCall) -> Callable[[Trav], Any]:
    if call.args:
        return lambda t: call.args[0]
    return lambda t: t.obj


def _vertex_candidates(c: Compiler, search: dict[Any, Any]) -> Iterable[VertexRec]:
    graph = c.graph
    if T.id in search:
        found = lookup(graph.vertices, search[T.id])
        return [found] if found is not None else []
    for key, value in search.items():
        if isinstance(key, str) and key in graph.indexed_keys and not isinstance(value, CardinalityValue):
            return list(graph.vertices_with(key, value) or ())
    if T.label in search:
        return list(graph.vertices_by_label.get(search[T.label], {}).values())
    return list(graph.vertices.values())


@step("mergeV")
def compile_merge_v(call: StepCall, c: Compiler) -> StepFn:
    """mergeV(map|traversal|null): the matching vertices (onMatch applied) or one new vertex (onCreate)."""
    options = _options(call, (T.id, T.label))
    search_of = _search_arg(call)
    name = "MergeVertexStep"

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            search = _resolve_map(search_of(t), t, c, name) or {}
            _check_keys(search, (T.id, T.label))
            matches = _property_matcher(search)
            matched = [v for v in _vertex_candidates(c, search) if matches(v)]
            if matched:
                for v in matched:
                    if Merge.on_match in options:
                        on_match = _on_match(options, t, v, c, name)
                        if on_match:
                            default = options[Merge.on_match][1] if len(options[Merge.on_match]) > 1 else None
                            _apply_properties(v, on_match, t, c, default)
                    yield c.spawn(t, v)
                continue
            create = dict(search)
            if Merge.on_create in options:
                extra = _resolve_map(options[Merge.on_create][0], t, c, name)
                if extra:
                    _check_keys(extra, (T.id, T.label))
                    _check_override(search, extra)
                    create.update(extra)
            v = c.graph.add_vertex(create.get(T.label, "vertex"), create.get(T.id))
            _set_created(v, create, t, c)
            yield c.spawn(t, v)

    return run


def _endpoint(value: Any, options: dict[Any, Any], t: Trav, c: Compiler, which: Merge) -> VertexRec:
    if value == which:
        if which not in options:
            raise TraversalError(
                f"mergeE() uses {which} but has no option({which}, ...)", hint="add the option"
            )
        value = options[which][0]
        nested = as_bytecode(value)
        if nested is not None:
            result = c.compile(nested).first(t)
            value = None if result is None else result.obj
    if isinstance(value, VertexRec):
        return value
    if isinstance(value, dict):
        _check_keys(value, (T.id, T.label))
        matches = _property_matcher(value)
        found = next((v for v in _vertex_candidates(c, value) if matches(v)), None)
        if found is None:
            raise TraversalError(
                f"Vertex could not be resolved from mergeE option({which}): {value!r}",
                hint="create the vertex before mergeE()",
            )
        return found
    ident = value.id if isinstance(value, Element) else value
    found = lookup(c.graph.vertices, ident)
    if found is None:
        raise TraversalError(
            f"Vertex id could not be resolved from mergeE: {ident}",
            hint="create the vertices before mergeE()",
        )
    return found


def _edge_candidates(c: Compiler, ends: dict[Any, VertexRec], label: Any) -> list[EdgeRec]:
    """Edges between the given ends (with the label, if given), found by scanning the end with fewer such edges and
    keeping those whose other end is the given one; every edge when no end is given."""
    out_v, in_v = ends.get(Direction.OUT), ends.get(Direction.IN)
    if out_v is None and in_v is None:
        return list(c.graph.edges.values())
    adjacencies = [
        [getattr(v, bucket).get(label, ())] if label is not None else list(getattr(v, bucket).values())
        for v, bucket in ((out_v, "out_e"), (in_v, "in_e"))
        if v is not None
    ]
    smallest = min(adjacencies, key=lambda buckets: sum(len(edges) for edges in buckets))
    return [
        e
        for edges in smallest
        for e in edges
        if (out_v is None or e.out_v is out_v) and (in_v is None or e.in_v is in_v)
    ]


@step("mergeE")
def compile_merge_e(call: StepCall, c: Compiler) -> StepFn:
    """mergeE(map|traversal|null) with Direction.OUT/IN ends (ids, vertices or Merge.outV/inV options)."""
    options = _options(call, (T.id, T.label, *_DIRECTIONS))
    search_of = _search_arg(call)
    name = "MergeEdgeStep"

    def ends_of(search: dict[Any, Any], t: Trav) -> dict[Any, VertexRec]:
        ends = {}
        for direction, which in ((Direction.OUT, Merge.out_v), (Direction.IN, Merge.in_v)):
            if direction in search:
                ends[direction] = _endpoint(search[direction], options, t, c, which)
        return ends

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            search = _resolve_map(search_of(t), t, c, name) or {}
            _check_keys(search, (T.id, T.label, *_DIRECTIONS))
            ends = ends_of(search, t)
            matches = _property_matcher({k: v for k, v in search.items() if k not in _DIRECTIONS})
            matched = [e for e in _edge_candidates(c, ends, search.get(T.label)) if matches(e)]
            if matched:
                for e in matched:
                    if Merge.on_match in options:
                        on_match = _on_match(options, t, e, c, name)
                        if on_match:
                            _apply_properties(e, on_match, t, c, None)
                    yield c.spawn(t, e)
                continue
            create = dict(search)
            if Merge.on_create in options:
                extra = _resolve_map(options[Merge.on_create][0], t, c, name)
                if extra:
                    _check_keys(extra, (T.id, T.label, *_DIRECTIONS))
                    _check_override(search, extra)
                    create.update(extra)
                    ends.update(ends_of({k: v for k, v in extra.items() if k in _DIRECTIONS}, t))
            for direction, word in ((Direction.OUT, "Out"), (Direction.IN, "In")):
                if direction not in ends:
                    raise TraversalError(
                        f"{word} Vertex not specified in mergeE()",
                        hint=f"put Direction.{direction.name} in the map",
                    )
            e = c.graph.add_edge(
                create.get(T.label, "edge"), ends[Direction.OUT], ends[Direction.IN], create.get(T.id)
            )
            _set_created(e, create, t, c)
            yield c.spawn(t, e)

    return run
