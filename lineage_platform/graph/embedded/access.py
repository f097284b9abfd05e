"""Reading properties of stored elements the way Gremlin steps see them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from gremlin_python.process.traversal import T
from gremlin_python.structure.graph import Element

from lineage_platform.errors import TraversalError
from lineage_platform.graph.embedded.memgraph import MISSING, EdgeRec, PropRec, VertexPropRec, VertexRec


def properties_of(obj: Any, keys: tuple[str, ...], step_name: str) -> Iterator[VertexPropRec | PropRec]:
    """properties(keys): vertex properties of a vertex, properties of an edge, meta-properties of a vertex property."""
    if isinstance(obj, VertexRec):
        if not keys:
            yield from obj.all_props()
            return
        for key in keys:
            yield from obj.props_of(key)
        return
    if isinstance(obj, EdgeRec):
        for key in keys or obj.keys:
            value = obj.prop(key)
            if value is not MISSING:
                yield PropRec(key, value, obj)
        return
    if isinstance(obj, VertexPropRec):
        meta = obj.meta
        if not meta:
            return
        for key in keys or tuple(meta):
            if key in meta:
                yield PropRec(key, meta[key], obj)
        return
    raise TraversalError(
        f"{step_name}() needs a graph element but got {type(obj).__name__} {obj!r}",
        hint=f"apply {step_name}() to vertices, edges or vertex properties",
    )


def values_of(obj: Any, keys: tuple[str, ...], step_name: str = "values") -> Iterator[Any]:
    """values(keys): property values of an element (fast path without building property records)."""
    if isinstance(obj, VertexRec):
        if len(keys) == 1:
            for vp in obj.props_of(keys[0]):
                yield vp.value
            return
        for key in keys or obj.keys:
            for vp in obj.props_of(key):
                yield vp.value
        return
    if isinstance(obj, dict) and keys:
        for key in keys:
            if key in obj:
                yield obj[key]
        return
    for prop in properties_of(obj, keys, step_name):
        yield prop.value


def token_value(obj: Any, token: T, step_name: str) -> Any:
    """The value of T.id / T.label / T.key / T.value for ``obj``."""
    if type(obj) is VertexRec and token == T.id:
        return obj.id
    if token in (T.id, T.id_):
        if isinstance(obj, (VertexRec, EdgeRec, VertexPropRec)):
            return obj.id
    elif token == T.label:
        if isinstance(obj, (VertexRec, EdgeRec)):
            return obj.label
        if isinstance(obj, VertexPropRec):
            return obj.key
    elif token == T.key:
        if isinstance(obj, (VertexPropRec, PropRec)):
            return obj.key
    elif token == T.value and isinstance(obj, (VertexPropRec, PropRec)):
        return obj.value
    raise TraversalError(
        f"{step_name}() cannot read {token} from {type(obj).__name__} {obj!r}",
        hint="T.id/T.label apply to elements, T.key/T.value to properties",
    )


def is_element(obj: Any) -> bool:
    """True for stored vertices, edges and vertex properties."""
    return isinstance(obj, (VertexRec, EdgeRec, VertexPropRec))


def flatten_ids(args: Iterable[Any]) -> list[Any]:
    """Ids given to V()/E()/hasId(): plain ids, elements or lists of them."""
    out: list[Any] = []
    for arg in args:
        if isinstance(arg, (list, tuple, set)):
            out.extend(flatten_ids(arg))
        elif isinstance(arg, (Element, VertexRec, EdgeRec)):
            out.append(arg.id)
        else:
            out.append(arg)
    return out


def lookup(table: dict[Any, Any], ident: Any) -> Any:
    """Find an element by id; numeric strings also match integer ids (as TinkerGraph's integer id manager does)."""
    try:
        found = table.get(ident)
    except TypeError:  # an unhashable "id" (a list or map) names nothing
        return None
    if found is None and isinstance(ident, str):
        try:
            found = table.get(int(ident))
        except ValueError:
            return None
    return found
