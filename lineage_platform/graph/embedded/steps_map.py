"""Map steps: element data (values, valueMap, elementMap, properties, id, label, key, value), path, select,
project, constant, identity, unfold, loops."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gremlin_python.process.traversal import Column, Direction, Pop, T, WithOptions
from gremlin_python.structure.graph import Path

from lineage_platform.errors import TraversalError
from lineage_platform.graph.embedded.access import properties_of, token_value, values_of
from lineage_platform.graph.embedded.memgraph import EdgeRec, PropRec, VertexPropRec, VertexRec
from lineage_platform.graph.embedded.modulation import (
    NOTHING,
    by_functions,
    column_value,
    round_robin,
    value_function,
)
from lineage_platform.graph.embedded.pipeline import (
    Compiler,
    LabelPath,
    MapStep,
    PathNode,
    StepCall,
    StepFn,
    Trav,
    as_bytecode,
    step,
)
from lineage_platform.graph.embedded.scoping import select_value
from lineage_platform.graph.embedded.values import MapEntry


def _string_keys(call: StepCall) -> tuple[str, ...]:
    """The property keys a step names (null keys are ignored, as TinkerGraph does)."""
    keys = tuple(key for key in call.args if key is not None)
    for key in keys:
        if not isinstance(key, str):
            raise TraversalError(
                f"{call.name}() keys must be strings, got {key!r}", hint="pass property key names"
            )
    return keys


@step("values")
def compile_values(call: StepCall, c: Compiler) -> StepFn:
    """values(keys...): property values."""
    keys = _string_keys(call)
    if len(keys) == 1:
        key = keys[0]

        def run_one(travs: Iterator[Trav]) -> Iterator[Trav]:
            for t in travs:
                obj = t.obj
                if type(obj) is VertexRec:
                    for vp in obj.props_of(key):
                        yield t.split(vp.value)
                else:
                    for value in values_of(obj, keys, "values"):
                        yield t.split(value)

        return run_one
    return lambda travs: (t.split(v) for t in travs for v in values_of(t.obj, keys, "values"))


@step("properties")
def compile_properties(call: StepCall, c: Compiler) -> StepFn:
    """properties(keys...): vertex properties / edge properties / meta-properties."""
    keys = _string_keys(call)
    return lambda travs: (t.split(p) for t in travs for p in properties_of(t.obj, keys, "properties"))


_ELEMENT_TYPES = frozenset({VertexRec, EdgeRec, VertexPropRec})


def _ids(travs: Iterator[Trav]) -> Iterator[Trav]:
    """id(): the hot end of most lookups and walks, so written out without helper calls."""
    for t in travs:
        obj = t.obj
        value = obj.id if type(obj) in _ELEMENT_TYPES else token_value(obj, T.id, "id")
        path = t.path
        if path is not None and type(path) is PathNode:
            path = PathNode(path, value)
        yield Trav(value, t.bulk, path, t.loops, t.sack)


def _token_step(token: T) -> Any:
    def compile_token(call: StepCall, c: Compiler) -> StepFn:
        if token == T.id:
            return _ids
        return lambda travs: (t.split(token_value(t.obj, token, call.name)) for t in travs)

    return compile_token


step("id")(_token_step(T.id))
step("label")(_token_step(T.label))
step("key")(_token_step(T.key))
step("value")(_token_step(T.value))


def _tokens_option(call: StepCall) -> int:
    """valueMap(true) or with(WithOptions.tokens[, which]) -> bit set of WithOptions ids/labels/keys/values."""
    tokens = WithOptions.none
    if call.args and isinstance(call.args[0], bool):
        tokens = WithOptions.all if call.args[0] else WithOptions.none
    for args in call.modulator_args("with"):
        if args and args[0] == WithOptions.tokens:
            tokens = args[1] if len(args) > 1 else WithOptions.all
    return tokens


@step("valueMap")
def compile_value_map(call: StepCall, c: Compiler) -> StepFn:
    """valueMap([true], keys...): vertex values as lists, edge/meta values single; by() maps each value."""
    keys = tuple(a for a in call.args if not isinstance(a, bool) and a is not None)
    tokens = _tokens_option(call)
    bys = by_functions(call.modulator_args("by"), c, "valueMap")

    def value_map(t: Trav) -> dict[Any, Any]:
        obj = t.obj
        out: dict[Any, Any] = {}
        if tokens & WithOptions.ids:
            out[T.id] = token_value(obj, T.id, "valueMap")
        if isinstance(obj, VertexPropRec):
            if tokens & WithOptions.keys:
                out[T.key] = obj.key
            if tokens & WithOptions.values:
                out[T.value] = obj.value
        elif tokens & WithOptions.labels:
            out[T.label] = token_value(obj, T.label, "valueMap")
        for prop in properties_of(obj, keys, "valueMap"):
            if isinstance(obj, VertexRec):
                out.setdefault(prop.key, []).append(prop.value)
            else:
                out[prop.key] = prop.value
        if bys:
            for index, key in enumerate([k for k in out if isinstance(k, str)]):
                projected = bys[index % len(bys)](t.replace(out[key]))
                if projected is NOTHING:
                    del out[key]
                else:
                    out[key] = projected
        return out

    return MapStep(lambda t: t.split(value_map(t)))


def _reference(v: VertexRec) -> dict[Any, Any]:
    return {T.id: v.id, T.label: v.label}


@step("elementMap")
def compile_element_map(call: StepCall, c: Compiler) -> StepFn:
    """elementMap(keys...): id, label (edge ends for edges) and the first value of each property."""
    keys = _string_keys(call)

    def element_map(obj: Any) -> dict[Any, Any]:
        if type(obj) is VertexRec:  # the common case, without building property records
            out = {T.id: obj.id, T.label: obj.label}
            if not keys:  # every key once, read in place (a key holds one record or a list of them)
                for key, found in zip(obj.keys, obj.vals):
                    if type(found) is VertexPropRec:
                        out[key] = found.value
                    elif found:
                        out[key] = found[0].value
                return out
            for key in keys:
                values = obj.props_of(key)
                if values and key not in out:
                    out[key] = values[0].value
            return out
        if isinstance(obj, VertexPropRec):
            out: dict[Any, Any] = {T.id: obj.id, T.key: obj.key, T.value: obj.value}
        elif isinstance(obj, (VertexRec, EdgeRec)):
            out = {T.id: obj.id, T.label: obj.label}
            if isinstance(obj, EdgeRec):
                out[Direction.IN] = _reference(obj.in_v)
                out[Direction.OUT] = _reference(obj.out_v)
        else:
            raise TraversalError(
                f"elementMap() needs a graph element but got {obj!r}", hint="apply elementMap() to elements"
            )
        for prop in properties_of(obj, keys, "elementMap"):
            out.setdefault(prop.key, prop.value)
        return out

    return MapStep(lambda t: t.split(element_map(t.obj)))


@step("constant")
def compile_constant(call: StepCall, c: Compiler) -> StepFn:
    """constant(value)."""
    value = call.args[0]
    return MapStep(lambda t: t.split(value))


@step("identity")
def compile_identity(call: StepCall, c: Compiler) -> StepFn:
    """identity()."""
    return lambda travs: travs


@step("as")
def compile_as(call: StepCall, c: Compiler) -> StepFn:
    """as(labels...): label the current path entry (no-op when paths are not tracked)."""
    labels = tuple(call.args)
    if not c.track_paths:
        return lambda travs: travs

    def label(t: Trav) -> Trav:
        node = t.path
        if type(node) is LabelPath:
            relabelled: PathNode = LabelPath(node, t.obj, labels)
        else:
            relabelled = PathNode(node.prev, node.obj, node.labels + labels)
        return Trav(t.obj, t.bulk, relabelled, t.loops, t.sack)

    return lambda travs: (label(t) for t in travs)


@step("path")
def compile_path(call: StepCall, c: Compiler) -> StepFn:
    """path() with by() projections applied to the objects in turn."""
    bys = by_functions(call.modulator_args("by"), c, "path")
    bounds = {name: args[0] for name, args in call.modulators if name in ("from", "to")}

    def make_path(t: Trav) -> Path | None:
        entries = t.path.entries() if t.path is not None else []
        if bounds:
            start = next((i for i, e in enumerate(entries) if bounds.get("from") in e.labels), 0)
            end = next(
                (i + 1 for i in reversed(range(len(entries))) if bounds.get("to") in entries[i].labels), None
            )
            entries = entries[start:end]
        objects = []
        for i, entry in enumerate(entries):
            by = round_robin(bys, i)
            obj = entry.obj if by is None else by(t.replace(entry.obj))
            if obj is NOTHING:
                return None
            objects.append(obj)
        return Path([set(e.labels) for e in entries], objects)

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            path = make_path(t)
            if path is not None:
                yield t.split(path)

    return run


@step("select")
def compile_select(call: StepCall, c: Compiler) -> StepFn:
    """select(Column) | select([Pop], key) | select([Pop], k1, k2, ...) | select(traversal), with by()."""
    args = list(call.args)
    if len(args) == 1 and isinstance(args[0], Column):
        column = args[0]
        return lambda travs: (t.split(column_value(t.obj, column, "select")) for t in travs)
    pop = args.pop(0) if args and isinstance(args[0], Pop) else Pop.last
    bys = by_functions(call.modulator_args("by"), c, "select")
    if len(args) == 1 and as_bytecode(args[0]) is not None:
        key_of = value_function(args[0], c, "select")

        def select_by_traversal(travs: Iterator[Trav]) -> Iterator[Trav]:
            for t in travs:
                key = key_of(t)
                value = NOTHING if key is NOTHING else select_value(t, key, pop, "select", c.side_effects)
                if value is not NOTHING and bys:
                    value = bys[0](t.replace(value))
                if value is not NOTHING:
                    yield t.split(value)

        return select_by_traversal
    keys = args

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            values = []
            for i, key in enumerate(keys):
                value = select_value(t, key, pop, "select", c.side_effects)
                by = round_robin(bys, i)
                if value is not NOTHING and by is not None:
                    value = by(t.replace(value))
                if value is NOTHING:
                    break
                values.append(value)
            else:
                yield t.split(values[0] if len(keys) == 1 else dict(zip(keys, values)))

    return run


@step("project")
def compile_project(call: StepCall, c: Compiler) -> StepFn:
    """project(keys...).by(...): a map of by() projections; unproductive projections leave their key out."""
    keys = list(call.args)
    bys = by_functions(call.modulator_args("by"), c, "project")
    projections = [(key, bys[i] if i < len(bys) else None) for i, key in enumerate(keys)]

    def project(t: Trav) -> dict[str, Any]:
        out = {}
        for key, by in projections:
            value = t.obj if by is None else by(t)
            if value is not NOTHING:
                out[key] = value
        return out

    return MapStep(lambda t: t.split(project(t)))


def unfold_items(obj: Any) -> Iterator[Any]:
    """What unfold() yields for an object: collection items, map entries, path objects, or the object itself."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield MapEntry((k, v))
    elif isinstance(obj, (list, tuple, set, frozenset)) and not isinstance(obj, MapEntry):
        yield from obj
    elif isinstance(obj, Path):
        yield from obj.objects
    else:
        yield obj


@step("unfold")
def compile_unfold(call: StepCall, c: Compiler) -> StepFn:
    """unfold()."""
    return lambda travs: (t.split(item) for t in travs for item in unfold_items(t.obj))


@step("loops")
def compile_loops(call: StepCall, c: Compiler) -> StepFn:
    """loops([name]): the loop counter of the innermost (or the named) repeat."""
    name = call.args[0] if call.args else None

    def loops(t: Trav) -> int:
        for loop_name, count in reversed(t.loops):
            if name is None or loop_name == name:
                return count
        return 0

    return lambda travs: (t.split(loops(t)) for t in travs)


@step("element")
def compile_element(call: StepCall, c: Compiler) -> StepFn:
    """element(): the element a property belongs to."""

    def owner(obj: Any) -> Any:
        if isinstance(obj, VertexPropRec):
            return obj.vertex
        if isinstance(obj, PropRec):
            return obj.element
        raise TraversalError(
            f"element() needs a property but got {obj!r}", hint="apply element() to properties"
        )

    return lambda travs: (t.split(owner(t.obj)) for t in travs)
