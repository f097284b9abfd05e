"""The content of a graph as plain sets, to compare a mirror with the graph it follows."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any


def freeze(value: Any) -> Any:
    """A hashable stand-in for a property value (lists, sets and dicts become tuples/frozensets)."""
    if isinstance(value, list):
        return ("list", tuple(freeze(item) for item in value))
    if isinstance(value, (set, frozenset)):
        return ("set", frozenset(freeze(item) for item in value))
    if isinstance(value, dict):
        return ("dict", frozenset((freeze(k), freeze(v)) for k, v in value.items()))
    if isinstance(value, int) and not isinstance(value, bool):
        return ("int", int(value))  # gremlinpython's long is an int
    if isinstance(value, float):
        return ("float", value.hex())  # exact: NaN equals NaN, -0.0 differs from 0.0
    if isinstance(value, Decimal):
        return ("Decimal", str(value))  # exact: Decimal("1.10") differs from Decimal("1.1"), NaN equals NaN
    return (type(value).__name__, value)


@dataclass(frozen=True)
class GraphContent:
    """Every element, property and meta-property of a graph, as sets of tuples (values frozen)."""

    vertices: frozenset[tuple]  # (id, label)
    properties: frozenset[tuple]  # (vertex id, property id, key, value)
    meta: frozenset[tuple]  # (vertex id, property id, key, value)
    edges: frozenset[tuple]  # (id, label, out id, in id)
    edge_properties: frozenset[tuple]  # (edge id, key, value)

    @classmethod
    def from_state(cls, state: tuple) -> GraphContent:
        """The content of an embedded graph's export state (MemGraph.export_state)."""
        _version, _next_id, vertices, vprops, edges = state
        return cls(
            vertices=frozenset(vertices),
            properties=frozenset((vid, vpid, key, freeze(value)) for vid, vpid, key, value, _ in vprops),
            meta=frozenset(
                (vid, vpid, key, freeze(value))
                for vid, vpid, _, _, meta in vprops
                for key, value in (meta or {}).items()
            ),
            edges=frozenset((eid, label, out_id, in_id) for eid, label, out_id, in_id, _ in edges),
            edge_properties=frozenset(
                (eid, key, freeze(value)) for eid, *_, props in edges for key, value in (props or {}).items()
            ),
        )

    def differences(self, other: GraphContent) -> dict[str, tuple[set, set]]:
        """Per part, ``(only in self, only in other)`` where the two differ (empty dict: identical)."""
        found = {}
        for part in ("vertices", "properties", "meta", "edges", "edge_properties"):
            mine, theirs = getattr(self, part), getattr(other, part)
            if mine != theirs:
                found[part] = (set(mine - theirs), set(theirs - mine))
        return found
