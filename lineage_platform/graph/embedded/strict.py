"""Strict-schema mode: the embedded engine refuses what JanusGraph refuses under the production policy.

JanusGraph with ``schema.default=none`` and ``schema.constraints=true`` checks every write against its schema:
known labels and keys, keys declared for the element's label, edges only between connected labels, data types
(converting where it can), cardinality, edge multiplicity and unique indexes. :class:`SchemaRules` applies the
same rules, built from the same definition (graph_schema/schema.yaml), with the messages JanusGraph 1.1 gives,
so a fast embedded test fails where the write would fail on JanusGraph. The default label ``vertex`` carries no
constraints there, and here.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lineage_platform.errors import ConstraintViolation

if TYPE_CHECKING:
    from graph_schema import GraphSchema
    from lineage_platform.graph.embedded.memgraph import EdgeRec, VertexRec

DEFAULT_VERTEX_LABEL = "vertex"
HINT = "declare it in graph_schema/schema.yaml and regenerate the JanusGraph script (`lineage graph init`)"
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
_JAVA_TYPES = {name: f"java.lang.{name}" for name in ("String", "Long", "Integer", "Boolean", "Double")}
_JAVA_TYPES["Date"] = "java.util.Date"


def _refuse(message: str) -> ConstraintViolation:
    return ConstraintViolation(message, hint=HINT)


def _java_class(value: Any) -> str:
    """The Java class a value arrives as on a Gremlin Server (GraphBinary)."""
    if isinstance(value, bool):
        return "java.lang.Boolean"
    if isinstance(value, int):
        fits = _INT32[0] <= value <= _INT32[1] and type(value).__name__ != "long"
        return "java.lang.Integer" if fits else "java.lang.Long"
    if isinstance(value, float):
        return "java.lang.Double"
    if isinstance(value, str):
        return "java.lang.String"
    if isinstance(value, datetime.datetime):
        return "java.util.Date"
    return f"java.lang.{type(value).__name__}"


def _java_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _to_integer(value: Any, bounds: tuple[int, int]) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if bounds[0] <= number <= bounds[1] else None


def _convert(data_type: str, value: Any) -> Any:
    """The value as JanusGraph stores it for a key of ``data_type``, or None when it cannot be converted."""
    if data_type == "String":
        return value if isinstance(value, str) else _java_text(value)
    if data_type in ("Long", "Integer"):
        return _to_integer(value, _INT64 if data_type == "Long" else _INT32)
    if data_type == "Boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)):
            return value != 0
        if isinstance(value, str):
            return value.strip().lower() == "true"
        return None
    if data_type == "Double":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        try:
            return float(value) if isinstance(value, str) else None
        except ValueError:
            return None
    return value if isinstance(value, (datetime.datetime, datetime.date)) else None


@dataclass(frozen=True)
class SchemaRules:
    """The write rules of one schema, applied by :class:`~lineage_platform.graph.embedded.memgraph.MemGraph`."""

    key_types: dict[str, tuple[str, str]]  # key -> (data type, cardinality)
    vertex_keys: dict[str, frozenset[str]]
    edge_keys: dict[str, frozenset[str]]
    connections: dict[str, frozenset[tuple[str, str]]]
    multiplicities: dict[str, str]
    unique_indexes: dict[tuple[str, str], str]  # (vertex label, key) -> index name

    @classmethod
    def from_schema(cls, schema: GraphSchema) -> SchemaRules:
        """The rules of a parsed schema.yaml."""
        from graph_schema import unique_index_name

        return cls(
            {name: (key.type, key.cardinality) for name, key in schema.property_keys.items()},
            {label: frozenset(keys) for label, keys in schema.vertex_keys.items()},
            {label: frozenset(keys) for label, keys in schema.edge_keys.items()},
            {label: frozenset(pairs) for label, pairs in schema.connections.items()},
            dict(schema.edge_labels),
            {(label, key): unique_index_name(label, key) for label, key in schema.unique_keys},
        )

    def check_vertex(self, label: str) -> None:
        """A new vertex: its label must exist.

        Given ids are kept (``lineage graph import`` restores a backup with its ids); JanusGraph refuses them
        (``Vertex does not support user supplied identifiers``), which is why imports to a ws:// server generate ids.
        """
        if label != DEFAULT_VERTEX_LABEL and label not in self.vertex_keys:
            raise _refuse(f"Vertex Label with given name does not exist: {label}")

    def check_edge(self, label: str, out_v: VertexRec, in_v: VertexRec) -> None:
        """A new edge: label, connection between the two vertex labels, and multiplicity."""
        multiplicity = self.multiplicities.get(label)
        if multiplicity is None:
            raise _refuse(f"Edge Label with given name does not exist: {label}")
        if (
            DEFAULT_VERTEX_LABEL not in (out_v.label, in_v.label)
            and (out_v.label, in_v.label) not in self.connections[label]
        ):
            raise _refuse(
                f"Connection constraint does not exist for given Edge Label [{label}], outgoing Vertex Label "
                f"[{out_v.label}] and incoming Vertex Label [{in_v.label}]"
            )
        if multiplicity in ("MANY2ONE", "ONE2ONE") and out_v.out_e.get(label):
            raise _refuse(
                f"An edge with the given label already exists on the out-vertex and the label [{label}] is out-unique"
            )
        if multiplicity in ("ONE2MANY", "ONE2ONE") and in_v.in_e.get(label):
            raise _refuse(
                f"An edge with the given label already exists on the in-vertex and the label [{label}] is in-unique"
            )
        if multiplicity == "SIMPLE" and any(e.in_v is in_v for e in out_v.out_e.get(label, ())):
            raise _refuse(
                f"An edge with the given label already exists between the pair of vertices and the label [{label}] "
                "is simple"
            )

    def vertex_property(self, v: VertexRec, key: str, value: Any) -> Any:
        """The value to store for ``key`` on vertex ``v`` (converted to the key's type), or refuse it."""
        data_type = self._key(key)[0]
        if v.label != DEFAULT_VERTEX_LABEL and key not in self.vertex_keys[v.label]:
            raise _refuse(
                f"Property Key constraint does not exist for given Vertex Label [{v.label}] and property key [{key}]."
            )
        return self._typed(key, data_type, value)

    def edge_property(self, e: EdgeRec, key: str, value: Any) -> Any:
        """The value to store for ``key`` on edge ``e`` (converted to the key's type), or refuse it."""
        data_type = self._key(key)[0]
        if key not in self.edge_keys[e.label]:
            raise _refuse(
                f"Property Key constraint does not exist for given Edge Label [{e.label}] and property key [{key}]."
            )
        return self._typed(key, data_type, value)

    def meta_property(self, key: str, value: Any) -> Any:
        """The value to store for a meta-property ``key`` (its key must exist), or refuse it."""
        return self._typed(key, self._key(key)[0], value)

    def check_cardinality(self, key: str, cardinality: str) -> None:
        """An explicit cardinality on a write must be the key's own."""
        declared = self._key(key)[1]
        if cardinality.upper() != declared:
            raise _refuse(
                f"Key is defined for {declared} cardinality which conflicts with specified: {cardinality.lower()}"
            )

    def unique_violation(self, key: str, value: Any, label: str) -> ConstraintViolation:
        """The refusal of a duplicate value of a unique key."""
        return _refuse(
            f"Adding this property for key [{key}] and value [{_java_text(value)}] violates a uniqueness "
            f"constraint [{self.unique_indexes[(label, key)]}]"
        )

    def _key(self, key: str) -> tuple[str, str]:
        found = self.key_types.get(key)
        if found is None:
            raise _refuse(f"Property Key with given name does not exist: {key}")
        return found

    @staticmethod
    def _typed(key: str, data_type: str, value: Any) -> Any:
        converted = _convert(data_type, value)
        if converted is None:
            raise _refuse(
                f"Value [{_java_text(value)}] is not an instance of the expected data type for property key [{key}] "
                f"and cannot be converted. Expected: class {_JAVA_TYPES[data_type]}, found: class "
                f"{_java_class(value)}"
            )
        return converted
