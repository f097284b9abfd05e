"""SubgraphStrategy and PartitionStrategy: the same answers in process, through `lineage graph serve` and on the
reference TinkerGraph and JanusGraph servers (TinkerPop's own scenarios run in tests/graph/test_conformance.py)."""

from __future__ import annotations

import pytest
from gremlin_python.process.graph_traversal import __
from gremlin_python.process.strategies import PartitionStrategy, SubgraphStrategy
from gremlin_python.process.traversal import P, TextP

from lineage_platform.errors import TraversalError
from lineage_platform.graph import connect, disconnect
from lineage_platform.graph.embedded.strategy_views import View, view_of
from lineage_platform.graph.writer import LineageWriter
from tests.lineage_samples import NAME, PROFILE


def _names(traversal) -> list[str]:
    return sorted(traversal.values(NAME).to_list())


def test_a_subgraph_without_a_column_hides_it_and_the_flows_through_it(g) -> None:
    LineageWriter(g).write([PROFILE])
    hidden = g.with_strategies(SubgraphStrategy(vertices=__.has(NAME, P.neq("ods.users.ssn"))))
    downstream = __.out("flowsTo")
    assert _names(
        g.V().has_label("column").has(NAME, TextP.starting_with("ods.users")).flat_map(downstream)
    ) == [
        "dws.profile",
        "dws.profile.id",
        "dws.profile.name",
        "dws.profile.ssn_hash",
    ]
    assert _names(
        hidden.V().has_label("column").has(NAME, TextP.starting_with("ods.users")).flat_map(downstream)
    ) == [
        "dws.profile",
        "dws.profile.id",
        "dws.profile.name",
    ]
    # an edge with a hidden end is hidden too (checkAdjacentVertices), from either side
    assert hidden.E().has_label("flowsTo").count().next() == g.E().has_label("flowsTo").count().next() - 1
    assert hidden.V().has(NAME, "dws.profile.ssn_hash").in_("flowsTo").count().next() == 0
    assert hidden.V().has(NAME, "ods.users.ssn").count().next() == 0


def test_an_edge_criterion_keeps_only_strong_value_flow(g) -> None:
    LineageWriter(g).write([PROFILE])
    strong = g.with_strategies(SubgraphStrategy(edges=__.has("strength", "strong")))
    assert _names(strong.V().has(NAME, "ods.users.active").out("flowsTo")) == []
    assert _names(strong.V().has(NAME, "ods.users.name").both("flowsTo")) == ["dws.profile.name"]
    assert _names(strong.V().has_label("table").has(NAME, "dws.profile").in_("flowsTo")) == []
    assert strong.V().has(NAME, "ods.users.active").count().next() == 1  # vertices are not filtered


def test_a_vertex_property_criterion_hides_properties_but_not_edge_properties(g) -> None:
    LineageWriter(g).write([PROFILE])
    no_sql = g.with_strategies(SubgraphStrategy(vertex_properties=__.not_(__.has_key_("queryText"))))
    process = g.V().has_label("process").values("queryText").to_list()
    assert process == [PROFILE.sql]
    assert no_sql.V().has_label("process").values("queryText").to_list() == []
    assert no_sql.V().has_label("process").properties("queryText").count().next() == 0
    assert no_sql.V().has_label("process").values(NAME).count().next() == 1
    transforms = sorted(no_sql.E().has_label("flowsTo").values("transform").to_list())
    assert transforms == sorted(g.E().has_label("flowsTo").values("transform").to_list())


def test_the_view_applies_inside_nested_traversals_and_repeats(g) -> None:
    LineageWriter(g).write([PROFILE])
    hidden = g.with_strategies(SubgraphStrategy(vertices=__.has(NAME, P.neq("dws.profile.name"))))
    users = hidden.V().has(NAME, "ods.users")
    assert _names(users.out("hasColumn").where(__.out("flowsTo").has_label("column"))) == [
        "ods.users.id",
        "ods.users.ssn",
    ]
    reached = hidden.V().has(NAME, "ods.users.name").repeat(__.out("flowsTo")).emit().dedup()
    assert _names(reached) == []
    assert _names(g.V().has(NAME, "ods.users.name").repeat(__.out("flowsTo")).emit().dedup()) == [
        "dws.profile.name"
    ]


@pytest.fixture(params=["in-process", "served", "tinkergraph"])
def open_g(request, monkeypatch):
    """A fresh graph without the lineage schema (JanusGraph's would refuse the partition key)."""
    monkeypatch.setenv("LINEAGE_GRAPH_SCHEMA", "open")
    if request.param == "tinkergraph":
        source = connect(request.getfixturevalue("tinkerpop_url"))
        source.V().drop().iterate()
        yield source
        disconnect(source)
        return
    if request.param == "in-process":
        yield connect("memory:")
        return
    from lineage_platform.graph.connect import open_embedded
    from lineage_platform.graph.embedded.server import BackgroundServer, ServerSettings

    server = BackgroundServer(open_embedded(None), ServerSettings(port=0)).start()
    source = connect(server.url)
    yield source
    disconnect(source)
    server.stop()


def test_partitions_write_their_key_and_read_only_theirs(open_g) -> None:
    def tenant(write: str, *reads: str):
        return open_g.with_strategies(
            PartitionStrategy(partition_key="tenant", write_partition=write, read_partitions=list(reads))
        )

    tenant("a", "a").add_v("table").property("name", "orders").as_("o").add_v("table").property(
        "name", "sales"
    ).add_e("feeds").from_("o").iterate()
    tenant("b", "b").add_v("table").property("name", "orders").iterate()
    assert sorted(open_g.V().values("tenant").to_list()) == ["a", "a", "b"]
    assert open_g.E().values("tenant").to_list() == ["a"]
    assert sorted(tenant("a", "a").V().values("name").to_list()) == ["orders", "sales"]
    assert tenant("b", "b").V().values("name").to_list() == ["orders"]
    assert tenant("b", "b").V().out().count().next() == 0
    assert sorted(tenant("b", "a", "b").V().values("name").to_list()) == ["orders", "orders", "sales"]
    assert tenant("a", "a").V().has("name", "orders").out("feeds").values("name").to_list() == ["sales"]
    tenant("b", "b").merge_v({"name": "orders"}).iterate()  # found in b: nothing new
    tenant("b", "b").merge_v({"name": "sales"}).iterate()  # sales is a's: b gets its own
    assert sorted(open_g.V().has("name", "sales").values("tenant").to_list()) == ["a", "b"]
    assert open_g.V().count().next() == 4


def test_merges_reading_other_partitions_than_they_write_are_refused_by_the_embedded_engine(
    open_g, request
) -> None:
    if "tinkergraph" in request.node.name:
        pytest.skip("the reference server supports them; the embedded engine refuses them (documented)")
    mixed = open_g.with_strategies(
        PartitionStrategy(partition_key="t", write_partition="a", read_partitions=["a", "b"])
    )
    with pytest.raises(Exception, match="readPartitions"):
        mixed.merge_v({"name": "x"}).iterate()


def test_gremlinpython_configurations_become_views() -> None:
    # gremlinpython 3.7 writes check_adjacent_vertices under a key Gremlin Server ignores; so does the engine
    misspelt = SubgraphStrategy(vertices=__.has("k", 1), check_adjacent_vertices=False)
    assert view_of("SubgraphStrategy", misspelt.configuration).edges is not None
    unchecked = SubgraphStrategy(vertices=__.has("k", 1))
    unchecked.configuration["checkAdjacentVertices"] = False
    assert view_of("SubgraphStrategy", unchecked.configuration).edges is None
    edges = view_of("SubgraphStrategy", SubgraphStrategy(edges=__.has("w", 1)).configuration)
    assert edges.cross_edges and edges.vertices is None
    partition = view_of(
        "PartitionStrategy",
        PartitionStrategy(partition_key="t", write_partition="a", read_partitions=["a"]).configuration,
    )
    assert partition.partition == ("t", "a", frozenset({"a"})) and not partition.cross_edges
    assert isinstance(partition, View) and partition.vertex_properties is None


def test_views_and_plain_traversals_of_one_shape_do_not_share_compiled_pipelines(g) -> None:
    LineageWriter(g).write([PROFILE])
    hidden = g.with_strategies(SubgraphStrategy(vertices=__.has(NAME, P.neq("dws.profile.name"))))
    reached = [
        len(source.V().has(NAME, "ods.users.name").where(__.out("flowsTo")).to_list())
        for source in (g, hidden, g, hidden, g)
    ]
    assert reached == [1, 0, 1, 0, 1]
    criterion_shaped = __.has(NAME, P.neq("dws.profile.name"))  # the view's criterion, as a user's own filter
    assert hidden.V().has_label("column").filter_(criterion_shaped).count().next() == 6


def test_views_given_what_is_not_a_traversal_or_no_write_partition_are_clear_errors() -> None:
    g = connect("memory:")
    with pytest.raises(TraversalError, match="SubgraphStrategy vertices must be a traversal, got 'name'"):
        g.with_strategies(SubgraphStrategy(vertices="name")).V().to_list()
    with pytest.raises(TraversalError, match="vertexProperties must be a traversal"):
        g.with_strategies(SubgraphStrategy(vertex_properties=5)).V().to_list()
    read_only = g.with_strategies(PartitionStrategy(partition_key="tenant", read_partitions="a"))
    assert read_only.V().to_list() == []  # one partition named as a string reads it
    with pytest.raises(TraversalError, match=r"addV\(\) under PartitionStrategy needs a writePartition"):
        read_only.add_v("table").iterate()
    assert g.V().count().next() == 0
