"""mergeV() / mergeE(): upsert by a search map, with option(onCreate|onMatch|outV|inV).

Each merge map is sorted out once per traverser (:class:`_MergeMap`: its T.id/T.label/Direction entries and its
property pairs, validated in one pass), so a row costs a few dict reads beyond the store's own work. A merge whose
map argument is ``select(key)`` reads the key straight from an incoming map (what select() would return); when the
``fuse_inject_merge`` strategy has folded a leading ``inject(rows)`` into the step (``StepCall.rows``), the step
walks the rows itself, one traverser per row exactly as inject() would have made it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

from gremlin_python.process.traversal import Bytecode, CardinalityValue, Direction, Merge, T
from gremlin_python.statics import long
from gremlin_python.structure.graph import Element

from lineage_platform.errors import TraversalError
from lineage_platform.graph.embedded.access import lookup
from lineage_platform.graph.embedded.memgraph import MISSING, EdgeRec, VertexPropRec, VertexRec
from lineage_platform.graph.embedded.pipeline import SEED, Compiler, StepCall, StepFn, Trav, as_bytecode, step
from lineage_platform.graph.embedded.steps_graph import set_property
from lineage_platform.graph.embedded.values import gremlin_eq

_ABSENT: Any = object()  # a merge map without T.id / T.label / an end
_PLAIN_TYPES = frozenset({str, int, long, float, bool})  # values a merge map stores as they are
_VERTEX_TOKENS = (T.id, T.label)
_EDGE_TOKENS = (T.id, T.label, Direction.OUT, Direction.IN)

MapOf = Callable[[Trav], "dict[Any, Any] | None"]
"""A merge/option argument compiled once: the map it gives a traverser (None for null)."""


class _MergeMap(NamedTuple):
    """A merge map sorted out: the values of its T.id, T.label and Direction.OUT/IN entries (``_ABSENT`` when
    missing) and its property entries, in the map's order."""

    ident: Any
    label: Any
    out_v: Any
    in_v: Any
    props: list[tuple[str, Any]]


_EMPTY = _MergeMap(_ABSENT, _ABSENT, _ABSENT, _ABSENT, [])


def _is_token(key: Any, tokens: tuple[Any, ...]) -> bool:
    """``key in tokens`` for enum members (singletons): identity, without aenum's slow ``__eq__``."""
    return any(key is token for token in tokens)


def _sort_out(values: dict[Any, Any], allowed_tokens: tuple[Any, ...]) -> _MergeMap:
    """Validate a merge map's keys (TinkerPop's messages) and split it into tokens and property pairs."""
    ident = label = out_v = in_v = _ABSENT
    props: list[tuple[str, Any]] = []
    for key, value in values.items():
        if isinstance(key, str):
            if key.startswith("~"):
                raise TraversalError(
                    f"Property key can not be a hidden key: {key}", hint="remove keys starting with ~"
                )
            props.append((key, value))
            continue
        if (key is T.id or key is T.label) and not _is_token(key, allowed_tokens):
            hidden = "~id" if key is T.id else "~label"
            raise TraversalError(
                f"Property key can not be a hidden key: {hidden}", hint=f"remove {key} from the map"
            )
        elif not _is_token(key, allowed_tokens):
            raise TraversalError(
                f"merge map key {key!r} is not allowed here", hint="use T.id, T.label or strings"
            )
        if key is T.label:
            if not isinstance(value, str) or value.startswith("~"):
                raise TraversalError(
                    f"Label can not be a hidden key: {value}", hint="use a non-empty label without ~"
                )
            label = value
        elif key is T.id:
            ident = value
        elif key is Direction.OUT:
            out_v = value
        else:
            in_v = value
    return _MergeMap(ident, label, out_v, in_v, props)


def _as_map(arg: Any, step_name: str) -> dict[Any, Any] | None:
    """A resolved merge/option argument: a map or null (None); an element or any other value is refused."""
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


def _selected_key(nested: Bytecode) -> str | None:
    """The key of a traversal that is exactly ``select(key)`` (no Pop, no by()), else None."""
    instructions = nested.step_instructions
    if len(instructions) == 1 and len(instructions[0]) == 2 and instructions[0][0] == "select":
        key = instructions[0][1]
        return key if isinstance(key, str) else None
    return None


def _map_of(arg: Any, c: Compiler, step_name: str) -> MapOf:
    """Compile a merge/option argument: a constant, or a traversal's first result for the traverser. A
    ``select(key)`` finds the key in an incoming map directly, as select() does first; otherwise (no map, no such
    key: a side effect or an as-label) the traversal runs."""
    nested = as_bytecode(arg)
    if nested is None:
        return lambda t: _as_map(arg, step_name)
    key = _selected_key(nested)

    def resolve(t: Trav) -> dict[Any, Any] | None:
        if key is not None:
            obj = t.obj
            if isinstance(obj, dict) and key in obj:
                return _as_map(obj[key], step_name)
        result = c.compile(nested).first(t)
        return _as_map(None if result is None else result.obj, step_name)

    return resolve


def _check_override(search: dict[Any, Any], create: dict[Any, Any]) -> None:
    for key, value in create.items():
        if key in search and not gremlin_eq(search[key], value):
            raise TraversalError(
                "option(onCreate) cannot override values from merge() argument",
                hint=f"drop {key!r} from onCreate or make it equal to the merge() value",
            )


def _matcher(search: _MergeMap) -> Callable[[Any], bool]:
    """A test of an element against a sorted-out search map (a merge compares one map with many candidates:
    parallel edges, or every vertex of a label)."""
    ident, label = search.ident, search.label
    pairs = [
        (key, value.source_instructions[0][2] if isinstance(value, CardinalityValue) else value)
        for key, value in search.props
    ]
    # string values compare with == (Gremlin's equality with a string): an edge's are read in one loop, the
    # others after (parallel edges of one label and ends differ mostly in a string, such as flowsTo's process)
    texts = [(key, value) for key, value in pairs if type(value) is str]
    others = [(key, value) for key, value in pairs if type(value) is not str]

    def matches(element: Any) -> bool:
        if ident is not _ABSENT and not gremlin_eq(element.id, ident) and str(element.id) != str(ident):
            return False
        if label is not _ABSENT and element.label != label:
            return False
        if isinstance(element, VertexRec):
            return all(
                any(_same(vp.value, expected) for vp in element.props_of(key)) for key, expected in pairs
            )
        keys, values = element.keys, element.vals
        for key, expected in texts:
            if key not in keys or values[keys.index(key)] != expected:
                return False
        return all(
            (found := element.prop(key)) is not MISSING and _same(found, expected) for key, expected in others
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
    """The properties of an element the merge has just created: plain values go straight to the store, all at once
    when every value is plain (the element has no value to replace and no cardinality is asked for); any other
    (null, a cardinality value) is set as property() sets it."""
    plain = [(key, value) for key, value in values.items() if isinstance(key, str)]
    if all(type(value) in _PLAIN_TYPES for _, value in plain):
        c.graph.add_properties(element, plain)
        return
    add = c.graph.add_vertex_property if isinstance(element, VertexRec) else c.graph.set_edge_property
    for key, value in values.items():
        if type(value) in _PLAIN_TYPES and isinstance(key, str):
            add(element, key, value)
        elif isinstance(key, str):
            set_property(element, None, key, value, [], t, c)


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
            _sort_out(args[1], create_tokens if args[0] == Merge.on_create else ())
    return options


class _Merge:
    """What a mergeV()/mergeE() step compiles to: its map arguments as :data:`MapOf` functions and the work on
    one incoming traverser (:meth:`vertex` / :meth:`edge`), shared by the general step and the fused one."""

    def __init__(self, call: StepCall, c: Compiler, name: str, tokens: tuple[Any, ...]) -> None:
        self.c = c
        self.name = name
        self.options = options = _options(call, tokens)
        # without an argument the incoming object is the map (or a traversal giving one, as an argument would be)
        self.search_of: MapOf = (
            _map_of(call.args[0], c, name) if call.args else (lambda t: _map_of(t.obj, c, name)(t))
        )
        self.create_of = _map_of(options[Merge.on_create][0], c, name) if Merge.on_create in options else None
        self.match_arg = options[Merge.on_match][0] if Merge.on_match in options else _ABSENT
        self.match_of = _map_of(self.match_arg, c, name) if self.match_arg is not _ABSENT else None
        self.match_default = (
            options[Merge.on_match][1]
            if Merge.on_match in options and len(options[Merge.on_match]) > 1
            else None
        )

    def on_match(self, t: Trav, element: Any) -> dict[Any, Any] | None:
        """The onMatch map for ``element``. An onMatch traversal reads the incoming traverser mid-traversal, the
        matched element when the merge step starts the traversal (there is no incoming object then), as in
        TinkerPop, which refuses an incoming element there (the traversal could not tell it from the match)."""
        assert self.match_of is not None
        if t.obj is SEED:
            source = self.c.spawn(t, element)
        elif as_bytecode(self.match_arg) is not None and isinstance(
            t.obj, (VertexRec, EdgeRec, VertexPropRec)
        ):
            raise TraversalError(
                f"The incoming traverser for {self.name} cannot be an Element",
                hint="start the traversal with the merge step, or map the element to a map before it",
            )
        else:
            source = t
        on_match = self.match_of(source)
        if on_match:
            _sort_out(on_match, ())
        return on_match

    def created(self, t: Trav, search: dict[Any, Any], tokens: tuple[Any, ...]) -> tuple[dict, _MergeMap]:
        """The map a new element is made from (the search map with onCreate's entries) and onCreate sorted out."""
        extra = self.create_of(t) if self.create_of is not None else None
        if not extra:
            return search, _EMPTY
        extra_map = _sort_out(extra, tokens)
        _check_override(search, extra)
        return {**search, **extra}, extra_map

    def vertex(self, t: Trav) -> Iterator[Trav]:
        """mergeV for one incoming traverser: the matching vertices (onMatch applied to each as it is yielded, as
        TinkerPop does) or one new vertex."""
        c = self.c
        search = self.search_of(t) or {}
        parsed = _sort_out(search, _VERTEX_TOKENS)
        matches = _matcher(parsed)
        matched = [v for v in _vertex_candidates(c, parsed) if matches(v)]
        if matched:
            for v in matched:
                if self.match_of is not None:
                    on_match = self.on_match(t, v)
                    if on_match:
                        _apply_properties(v, on_match, t, c, self.match_default)
                yield c.spawn(t, v)
            return
        create, extra = self.created(t, search, _VERTEX_TOKENS)
        label = extra.label if extra.label is not _ABSENT else parsed.label
        ident = extra.ident if extra.ident is not _ABSENT else parsed.ident
        v = c.graph.add_vertex("vertex" if label is _ABSENT else label, None if ident is _ABSENT else ident)
        _set_created(v, create, t, c)
        yield c.spawn(t, v)

    def edge(self, t: Trav) -> Iterator[Trav]:
        """mergeE for one incoming traverser: the matching edges (onMatch applied to each as it is yielded) or one
        new edge."""
        c = self.c
        search = self.search_of(t) or {}
        parsed = _sort_out(search, _EDGE_TOKENS)
        ends = self.ends(parsed, t)
        matches = _matcher(parsed)
        label = None if parsed.label is _ABSENT else parsed.label
        matched = [e for e in _edge_candidates(c, ends, label) if matches(e)]
        if matched:
            for e in matched:
                if self.match_of is not None:
                    on_match = self.on_match(t, e)
                    if on_match:
                        _apply_properties(e, on_match, t, c, None)
                yield c.spawn(t, e)
            return
        create, extra = self.created(t, search, _EDGE_TOKENS)
        ends.update(self.ends(extra, t))
        for direction, word in ((Direction.OUT, "Out"), (Direction.IN, "In")):
            if direction not in ends:
                raise TraversalError(
                    f"{word} Vertex not specified in mergeE()",
                    hint=f"put Direction.{direction.name} in the map",
                )
        label = extra.label if extra.label is not _ABSENT else parsed.label
        ident = extra.ident if extra.ident is not _ABSENT else parsed.ident
        e = c.graph.add_edge(
            "edge" if label is _ABSENT else label,
            ends[Direction.OUT],
            ends[Direction.IN],
            None if ident is _ABSENT else ident,
        )
        _set_created(e, create, t, c)
        yield c.spawn(t, e)

    def ends(self, parsed: _MergeMap, t: Trav) -> dict[Any, VertexRec]:
        """The vertices a sorted-out mergeE map names as its ends."""
        ends = {}
        if parsed.out_v is not _ABSENT:
            ends[Direction.OUT] = _endpoint(parsed.out_v, self.options, t, self.c, Merge.out_v)
        if parsed.in_v is not _ABSENT:
            ends[Direction.IN] = _endpoint(parsed.in_v, self.options, t, self.c, Merge.in_v)
        return ends


def _vertex_candidates(c: Compiler, search: _MergeMap) -> Iterable[VertexRec]:
    graph = c.graph
    if search.ident is not _ABSENT:
        found = lookup(graph.vertices, search.ident)
        return [found] if found is not None else []
    for key, value in search.props:
        if key in graph.indexed_keys and not isinstance(value, CardinalityValue):
            return list(graph.vertices_with(key, value) or ())
    if search.label is not _ABSENT:
        return list(graph.vertices_by_label.get(search.label, {}).values())
    return list(graph.vertices.values())


def _run(call: StepCall, c: Compiler, one: Callable[[Trav], Iterator[Trav]]) -> StepFn:
    """The step: ``one`` per incoming traverser or, when a strategy fused ``inject(rows)`` into it, per row (maps,
    which inject() would not have changed), each a traverser as inject() would have started it."""
    rows = call.rows
    if rows is None:
        return lambda travs: (r for t in travs for r in one(t))

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:  # the root's seed
            for row in rows:
                yield from one(c.spawn(t, row))

    return run


@step("mergeV")
def compile_merge_v(call: StepCall, c: Compiler) -> StepFn:
    """mergeV(map|traversal|null): the matching vertices (onMatch applied) or one new vertex (onCreate)."""
    return _run(call, c, _Merge(call, c, "MergeVertexStep", _VERTEX_TOKENS).vertex)


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
        parsed = _sort_out(value, _VERTEX_TOKENS)
        matches = _matcher(parsed)
        found = next((v for v in _vertex_candidates(c, parsed) if matches(v)), None)
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
    return _run(call, c, _Merge(call, c, "MergeEdgeStep", _EDGE_TOKENS).edge)
