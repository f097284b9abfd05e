"""The in-memory store: redo ops replay, snapshots, undo, indexes and the durable store wiring."""

from __future__ import annotations

from pathlib import Path

from gremlin_python.process.graph_traversal import GraphTraversalSource
from gremlin_python.process.traversal import Cardinality, TraversalStrategies
from gremlin_python.structure.graph import Graph

from lineage_platform.graph.embedded.engine import EmbeddedGraph
from lineage_platform.graph.embedded.memgraph import MemGraph


def _snapshot(graph: MemGraph) -> tuple:
    """The graph's contents (vertices, vertex properties, edges) without the id counter."""
    return graph.export_state()[2:]


def _populate(graph: MemGraph) -> None:
    a = graph.add_vertex("table")
    b = graph.add_vertex("table", 100)
    graph.add_vertex_property(a, "qualifiedName", "db.a")
    vp = graph.add_vertex_property(b, "tag", "pii")
    graph.set_meta(vp, "source", "declared")
    e = graph.add_edge("flowsTo", a, b)
    graph.set_edge_property(e, "strength", "strong")


def test_redo_ops_replay_to_the_same_state() -> None:
    source = MemGraph(indexed=["qualifiedName"])
    source.begin_changes()
    _populate(source)
    extra = source.add_vertex("column")
    source.drop_vertex(extra)
    ops = source.commit_changes()
    replica = MemGraph(indexed=["qualifiedName"])
    replica.apply(ops)
    assert _snapshot(replica) == _snapshot(source)
    assert [v.id for v in replica.vertices_with("qualifiedName", "db.a") or ()] == [0]
    assert replica.new_id() > 100  # the id counter advanced past replayed ids


def test_rollback_restores_everything() -> None:
    graph = MemGraph(indexed=["qualifiedName"])
    graph.begin_changes()
    _populate(graph)
    graph.commit_changes()
    before = _snapshot(graph)
    graph.begin_changes()
    b = graph.vertices[100]
    graph.drop_vertex(b)
    graph.drop_vertex_property(graph.vertices[0].props["qualifiedName"][0])
    graph.add_vertex("other")
    graph.rollback_changes()
    assert _snapshot(graph) == before
    assert [v.id for v in graph.vertices_with("qualifiedName", "db.a") or ()] == [0]
    assert list(graph.vertices[0].out_e["flowsTo"]) == list(graph.vertices[100].in_e["flowsTo"])


def test_export_import_round_trip() -> None:
    graph = MemGraph()
    graph.begin_changes()
    _populate(graph)
    graph.commit_changes()
    copy = MemGraph()
    copy.import_state(graph.export_state())
    assert _snapshot(copy) == _snapshot(graph)
    assert copy.vertices[0].out_e["flowsTo"][copy.edges[next(iter(copy.edges))].id].in_v is copy.vertices[100]


def test_durable_graph_survives_reopen(tmp_path: Path) -> None:
    g = GraphTraversalSource(Graph(), TraversalStrategies())
    store = tmp_path / "graph"
    with EmbeddedGraph(store, indexed=["name"], sync=False) as graph:
        graph.execute(
            g.add_v("table")
            .property("name", "a")
            .as_("a")
            .add_v("table")
            .property("name", "b")
            .add_e("flowsTo")
            .from_("a")
            .bytecode
        )
        graph.execute(g.V().has("name", "b").property(Cardinality.list_, "tag", "pii").bytecode)
        tx = graph.begin()
        graph.execute(g.V().drop().bytecode, tx)
        tx.rollback()
    with EmbeddedGraph(store, indexed=["name"], sync=False) as reopened:
        names = reopened.execute(g.V().has("name", "a").out("flowsTo").values("name", "tag").bytecode)
        assert [t.object for t in names] == ["b", "pii"]
        added = reopened.execute(g.add_v("table").id_().bytecode)[0].object
        assert added not in {t.object for t in reopened.execute(g.V().has("name").id_().bytecode)}
