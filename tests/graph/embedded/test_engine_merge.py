"""mergeV()/mergeE(): upserts keyed by a search map, with onCreate/onMatch and outV/inV options."""

from __future__ import annotations

import pytest
from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.process.traversal import CardinalityValue, Direction, Merge, Scope, T

from lineage_platform.errors import TraversalError


def test_merge_v_creates_once_then_matches(g: GraphTraversalSource) -> None:
    search = {T.label: "table", "qualifiedName": "db.t"}
    created = (
        g.merge_v(search)
        .option(Merge.on_create, {"owner": "ann"})
        .option(Merge.on_match, {"seen": True})
        .next()
    )
    matched = (
        g.merge_v(search)
        .option(Merge.on_create, {"owner": "bob"})
        .option(Merge.on_match, {"seen": True})
        .next()
    )
    assert created == matched
    assert g.V().has_label("table").count().next() == 1
    assert g.V(created.id).value_map().next() == {"qualifiedName": ["db.t"], "owner": ["ann"], "seen": [True]}


def test_merge_v_on_match_cardinality_values(g: GraphTraversalSource) -> None:
    g.add_v("person").property("name", "al").property("nick", "a").iterate()
    g.merge_v({"name": "al"}).option(Merge.on_match, {"nick": CardinalityValue.list_("b")}).iterate()
    assert sorted(g.V().has("name", "al").values("nick").to_list()) == ["a", "b"]
    g.merge_v({"name": "al"}).option(Merge.on_match, {"nick": "c"}).iterate()
    assert g.V().has("name", "al").values("nick").to_list() == ["c"]


def test_merge_v_from_incoming_maps(g: GraphTraversalSource) -> None:
    rows = [
        {T.label: "column", "name": "a"},
        {T.label: "column", "name": "b"},
        {T.label: "column", "name": "a"},
    ]
    g.inject(*rows).merge_v().iterate()
    assert sorted(g.V().has_label("column").values("name").to_list()) == ["a", "b"]


def test_merge_v_rejects_overriding_and_hidden_keys(g: GraphTraversalSource) -> None:
    with pytest.raises(TraversalError, match="cannot override"):
        g.merge_v({T.label: "a"}).option(Merge.on_create, {T.label: "b"}).iterate()
    with pytest.raises(TraversalError, match="hidden key: ~id"):
        g.merge_v({"~id": 1}).iterate()
    assert g.V().count().next() == 0


def test_merge_e_upserts_between_existing_vertices(g: GraphTraversalSource) -> None:
    a = g.add_v("column").property("name", "a").next()
    b = g.add_v("column").property("name", "b").next()
    search = {T.label: "flowsTo", Direction.OUT: a.id, Direction.IN: b.id}
    first = g.merge_e(search).option(Merge.on_create, {"strength": "weak"}).next()
    second = g.merge_e(search).option(Merge.on_match, {"strength": "strong"}).next()
    assert first == second
    assert g.E().count().next() == 1
    assert g.E(first.id).values("strength").next() == "strong"


def test_merge_e_with_out_v_and_in_v_options(g: GraphTraversalSource) -> None:
    g.add_v("column").property("name", "a").add_v("column").property("name", "b").iterate()
    edge = (
        g.merge_e({T.label: "flowsTo", Direction.OUT: Merge.out_v, Direction.IN: Merge.in_v})
        .option(Merge.out_v, __.V().has("name", "a"))
        .option(Merge.in_v, __.V().has("name", "b"))
        .next()
    )
    assert g.E(edge.id).out_v().values("name").next() == "a"
    assert g.E(edge.id).in_v().values("name").next() == "b"


def test_merge_e_errors_name_the_problem(g: GraphTraversalSource) -> None:
    with pytest.raises(TraversalError, match="Out Vertex not specified"):
        g.merge_e({T.label: "x"}).iterate()
    with pytest.raises(TraversalError, match="could not be resolved"):
        g.merge_e({T.label: "x", Direction.OUT: 100, Direction.IN: 101}).iterate()


def test_on_match_traversal_reads_the_incoming_traverser(g: GraphTraversalSource) -> None:
    g.add_v("person").property("name", "marko").iterate()
    rows = [{T.label: "person", "name": "marko"}, {"created": "N"}]
    g.inject(rows).merge_v(__.limit(Scope.local, 1)).option(Merge.on_match, __.tail(Scope.local)).iterate()
    assert g.V().has("name", "marko").values("created").to_list() == ["N"]


def test_constant_option_maps_are_checked_before_anything_is_written(g: GraphTraversalSource) -> None:
    with pytest.raises(TraversalError, match="hidden key: ~label"):
        g.merge_v({}).option(Merge.on_match, {"~label": "vertex"}).iterate()
    assert g.V().count().next() == 0


def test_on_match_traversal_refuses_an_incoming_element(g: GraphTraversalSource) -> None:
    g.add_v("person").property("name", "marko").iterate()
    with pytest.raises(TraversalError, match="incoming traverser for MergeVertexStep cannot be an Element"):
        g.V().merge_v({}).option(Merge.on_match, __.constant({"age": 1})).iterate()
    assert g.V().values("age").to_list() == []
    # a constant onMatch map needs no incoming object and is fine mid-traversal
    g.V().merge_v({}).option(Merge.on_match, {"age": 2}).iterate()
    assert g.V().values("age").to_list() == [2]
    # started by the merge step, the onMatch traversal reads the matched element
    g.merge_v({"name": "marko"}).option(
        Merge.on_match, __.side_effect(__.property("seen", True)).constant({})
    ).iterate()
    assert g.V().values("seen").to_list() == [True]


def test_merge_e_among_parallel_edges_matches_only_the_edge_between_its_ends_with_its_properties(
    g: GraphTraversalSource,
) -> None:
    """Parallel edges (one per process) between the same ends and edges of the same label to other vertices:
    mergeE picks the one edge whose ends and properties match, from either end, and creates only what is new."""
    a, b, c = (g.add_v("column").property("name", n).next() for n in "abc")
    for process in ("p1", "p2", "p3"):
        for target in (b, c):
            g.add_e("flowsTo").from_(a).to(target).property("process", process).property("n", 1).iterate()
    wanted = {T.label: "flowsTo", Direction.OUT: a.id, Direction.IN: c.id, "process": "p2", "n": 1.0}
    found = g.merge_e(wanted).next()
    assert g.E(found.id).project("in", "process").by(__.in_v().values("name")).by("process").next() == {
        "in": "c",
        "process": "p2",
    }
    assert g.merge_e({T.label: "flowsTo", Direction.IN: b.id, "process": "p3"}).out_v().values(
        "name"
    ).to_list() == ["a"]
    created = g.merge_e({**wanted, "process": "p4"}).option(Merge.on_create, {"tags": ["x"], "w": 2}).next()
    assert g.E(created.id).value_map().next() == {"process": "p4", "n": 1.0, "tags": ["x"], "w": 2}
    assert g.E().count().next() == 7
