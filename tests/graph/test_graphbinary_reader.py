"""The driver's fast GraphBinary reader gives exactly what the stock JanusGraph reader gives."""

from __future__ import annotations

import datetime
import uuid

import pytest
from gremlin_python.driver.driver_remote_connection import DriverRemoteConnection
from gremlin_python.process.anonymous_traversal import traversal
from gremlin_python.process.graph_traversal import __
from gremlin_python.process.traversal import Direction, T
from gremlin_python.statics import long
from gremlin_python.structure.graph import Edge, Vertex
from gremlin_python.structure.io.graphbinaryV1 import GraphBinaryWriter
from janusgraph_python.driver.serializer import JanusGraphBinarySerializersV1
from janusgraph_python.structure.io.graphbinaryV1 import JanusGraphBinaryReader

from lineage_platform.graph.graphbinary_reader import FastGraphBinaryReader


def _typed(value):
    """A value with the Python type of every part, so that 1 == True or 1 == 1.0 cannot pass for each other."""
    if isinstance(value, dict):
        return type(value), sorted((repr(_typed(k)), repr(_typed(v))) for k, v in value.items())
    if isinstance(value, list | tuple | set):
        items = [_typed(v) for v in value]
        return type(value), sorted(map(repr, items)) if isinstance(value, set) else items
    return type(value), value


VALUES = [
    None,
    True,
    0,
    -(2**31),
    2**31 - 1,
    long(2**40),
    long(-(2**63)),
    1.5,
    "",
    "qualifiedName",
    "ünïcødé ✓ 数据",
    [1, "a", None, [2, [3]], {"k": [4]}],
    {"a", "b", 3},
    {"x": 1, 2: "y", None: None, T.id: 7, T.label: "table"},
    {"nested": {"inner": {"deep": [1, {"z": None}]}}},
    [{T.id: 1, T.label: "table", "qualifiedName": "db.t"}] * 3,
    uuid.UUID(int=42),
    datetime.datetime(2026, 11, 24, 23, 59, 1),
    Vertex(1, "table"),
    Edge(9, Vertex(1, "table"), "usedBy", Vertex(2, "process")),
    Direction.OUT,
    list(range(300)),
]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_the_fast_reader_reads_what_the_stock_reader_reads(value) -> None:
    data = bytearray()
    GraphBinaryWriter().to_dict(value, data)  # (write_object() returns nothing for None)
    fast, stock = FastGraphBinaryReader().read_object(data), JanusGraphBinaryReader().read_object(data)
    assert _typed(fast) == _typed(stock)


def test_the_fast_reader_reads_real_answers_as_the_stock_reader(g) -> None:
    connection = g.traversal_strategies.traversal_strategies[0].remote_connection  # RemoteStrategy's
    if not isinstance(connection, DriverRemoteConnection):
        pytest.skip("in process: no wire format")
    g.add_v("table").property("qualifiedName", "db.a").property("name", "a").as_("a").add_v(
        "process"
    ).property("qualifiedName", "p").property("operation", "INSERT").as_("p").add_e("usedBy").from_("a").to(
        "p"
    ).iterate()
    stock = DriverRemoteConnection(connection.url, "g", message_serializer=JanusGraphBinarySerializersV1())
    try:
        plain = traversal().with_remote(stock)
        for make in (
            lambda s: s.V().element_map(),
            lambda s: s.E().element_map(),
            lambda s: s.V().project("v", "out").by(__.element_map()).by(__.out_e().element_map().fold()),
            lambda s: s.V().group().by(T.label).by(__.values("qualifiedName").fold()),
            lambda s: s.V().group_count().by(__.values("qualifiedName").fold()),  # list keys
            lambda s: s.V().out_e().path(),
            lambda s: s.V().value_map(True),
        ):
            assert _typed(make(g).to_list()) == _typed(make(plain).to_list())
    finally:
        stock.close()
