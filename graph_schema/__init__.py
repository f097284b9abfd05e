"""The lineage graph's schema, defined once in schema.yaml.

>>> schema = load_schema()
>>> ("table", "qualifiedName") in schema.unique_keys
True
>>> "qualifiedName" in schema.indexed_keys
True
>>> ("database", "table") in schema.connections["contains"]
True
>>> "qualifiedName" in schema.vertex_keys["table"]
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
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
    vertex_keys: dict[str, tuple[str, ...]]  # label -> keys its vertices may carry
    edge_keys: dict[str, tuple[str, ...]]  # label -> keys its edges may carry
    connections: dict[str, tuple[tuple[str, str], ...]]  # edge label -> (out label, in label) pairs
    composite_indexes: dict[str, tuple[str, ...]]
    mixed_indexes: dict[str, dict[str, Any]]
    edge_indexes: dict[str, dict[str, Any]]
    label_groups: dict[str, tuple[str, ...]] = field(default_factory=dict)  # name -> vertex labels

    @property
    def unique_keys(self) -> set[tuple[str, str]]:
        """(vertex label, key) pairs whose values are unique within the label."""
        return {(label, key) for label, keys in self.vertex_labels.items() for key in keys}

    @property
    def indexed_keys(self) -> set[str]:
        """Vertex property keys with an exact-value index."""
        keys = {key for keys in self.composite_indexes.values() for key in keys}
        return keys | {key for _, key in self.unique_keys}


def unique_index_name(label: str, key: str) -> str:
    """Name of the composite unique index of ``key`` within vertex label ``label`` (uniqueTableQualifiedName)."""
    return f"unique{label[0].upper()}{label[1:]}{key[0].upper()}{key[1:]}"


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ConfigError(f"{SCHEMA_FILE.name}: {message}", hint="fix the schema definition")


def _expand(names: list[str], groups: dict[str, list[str]], seen: tuple[str, ...] = ()) -> list[str]:
    """Names with each group name replaced by its members (recursively), in order, without repeats."""
    out: list[str] = []
    for name in names:
        _check(name not in seen, f"group {name!r} contains itself")
        for item in _expand(groups[name], groups, (*seen, name)) if name in groups else [name]:
            if item not in out:
                out.append(item)
    return out


def _labels(raw: dict[str, Any], section: str) -> dict[str, dict[str, Any]]:
    return {label: spec or {} for label, spec in raw.get(section, {}).items()}


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
    key_groups = dict(raw.get("key_groups") or {})
    label_groups = dict(raw.get("label_groups") or {})
    vertex_specs, edge_specs = _labels(raw, "vertex_labels"), _labels(raw, "edge_labels")
    for group in key_groups:
        _check(group not in keys, f"key group {group!r} has the name of a property key")
    for group in label_groups:
        _check(group not in vertex_specs, f"label group {group!r} has the name of a vertex label")
    vertex_labels = {label: tuple(spec.get("unique", ())) for label, spec in vertex_specs.items()}
    vertex_keys = {
        label: tuple(_expand([*spec.get("keys", ()), *spec.get("unique", ())], key_groups))
        for label, spec in vertex_specs.items()
    }
    edge_labels = {label: spec.get("multiplicity", "MULTI") for label, spec in edge_specs.items()}
    edge_keys = {
        label: tuple(_expand(spec.get("keys", []), key_groups)) for label, spec in edge_specs.items()
    }
    connections = {
        label: tuple(
            (out, in_)
            for pair in spec.get("connects", ())
            for out in _expand([pair[0]], label_groups)
            for in_ in _expand([pair[1]], label_groups)
        )
        for label, spec in edge_specs.items()
    }
    for label, multiplicity in edge_labels.items():
        _check(multiplicity in MULTIPLICITIES, f"edge label {label!r}: bad multiplicity {multiplicity!r}")
    for label, pairs in connections.items():
        for end in (end for pair in pairs for end in pair):
            _check(end in vertex_labels, f"edge label {label!r} connects undeclared vertex label {end!r}")
    composite = {name: tuple(index_keys) for name, index_keys in raw.get("composite_indexes", {}).items()}
    mixed = dict(raw.get("mixed_indexes", {}))
    edge_indexes = dict(raw.get("edge_indexes", {}))
    used = [k for ks in vertex_keys.values() for k in ks] + [k for ks in edge_keys.values() for k in ks]
    used += [k for ks in composite.values() for k in ks] + [
        k for spec in mixed.values() for k in spec["keys"]
    ]
    used += [k for s in edge_indexes.values() for k in s["keys"]]
    for key in used:
        _check(key in keys, f"index or constraint uses undeclared property key {key!r}")
    for name, spec in edge_indexes.items():
        _check(
            spec["label"] in edge_labels, f"edge index {name!r} uses undeclared edge label {spec['label']!r}"
        )
    return GraphSchema(
        int(raw["version"]),
        keys,
        vertex_labels,
        edge_labels,
        vertex_keys,
        edge_keys,
        connections,
        composite,
        mixed,
        edge_indexes,
        {name: tuple(_expand([name], label_groups)) for name in label_groups},
    )


@cache
def load_schema(path: Path = SCHEMA_FILE) -> GraphSchema:
    """Load and validate the schema definition."""
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}", hint="fix the schema definition") from exc
    return parse_schema(raw)
