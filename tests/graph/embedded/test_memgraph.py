"""The in-memory store: redo ops replay, snapshots, undo, indexes and the durable store wiring."""

from __future__ import annotations

import gc
import pickle
from pathlib import Path

import pytest
from gremlin_python.process.graph_traversal import GraphTraversalSource
from gremlin_python.process.traversal import Cardinality, TraversalStrategies
from gremlin_python.structure.graph import Graph

from lineage_platform.errors import ConstraintViolation
from lineage_platform.graph.embedded.engine import EmbeddedGraph
from lineage_platform.graph.embedded.memgraph import NOTHING, EdgeRec, MemGraph, VertexPropRec, VertexRec
from lineage_platform.graph.embedded.storage import DurableLog

_TWO_TABLES_AND_A_FLOW = (
    GraphTraversalSource(Graph(), TraversalStrategies())
    .add_v("table")
    .property("name", "a")
    .as_("a")
    .add_v("table")
    .property("name", "b")
    .add_e("flowsTo")
    .from_("a")
    .bytecode
)


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
    graph.drop_vertex_property(graph.vertices[0].props_of("qualifiedName")[0])
    graph.add_vertex("other")
    graph.rollback_changes()
    assert _snapshot(graph) == before
    assert [v.id for v in graph.vertices_with("qualifiedName", "db.a") or ()] == [0]
    assert graph.vertices[0].out_e["flowsTo"] == graph.vertices[100].in_e["flowsTo"]


def test_export_import_round_trip() -> None:
    graph = MemGraph()
    graph.begin_changes()
    _populate(graph)
    graph.commit_changes()
    copy = MemGraph()
    copy.import_state(graph.export_state())
    assert _snapshot(copy) == _snapshot(graph)
    assert copy.vertices[0].out_e["flowsTo"] == [copy.edges[next(iter(copy.edges))]]
    assert copy.vertices[0].out_e["flowsTo"][0].in_v is copy.vertices[100]


def test_durable_graph_survives_reopen(tmp_path: Path) -> None:
    g = GraphTraversalSource(Graph(), TraversalStrategies())
    store = tmp_path / "graph"
    with EmbeddedGraph(store, indexed=["name"], sync=False) as graph:
        graph.execute(_TWO_TABLES_AND_A_FLOW)
        graph.execute(g.V().has("name", "b").property(Cardinality.list_, "tag", "pii").bytecode)
        tx = graph.begin()
        graph.execute(g.V().drop().bytecode, tx)
        tx.rollback()
    with EmbeddedGraph(store, indexed=["name"], sync=False) as reopened:
        names = reopened.execute(g.V().has("name", "a").out("flowsTo").values("name", "tag").bytecode)
        assert [t.object for t in names] == ["b", "pii"]
        added = reopened.execute(g.add_v("table").id_().bytecode)[0].object
        assert added not in {t.object for t in reopened.execute(g.V().has("name").id_().bytecode)}


def test_multi_valued_property_keeps_order_ids_and_index_through_drop_and_rollback() -> None:
    graph = MemGraph(indexed=["tag"])
    graph.begin_changes()
    v = graph.add_vertex("column")
    first = graph.add_vertex_property(v, "tag", "pii")
    graph.add_vertex_property(v, "tag", "gdpr")
    graph.add_vertex_property(v, "tag", "hr")
    graph.commit_changes()
    before = _snapshot(graph)
    graph.begin_changes()
    graph.drop_vertex_property(v.props_of("tag")[1])
    graph.drop_vertex_property(first)
    assert [vp.value for vp in v.props_of("tag")] == ["hr"]
    assert list(graph.vertices_with("tag", "pii") or ()) == []
    graph.rollback_changes()
    assert _snapshot(graph) == before
    assert [vp.value for vp in v.props_of("tag")] == ["pii", "gdpr", "hr"]
    assert [vp.id for vp in v.all_props()] == [vp.id for vp in v.props_of("tag")]
    assert list(graph.vertices_with("tag", "gdpr") or ()) == [v]


def test_shared_index_value_survives_dropping_one_holder() -> None:
    graph = MemGraph(indexed=["name"])
    graph.begin_changes()
    a, b = graph.add_vertex("table"), graph.add_vertex("table")
    vp_a = graph.add_vertex_property(a, "name", "orders")
    graph.add_vertex_property(b, "name", "orders")
    graph.commit_changes()
    assert a.keys is b.keys  # one key tuple for every vertex with the same keys
    graph.begin_changes()
    graph.drop_vertex_property(vp_a)
    assert list(graph.vertices_with("name", "orders") or ()) == [b]
    graph.drop_vertex(b)
    assert list(graph.vertices_with("name", "orders") or ()) == []
    graph.rollback_changes()
    assert sorted(v.id for v in graph.vertices_with("name", "orders") or ()) == [a.id, b.id]


def test_edge_properties_share_their_keys_and_roll_back() -> None:
    graph = MemGraph()
    graph.begin_changes()
    a, b = graph.add_vertex("column"), graph.add_vertex("column")
    first, second = graph.add_edge("flowsTo", a, b), graph.add_edge("flowsTo", b, a)
    for e in (first, second):
        graph.set_edge_property(e, "strength", "strong")
        graph.set_edge_property(e, "transform", "direct")
    graph.commit_changes()
    assert first.keys is second.keys  # one key tuple for every edge with the same keys
    graph.begin_changes()
    graph.set_edge_property(first, "strength", "weak")
    graph.drop_edge_property(first, "transform")
    assert first.props == {"strength": "weak"} and first.prop("transform", None) is None
    graph.rollback_changes()
    assert first.props == {"strength": "strong", "transform": "direct"}
    copy = MemGraph()
    copy.import_state(graph.export_state())
    assert (
        copy.edges[first.id].props == first.props and copy.edges[first.id].keys is copy.edges[second.id].keys
    )


def test_a_vertex_without_edges_left_holds_no_adjacency() -> None:
    graph = MemGraph()
    graph.begin_changes()
    a, b = graph.add_vertex("table"), graph.add_vertex("column")
    e = graph.add_edge("hasColumn", a, b)
    graph.commit_changes()
    graph.begin_changes()
    graph.drop_edge(e)
    assert dict(a.out_e) == {} and b.in_e.get("hasColumn") is None
    assert a.out_e is b.in_e  # the one shared empty mapping, not a dict per vertex
    graph.rollback_changes()
    assert a.out_e == {"hasColumn": [e]} and b.in_e == {"hasColumn": [e]}


def _with_properties(at_once: bool, fail: bool = False) -> MemGraph:
    """A graph given a vertex and an edge with properties all at once or one at a time, in a change set."""
    graph = MemGraph(unique=[("table", "qualifiedName")], indexed=["name"])
    graph.begin_changes()
    other = graph.add_vertex("table")
    graph.add_vertex_property(other, "qualifiedName", "db.taken")
    v = graph.add_vertex("table")
    e = graph.add_edge("flowsTo", other, v)
    vertex_items = [("qualifiedName", "db.taken" if fail else "db.t"), ("name", "t"), ("version", 2)]
    edge_items = [("strength", "strong"), ("masking", False), ("createTime", 7)]
    if at_once:
        graph.add_properties(v, vertex_items)
        graph.add_properties(e, edge_items)
    else:
        for key, value in vertex_items:
            graph.add_vertex_property(v, key, value)
        for key, value in edge_items:
            graph.set_edge_property(e, key, value)
    return graph


def test_properties_added_at_once_equal_those_added_one_at_a_time() -> None:
    at_once, one_by_one = _with_properties(True), _with_properties(False)
    assert at_once.pending_ops() == one_by_one.pending_ops()
    assert at_once.export_state() == one_by_one.export_state()
    assert [v.id for v in at_once.vertices_with("name", "t") or ()] == [2]  # ids: other 0, its property 1
    assert at_once.vertices[2].keys == one_by_one.vertices[2].keys == ("qualifiedName", "name", "version")
    at_once.rollback_changes()
    assert at_once.export_state()[2:] == ([], [], [])
    assert at_once.vertices_with("name", "t") == ()


def test_a_savepoint_before_properties_added_at_once_rolls_back_to_the_bare_elements() -> None:
    graph = MemGraph(indexed=["name"])
    graph.begin_changes()
    v = graph.add_vertex("table")
    e = graph.add_edge("flowsTo", v, v)
    bare = _snapshot(graph)
    mark = graph.savepoint()
    graph.add_properties(e, [])  # nothing to add: nothing logged
    graph.add_properties(v, [("name", "t"), ("version", 1)])
    graph.add_properties(e, [("strength", "weak")])
    graph.add_vertex_property(v, "owner", "ann")  # a later write is undone first
    assert len(graph.pending_ops()) == 6
    graph.rollback_to(mark)
    assert _snapshot(graph) == bare  # ids are not reused: the counter stays where it was
    assert [op[0] for op in graph.pending_ops()] == ["addV", "addE"]
    assert graph.vertices_with("name", "t") == ()


def test_properties_added_at_once_refuse_a_duplicate_unique_value() -> None:
    try:
        _with_properties(True, fail=True)
    except ConstraintViolation as exc:
        assert "db.taken" in str(exc)
    else:
        raise AssertionError("the duplicate qualifiedName was accepted")


def _varied_graph() -> MemGraph:
    """Vertices with plain properties (ids implied and not), several values of a key, meta-properties, string
    ids, shared and distinct index values; edges with and without properties; dropped and changed elements."""
    graph = MemGraph(unique=[("table", "qualifiedName")], indexed=["qualifiedName", "name"])
    graph.begin_changes()
    tables = []
    for n in range(6):
        t = graph.add_vertex("table")
        graph.add_vertex_property(t, "qualifiedName", f"db.t{n}")
        graph.add_vertex_property(t, "name", "orders" if n % 2 else f"t{n}")
        tables.append(t)
    graph.add_vertex_property(tables[1], "name", "again")  # a second value of a key
    graph.drop_vertex_property(
        tables[2].props_of("qualifiedName")[0]
    )  # a changed property: new id, at the end
    graph.add_vertex_property(tables[2], "qualifiedName", "db.t2")
    named = graph.add_vertex("column", "col-a")
    graph.add_vertex_property(named, "name", "orders", "vp-a")
    graph.set_meta(graph.add_vertex_property(tables[3], "tag", "pii"), "source", "declared")
    graph.drop_meta(graph.add_vertex_property(tables[4], "tag", "hr"), "none")
    bare = graph.add_vertex("process")
    graph.drop_vertex(graph.add_vertex("table"))
    for out_v, in_v in (
        (tables[0], tables[1]),
        (tables[0], named),
        (tables[1], tables[0]),
        (bare, tables[0]),
    ):
        e = graph.add_edge("flowsTo", out_v, in_v)
        graph.set_edge_property(e, "strength", "strong")
    graph.add_edge("usedBy", tables[5], bare, "edge-x")
    graph.drop_edge(graph.add_edge("usedBy", tables[0], bare))
    graph.commit_changes()
    return graph


def test_columns_snapshot_round_trips_contents_order_adjacency_and_indexes() -> None:
    graph = _varied_graph()
    copy = MemGraph(unique=[("table", "qualifiedName")], indexed=["qualifiedName", "name"])
    copy.import_state(graph.export_columns())
    assert (
        copy.export_state() == graph.export_state()
    )  # same rows in the same order, ids and next_id included
    assert list(copy.vertices_by_label) == list(graph.vertices_by_label)
    for label, bucket in graph.vertices_by_label.items():
        assert list(copy.vertices_by_label[label]) == list(bucket)
    for vid, v in graph.vertices.items():
        for direction in ("out_e", "in_e"):
            mine, theirs = getattr(v, direction), getattr(copy.vertices[vid], direction)
            assert {k: [e.id for e in es] for k, es in theirs.items()} == {
                k: [e.id for e in es] for k, es in mine.items()
            }
            assert (theirs is NOTHING) == (mine is NOTHING)
    for key in ("qualifiedName", "name"):
        for value in ("db.t0", "db.t2", "orders", "again", "t4", "missing"):
            assert sorted(map(repr, copy.vertices_with(key, value) or ())) == sorted(
                map(repr, graph.vertices_with(key, value) or ())
            )
    tables = list(copy.vertices_by_label["table"].values())
    assert tables[0].keys is tables[5].keys  # key tuples shared again after the import
    with pytest.raises(ConstraintViolation):  # the unique index is live
        copy.add_vertex_property(copy.add_vertex("table"), "qualifiedName", "db.t5")


def test_columns_snapshot_stores_property_ids_only_where_they_are_not_implied() -> None:
    graph = _varied_graph()
    _version, _next_id, _vertices, groups, rows, _edges, key_sets = graph.export_columns()
    by_keys = {key_sets[code]: id_columns for code, _ids, _values, id_columns in groups}
    # tables 0 and 5 were made property by property: ids implied; table 2's re-added qualifiedName is not
    assert by_keys[("qualifiedName", "name")] == [None, None]
    assert by_keys[("name", "qualifiedName")][1] is not None
    assert by_keys[("name",)] == [["vp-a"]]
    assert {row[2] for row in rows} == {"qualifiedName", "name", "tag"}  # several values, or meta: rows


def test_store_written_in_format_1_opens_and_is_rewritten_in_format_2(tmp_path: Path) -> None:
    source = _varied_graph()
    store = tmp_path / "graph"
    with DurableLog(store, sync=False) as log:
        log.recover()
        log.checkpoint(source.export_state())
        log.append([("addV", "late", "table"), ("addVP", "late", "late-q", "qualifiedName", "db.late")])
    (snapshot,) = store.glob("snapshot-*.snap")
    data = bytearray(snapshot.read_bytes())
    data[8:10] = (1).to_bytes(2, "little")  # what releases before format 2 wrote: version 1, rows
    snapshot.write_bytes(bytes(data))
    options = {"unique": [("table", "qualifiedName")], "indexed": ["qualifiedName", "name"], "sync": False}
    with EmbeddedGraph(store, **options) as opened:
        assert opened.graph.export_state()[2:4] == (
            source.export_state()[2] + [("late", "table")],
            source.export_state()[3] + [("late", "late-q", "qualifiedName", "db.late", None)],
        )
        expected = opened.graph.export_state()
    (snapshot,) = store.glob("snapshot-*.snap")
    assert snapshot.read_bytes()[8:10] == (2).to_bytes(2, "little")
    with EmbeddedGraph(store, **options) as reopened:
        assert reopened.graph.export_state() == expected
        assert [v.id for v in reopened.graph.vertices_with("qualifiedName", "db.late") or ()] == ["late"]


def test_a_graph_opened_from_columns_shares_the_strings_a_column_repeats() -> None:
    graph = MemGraph()
    graph.begin_changes()
    previous = None
    for n in range(4):
        v = graph.add_vertex("table")
        graph.add_vertex_property(v, "kind", "".join(["tab", "le"]))  # equal values, distinct objects
        graph.add_vertex_property(v, "name", f"t{n}")
        if previous is not None:
            e = graph.add_edge("flowsTo", previous, v)
            graph.set_edge_property(e, "strength", "".join(["str", "ong"]))
            graph.set_edge_property(e, "weight", n)
        previous = v
    graph.commit_changes()
    kinds = [v.props_of("kind")[0].value for v in graph.vertices.values()]
    assert len({id(kind) for kind in kinds}) == 4
    copy = MemGraph()
    copy.import_state(
        pickle.loads(pickle.dumps(graph.export_columns(), protocol=5))
    )  # as a snapshot holds it
    assert copy.export_state() == graph.export_state()
    assert len({id(v.props_of("kind")[0].value) for v in copy.vertices.values()}) == 1
    assert len({id(e.prop("strength")) for e in copy.edges.values()}) == 1
    assert [v.props_of("name")[0].value for v in copy.vertices.values()] == ["t0", "t1", "t2", "t3"]


def test_an_opened_store_is_frozen_and_dropping_its_elements_still_frees_them(tmp_path: Path) -> None:
    g = GraphTraversalSource(Graph(), TraversalStrategies())
    store = tmp_path / "graph"
    with EmbeddedGraph(store, sync=False) as graph:
        graph.execute(_TWO_TABLES_AND_A_FLOW)
    del graph  # its records carry the same ids
    gc.collect()
    opened = EmbeddedGraph(store, sync=False)
    try:
        assert gc.get_freeze_count() > 0  # the collector does not scan the opened graph
        first = opened.execute(g.V().has("name", "a").id_().bytecode)[0].object
        v = opened.graph.vertices[first]
        watched = {(id(r), type(r), r.id) for r in (v, *v.all_props(), *v.out_e["flowsTo"])}
        del v
        opened.execute(g.V(first).drop().bytecode)  # with its property and its edge
        gc.unfreeze()  # frozen objects are not listed; nothing is collected here
        records = [o for o in gc.get_objects() if type(o) in (VertexRec, VertexPropRec, EdgeRec)]
        assert not [o for o in records if (id(o), type(o), o.id) in watched]  # freed by reference counting
        gc.freeze()
    finally:
        opened.close()
    assert gc.get_freeze_count() == 0
