"""Turn engine objects into the detached gremlinpython values a client receives."""

from __future__ import annotations

from typing import Any

from gremlin_python.process.traversal import Direction, T
from gremlin_python.structure.graph import Edge, Path, Property, Vertex, VertexProperty

from lineage_platform.graph.embedded.memgraph import EdgeRec, PropRec, VertexPropRec, VertexRec
from lineage_platform.graph.embedded.values import MapEntry, hashable_key

PLAIN_VALUES = frozenset({str, int, float, bool})  # returned as they are
_PLAIN_KEYS = PLAIN_VALUES | {T, Direction}  # map keys that are already detached and hashable


def _vertex(v: VertexRec) -> Vertex:
    return Vertex(v.id, v.label)


def _detach_map(value: dict) -> dict:
    """A detached copy of a map; the common keys (strings, T, Direction) and plain values are taken as they are.

    When every key is such a key, the map is copied whole (dict.copy keeps the keys' hashes: T and Direction
    hash in Python) and only its other values are replaced."""
    out = None
    for key, item in value.items():
        if type(key) not in _PLAIN_KEYS:
            break
        if item is not None and type(item) not in PLAIN_VALUES:
            if out is None:
                out = value.copy()
            out[key] = detach(item)
    else:
        return value.copy() if out is None else out
    out = {}
    for key, item in value.items():
        if type(key) not in _PLAIN_KEYS:
            key = hashable_key(detach(key))
        out[key] = item if item is None or type(item) in PLAIN_VALUES else detach(item)
    return out


def detach(value: Any) -> Any:
    """A detached copy of ``value``: stored elements become gremlinpython references, containers are copied."""
    kind = type(value)
    if value is None or kind in PLAIN_VALUES:
        return value
    if kind is dict:  # elementMap/project rows: the hot case, checked first
        return _detach_map(value)
    if kind is list:
        return [item if item is None or type(item) in PLAIN_VALUES else detach(item) for item in value]
    if isinstance(value, VertexRec):
        return _vertex(value)
    if isinstance(value, EdgeRec):
        return Edge(value.id, _vertex(value.out_v), value.label, _vertex(value.in_v))
    if isinstance(value, VertexPropRec):
        return VertexProperty(value.id, value.key, detach(value.value), _vertex(value.vertex))
    if isinstance(value, PropRec):
        return Property(value.key, detach(value.value), detach(value.element))
    if isinstance(value, MapEntry):
        return {hashable_key(detach(value[0])): detach(value[1])}
    if isinstance(value, dict):
        return _detach_map(value)
    if isinstance(value, (list, tuple)):
        return [detach(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return {hashable_key(detach(v)) for v in value}
    if isinstance(value, Path):
        return Path([set(labels) for labels in value.labels], [detach(o) for o in value.objects])
    return value
