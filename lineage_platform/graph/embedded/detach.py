"""Turn engine objects into the detached gremlinpython values a client receives."""

from __future__ import annotations

from typing import Any

from gremlin_python.structure.graph import Edge, Path, Property, Vertex, VertexProperty

from lineage_platform.graph.embedded.memgraph import EdgeRec, PropRec, VertexPropRec, VertexRec
from lineage_platform.graph.embedded.values import MapEntry, hashable_key

PLAIN_VALUES = frozenset({str, int, float, bool})  # returned as they are


def _vertex(v: VertexRec) -> Vertex:
    return Vertex(v.id, v.label)


def detach(value: Any) -> Any:
    """A detached copy of ``value``: stored elements become gremlinpython references, containers are copied."""
    if value is None or type(value) in PLAIN_VALUES:
        return value
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
        return {hashable_key(detach(k)): detach(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [detach(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return {hashable_key(detach(v)) for v in value}
    if isinstance(value, Path):
        return Path([set(labels) for labels in value.labels], [detach(o) for o in value.objects])
    return value
