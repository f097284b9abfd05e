"""The lineage graph's schema, defined once in schema.yaml.

>>> schema = load_schema()
>>> ("table", "qualifiedName") in schema.unique_keys
True
>>> "qualifiedName" in schema.indexed_keys
True
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from lineage_platform.errors import ConfigError

SCHEMA_FILE = Path(__file__).with_name("schema.yaml")
TYPES = {"String", "Long", "Integer", "Boolean", "Double", "Date"}
CARDINALITIES = {"SINGLE", "LIST", "SET"}
MULTIPLICITIES = {"MULTI", "SIMPLE", "ONE2MANY", "MANY2ONE", "ONE2ONE"}


@dataclass(frozen=True)
class PropertyKey:
    """A property key with its data type and cardinality."""

    name: str
    type: str
    cardinality: str


@dataclass(frozen=True)
class GraphSchema:
    """Labels, property keys, cardinalities and indexes of the lineage graph."""

    version: int
    property_keys: dict[str, PropertyKey]
    vertex_labels: dict[str, tuple[str, ...]]  # label -> keys unique within that label
    edge_labels: dict[str, str]  # label -> multiplicity
    composite_indexes: dict[str, tuple[str, ...]]
    mixed_indexes: dict[str, dict[str, Any]]
    edge_indexes: dict[str, dict[str, Any]]

    @property
    def unique_keys(self) -> set[tuple[str, str]]:
        """(vertex label, key) pairs whose values are unique within the label."""
        return {(label, key) for label, keys in self.vertex_labels.items() for key in keys}

    @property
    def indexed_keys(self) -> set[str]:
        """Vertex property keys with an exact-value index."""
        keys = {key for keys in self.composite_indexes.values() for key in keys}
        return keys | {key for _, key in self.unique_keys}


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ConfigError(f"{SCHEMA_FILE.name}: {message}", hint="fix the schema definition")


def parse_schema(raw: dict[str, Any]) -> GraphSchema:
    """Validate a schema mapping (the content of schema.yaml) and build a GraphSchema."""
    keys = {
        name: PropertyKey(name, spec["type"], spec.get("cardinality", "SINGLE"))
        for name, spec in raw["property_keys"].items()
    }
    for key in keys.values():
        _check(key.type in TYPES, f"property key {key.name!r} has unknown type {key.type!r}")
        _check(
            key.cardinality in CARDINALITIES,
            f"property key {key.name!r}: bad cardinality {key.cardinality!r}",
        )
    vertex_labels = {
        label: tuple((spec or {}).get("unique", ())) for label, spec in raw["vertex_labels"].items()
    }
    edge_labels = {
        label: (spec or {}).get("multiplicity", "MULTI") for label, spec in raw["edge_labels"].items()
    }
    for label, multiplicity in edge_labels.items():
        _check(multiplicity in MULTIPLICITIES, f"edge label {label!r}: bad multiplicity {multiplicity!r}")
    composite = {name: tuple(index_keys) for name, index_keys in raw.get("composite_indexes", {}).items()}
    mixed = dict(raw.get("mixed_indexes", {}))
    edge_indexes = dict(raw.get("edge_indexes", {}))
    used = [k for ks in vertex_labels.values() for k in ks] + [k for ks in composite.values() for k in ks]
    used += [k for spec in mixed.values() for k in spec["keys"]] + [
        k for s in edge_indexes.values() for k in s["keys"]
    ]
    for key in used:
        _check(key in keys, f"index or constraint uses undeclared property key {key!r}")
    for name, spec in edge_indexes.items():
        _check(
            spec["label"] in edge_labels, f"edge index {name!r} uses undeclared edge label {spec['label']!r}"
        )
    return GraphSchema(int(raw["version"]), keys, vertex_labels, edge_labels, composite, mixed, edge_indexes)


@cache
def load_schema(path: Path = SCHEMA_FILE) -> GraphSchema:
    """Load and validate the schema definition."""
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}", hint="fix the schema definition") from exc
    return parse_schema(raw)
