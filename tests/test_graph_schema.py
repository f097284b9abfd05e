"""The schema definition is valid, and the checked-in JanusGraph script is generated from it."""

from __future__ import annotations

import pytest

from graph_schema import load_schema, parse_schema
from graph_schema.janusgraph import SCRIPT_FILE, janusgraph_script
from lineage_platform.errors import ConfigError


def test_every_dataset_label_has_unique_qualified_name() -> None:
    schema = load_schema()
    for label in (
        "database",
        "table",
        "column",
        "file",
        "topic",
        "process",
        "run",
        "partition",
        "classification",
    ):
        assert (label, "qualifiedName") in schema.unique_keys


def test_checked_in_janusgraph_script_matches_schema() -> None:
    assert SCRIPT_FILE.read_text() == janusgraph_script(load_schema()), (
        "graph_schema/janusgraph/schema.groovy is stale: run `python -c 'from graph_schema.janusgraph import "
        "write_script; write_script()'`"
    )


def test_script_creates_every_label_key_and_index_idempotently() -> None:
    schema = load_schema()
    script = janusgraph_script(schema)
    for key in schema.property_keys:
        assert f"if (!mgmt.containsPropertyKey('{key}')) mgmt.makePropertyKey('{key}')" in script
    for label in schema.vertex_labels:
        assert f"mgmt.makeVertexLabel('{label}')" in script
    for label in schema.edge_labels:
        assert f"mgmt.makeEdgeLabel('{label}')" in script
    for name in [*schema.composite_indexes, *schema.mixed_indexes]:
        assert f"if (!mgmt.containsGraphIndex('{name}'))" in script
    assert script.rstrip().splitlines()[-2] == "mgmt.commit()"


def test_undeclared_key_in_an_index_is_rejected() -> None:
    raw = {
        "version": 1,
        "property_keys": {"name": {"type": "String"}},
        "vertex_labels": {"table": {"unique": ["qualifiedName"]}},
        "edge_labels": {},
    }
    with pytest.raises(ConfigError, match="undeclared property key 'qualifiedName'"):
        parse_schema(raw)


def test_unknown_type_is_rejected() -> None:
    raw = {
        "version": 1,
        "property_keys": {"name": {"type": "Varchar"}},
        "vertex_labels": {},
        "edge_labels": {},
    }
    with pytest.raises(ConfigError, match="unknown type 'Varchar'"):
        parse_schema(raw)


def test_janusgraph_properties_files_name_their_backends() -> None:
    folder = SCRIPT_FILE.parent
    single = dict(
        line.split("=", 1)
        for line in (folder / "janusgraph-berkeleyje-lucene.properties").read_text().splitlines()
        if line and not line.startswith("#")
    )
    cluster = dict(
        line.split("=", 1)
        for line in (folder / "janusgraph-cql-es.properties").read_text().splitlines()
        if line and not line.startswith("#")
    )
    assert (single["storage.backend"], single["index.search.backend"]) == ("berkeleyje", "lucene")
    assert (cluster["storage.backend"], cluster["index.search.backend"]) == ("cql", "elasticsearch")
    # the mixed index in the schema is built on the backend name both files configure
    assert {spec["backend"] for spec in load_schema().mixed_indexes.values()} == {"search"}


def test_script_declares_the_keys_of_every_label_and_every_connection() -> None:
    schema = load_schema()
    script = janusgraph_script(schema)
    for label, keys in schema.vertex_keys.items():
        listed = ", ".join(f"mgmt.getPropertyKey('{key}')" for key in keys)
        assert f"mgmt.addProperties(mgmt.getVertexLabel('{label}'), {listed})" in script
    for label, keys in schema.edge_keys.items():
        listed = ", ".join(f"mgmt.getPropertyKey('{key}')" for key in keys)
        assert f"mgmt.addProperties(mgmt.getEdgeLabel('{label}'), {listed})" in script
    for label, pairs in schema.connections.items():
        assert pairs, f"edge label {label} connects nothing"
        for out, in_ in pairs:
            assert (
                f"mgmt.addConnection(mgmt.getEdgeLabel('{label}'), mgmt.getVertexLabel('{out}'), "
                f"mgmt.getVertexLabel('{in_}'))"
            ) in script


def test_key_and_label_groups_expand_in_place() -> None:
    schema = load_schema()
    assert schema.vertex_keys["column"][:8] == (
        "guid",
        "name",
        "typeName",
        "kind",
        "qualifiedName",
        "createTime",
        "createBy",
        "version",
    )
    assert ("file", "process") in schema.connections["usedBy"]
    assert ("column", "classification") in schema.connections["taggedWith"]
    assert set(schema.vertex_keys["cdcOutbox"]) == {"seq", "committedAt", "ops"}


def test_edge_between_undeclared_labels_is_rejected() -> None:
    raw = {
        "version": 1,
        "property_keys": {"qualifiedName": {"type": "String"}},
        "vertex_labels": {"table": {"unique": ["qualifiedName"]}},
        "edge_labels": {"contains": {"connects": [["database", "table"]]}},
    }
    with pytest.raises(ConfigError, match="connects undeclared vertex label 'database'"):
        parse_schema(raw)


def test_a_label_with_an_undeclared_key_is_rejected() -> None:
    raw = {
        "version": 1,
        "property_keys": {"qualifiedName": {"type": "String"}},
        "key_groups": {"base": ["qualifiedName", "owner"]},
        "vertex_labels": {"table": {"keys": ["base"]}},
        "edge_labels": {},
    }
    with pytest.raises(ConfigError, match="undeclared property key 'owner'"):
        parse_schema(raw)
