"""Writes JanusGraph's schema refuses are refused the same way by the embedded engine's strict-schema mode.

Each write runs on the reference JanusGraph Server (production policy, the generated schema.groovy applied) and on
an embedded graph in strict mode; both must refuse it with JanusGraph's message, or both accept it and store the
same (converted) value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.process.traversal import Cardinality, T
from gremlin_python.statics import long

from lineage_platform.errors import ConstraintViolation
from lineage_platform.graph import connect, disconnect

Write = Callable[[GraphTraversalSource, dict[str, Any]], Any]

REFUSED: list[tuple[str, Write, str]] = [
    (
        "unknown vertex label",
        lambda g, v: g.add_v("nosuchlabel").iterate(),
        "Vertex Label with given name does not exist: nosuchlabel",
    ),
    (
        "unknown property key",
        lambda g, v: g.V(v["t"]).property("nosuchkey", "x").iterate(),
        "Property Key with given name does not exist: nosuchkey",
    ),
    (
        "key not declared for the vertex label",
        lambda g, v: g.V(v["t"]).property("predicates", "[]").iterate(),
        "Property Key constraint does not exist for given Vertex Label [table] and property key [predicates].",
    ),
    (
        "outbox key on a dataset",
        lambda g, v: g.V(v["t"]).property("seq", long(1)).iterate(),
        "Property Key constraint does not exist for given Vertex Label [table] and property key [seq].",
    ),
    (
        "key not declared for the edge label",
        lambda g, v: g.V(v["c"]).add_e("flowsTo").to(__.V(v["c"])).property("round", 1).iterate(),
        "Property Key constraint does not exist for given Edge Label [flowsTo] and property key [round].",
    ),
    (
        "unknown edge label",
        lambda g, v: g.V(v["db"]).add_e("nosuchedge").to(__.V(v["t"])).iterate(),
        "Edge Label with given name does not exist: nosuchedge",
    ),
    (
        "edge between labels it does not connect",
        lambda g, v: g.V(v["t"]).add_e("contains").to(__.V(v["db"])).iterate(),
        "Connection constraint does not exist for given Edge Label [contains], outgoing Vertex Label [table] and "
        "incoming Vertex Label [database]",
    ),
    (
        "string for a Long key",
        lambda g, v: g.V(v["t"]).property("createTime", "x").iterate(),
        "Value [x] is not an instance of the expected data type for property key [createTime] and cannot be "
        "converted. Expected: class java.lang.Long, found: class java.lang.String",
    ),
    (
        "boolean for a Long key",
        lambda g, v: g.V(v["t"]).property("createTime", True).iterate(),
        "Value [true] is not an instance of the expected data type for property key [createTime] and cannot be "
        "converted. Expected: class java.lang.Long, found: class java.lang.Boolean",
    ),
    (
        "Long out of range for an Integer key",
        lambda g, v: g.V(v["t"]).property("version", long(2**40)).iterate(),
        "Value [1099511627776] is not an instance of the expected data type for property key [version] and cannot "
        "be converted. Expected: class java.lang.Integer, found: class java.lang.Long",
    ),
    (
        "fraction for an Integer key",
        lambda g, v: g.V(v["t"]).property("version", 1.5).iterate(),
        "Value [1.5] is not an instance of the expected data type for property key [version] and cannot be "
        "converted. Expected: class java.lang.Integer, found: class java.lang.Double",
    ),
    (
        "list cardinality on a SINGLE key",
        lambda g, v: g.V(v["t"]).property(Cardinality.list_, "name", "a").iterate(),
        "Key is defined for SINGLE cardinality which conflicts with specified: list",
    ),
    (
        "second table for one column (hasColumn is ONE2MANY)",
        lambda g, v: g.V(v["t2"]).add_e("hasColumn").to(__.V(v["c"])).iterate(),
        "An edge with the given label already exists on the in-vertex and the label [hasColumn] is in-unique",
    ),
    (
        "duplicate qualifiedName within a label",
        lambda g, v: g.add_v("table").property("qualifiedName", "db.t").iterate(),
        "Adding this property for key [qualifiedName] and value [db.t] violates a uniqueness constraint "
        "[uniqueTableQualifiedName]",
    ),
    (
        "renaming onto an existing qualifiedName",
        lambda g, v: g.V(v["t2"]).property("qualifiedName", "db.t").iterate(),
        "Adding this property for key [qualifiedName] and value [db.t] violates a uniqueness constraint "
        "[uniqueTableQualifiedName]",
    ),
]

# accepted by both, after JanusGraph's conversion to the key's type: (write, read back, expected value)
CONVERTED: list[tuple[str, Write, Write, Any]] = [
    (
        "int for a Long key",
        lambda g, v: g.V(v["t"]).property("createTime", 5).iterate(),
        lambda g, v: g.V(v["t"]).values("createTime").next(),
        5,
    ),
    (
        "digits for an Integer key",
        lambda g, v: g.V(v["t"]).property("version", "7").iterate(),
        lambda g, v: g.V(v["t"]).values("version").next(),
        7,
    ),
    (
        "number for a String key",
        lambda g, v: g.V(v["t"]).property("name", 5).iterate(),
        lambda g, v: g.V(v["t"]).values("name").next(),
        "5",
    ),
    (
        "text for a Boolean edge key",
        lambda g, v: g.V(v["c"]).add_e("flowsTo").to(__.V(v["c"])).property("masking", "true").iterate(),
        lambda g, v: g.V(v["c"]).out_e("flowsTo").values("masking").next(),
        True,
    ),
    (
        "default label 'vertex' takes any key",
        lambda g, v: g.add_v().property("operation", "x").iterate(),
        lambda g, v: g.V().has_label("vertex").values("operation").next(),
        "x",
    ),
]


@pytest.fixture(params=["embedded-strict", "janusgraph"])
def strict_graph(request: pytest.FixtureRequest) -> Iterator[tuple[GraphTraversalSource, dict[str, Any]]]:
    """An empty graph with the production schema and db, db.t, db.t2, db.t.c (db.t -hasColumn-> db.t.c)."""
    if request.param == "janusgraph":
        g = connect(request.getfixturevalue("janusgraph_url"))
        g.V().drop().iterate()
    else:
        g = connect("memory:")
    ids = {
        name: g.add_v(label).property("qualifiedName", qualified_name).id_().next()
        for name, label, qualified_name in (
            ("db", "database", "db"),
            ("t", "table", "db.t"),
            ("t2", "table", "db.t2"),
            ("c", "column", "db.t.c"),
        )
    }
    g.V(ids["t"]).add_e("hasColumn").to(__.V(ids["c"])).iterate()
    try:
        yield g, ids
    finally:
        if request.param == "janusgraph":
            disconnect(g)


@pytest.mark.parametrize("write, message", [case[1:] for case in REFUSED], ids=[case[0] for case in REFUSED])
def test_refused_with_janusgraphs_message(strict_graph, write: Write, message: str) -> None:
    g, ids = strict_graph
    before = g.V().count().next(), g.E().count().next()
    with pytest.raises(Exception) as refused:
        write(g, ids)
    assert message in str(refused.value)
    assert (g.V().count().next(), g.E().count().next()) == before  # the failed traversal changed nothing


@pytest.mark.parametrize("write, read, expected", [c[1:] for c in CONVERTED], ids=[c[0] for c in CONVERTED])
def test_accepted_and_converted_alike(strict_graph, write: Write, read: Write, expected: Any) -> None:
    g, ids = strict_graph
    write(g, ids)
    value = read(g, ids)
    assert value == expected and type(value) is type(expected)


def test_strict_refusal_is_a_constraint_violation_with_a_hint() -> None:
    g = connect("memory:")
    with pytest.raises(ConstraintViolation) as refused:
        g.add_v("nosuchlabel").iterate()
    assert "graph_schema/schema.yaml" in str(refused.value)


def test_strict_embedded_graph_keeps_given_ids_for_restores() -> None:
    """JanusGraph assigns ids (imports to ws:// generate them); the embedded store keeps given ones (backups)."""
    g = connect("memory:")
    g.add_v("table").property(T.id, 987654).property("qualifiedName", "db.r").iterate()
    assert g.V(987654).values("qualifiedName").next() == "db.r"


def test_open_mode_accepts_any_label(open_schema: None) -> None:
    g = connect("memory:")
    g.add_v("person").property("age", 29).iterate()
    assert g.V().has_label("person").values("age").to_list() == [29]


def test_a_lineage_graph_backup_restores_into_a_strict_graph(tmp_path) -> None:
    from lineage_platform.graph.graphson import export_graph, import_graph
    from lineage_platform.graph.writer import LineageWriter
    from lineage_platform.model import ColumnEdge, Dataset, RunInfo, StatementLineage

    source = connect("memory:")
    statement = StatementLineage(
        index=0,
        operation="INSERT",
        sql="INSERT INTO db.b SELECT id FROM db.a",
        inputs=(Dataset("db.a"),),
        outputs=(Dataset("db.b"),),
        column_edges=(ColumnEdge("db.a.id", "db.b.id"),),
    )
    LineageWriter(source).write(
        [statement], RunInfo(status="SUCCESS", user="etl", start_time="2024-05-01T01:00:00")
    )
    export_graph(source, tmp_path / "backup.graphson")
    restored = connect("memory:")
    import_graph(restored, tmp_path / "backup.graphson")
    assert restored.V().id_().to_set() == source.V().id_().to_set()
    assert restored.E().count().next() == source.E().count().next() > 0
