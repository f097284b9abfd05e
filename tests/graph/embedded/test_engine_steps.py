"""Steps of the embedded engine on TinkerPop's modern graph, checked against TinkerGraph's answers."""

from __future__ import annotations

import pytest
from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.process.traversal import Column, Direction, Order, P, Pop, Scope, T, TextP, WithOptions
from gremlin_python.structure.graph import Edge, Path, Vertex, VertexProperty


def names(traversal: object) -> list[str]:
    """Sorted names of the vertices a traversal returns."""
    return sorted(traversal.values("name").to_list())  # type: ignore[attr-defined]


def test_navigation_in_every_direction(modern: GraphTraversalSource) -> None:
    g = modern
    assert names(g.V(1).out()) == ["josh", "lop", "vadas"]
    assert names(g.V(3).in_("created")) == ["josh", "marko", "peter"]
    assert names(g.V(4).both()) == ["lop", "marko", "ripple"]
    assert sorted(e.id for e in g.V(1).out_e("knows").to_list()) == [7, 8]
    assert sorted(e.id for e in g.V(3).in_e().to_list()) == [9, 11, 12]
    assert len(g.V(4).both_e().to_list()) == 3
    assert g.E(7).out_v().values("name").next() == "marko"
    assert g.E(7).in_v().values("name").next() == "vadas"
    assert sorted(g.E(7).both_v().values("name").to_list()) == ["marko", "vadas"]
    assert names(g.V(1).out_e().other_v()) == ["josh", "lop", "vadas"]


def test_returned_elements_are_detached_gremlinpython_objects(modern: GraphTraversalSource) -> None:
    g = modern
    vertex = g.V(1).next()
    assert isinstance(vertex, Vertex) and vertex.id == 1 and vertex.label == "person"
    edge = g.E(7).next()
    assert (
        isinstance(edge, Edge) and edge.outV == Vertex(1) and edge.inV == Vertex(2) and edge.label == "knows"
    )
    prop = g.V(1).properties("name").next()
    assert isinstance(prop, VertexProperty) and prop.key == "name" and prop.value == "marko"


def test_has_with_predicates_and_text_predicates(modern: GraphTraversalSource) -> None:
    g = modern
    assert names(g.V().has("age", P.gt(30))) == ["josh", "peter"]
    assert names(g.V().has("age", P.lte(29))) == ["marko", "vadas"]
    assert names(g.V().has("age", P.neq(29))) == ["josh", "peter", "vadas"]
    assert names(g.V().has("age", P.inside(27, 32))) == ["marko"]
    assert names(g.V().has("age", P.outside(27, 32))) == ["peter"]
    assert names(g.V().has("age", P.between(27, 32))) == ["marko", "vadas"]
    assert names(g.V().has("age", P.within(27, 35))) == ["peter", "vadas"]
    assert names(g.V().has("age", P.without(27, 35))) == ["josh", "marko"]
    assert names(g.V().has("age", P.gt(28).and_(P.lt(33)))) == ["josh", "marko"]
    assert names(g.V().has("age", P.lt(28).or_(P.gt(34)))) == ["peter", "vadas"]
    assert names(g.V().has("age", P.not_(P.within(27, 29, 32)))) == ["peter"]
    assert names(g.V().has("name", TextP.starting_with("ma"))) == ["marko"]
    assert names(g.V().has("name", TextP.ending_with("e"))) == ["ripple"]
    assert names(g.V().has("name", TextP.containing("o"))) == ["josh", "lop", "marko"]
    assert names(g.V().has("name", TextP.not_starting_with("m"))) == [
        "josh",
        "lop",
        "peter",
        "ripple",
        "vadas",
    ]
    assert names(g.V().has("name", TextP.not_ending_with("p"))) == [
        "josh",
        "marko",
        "peter",
        "ripple",
        "vadas",
    ]
    assert names(g.V().has("name", TextP.not_containing("a"))) == ["josh", "lop", "peter", "ripple"]


def test_has_family(modern: GraphTraversalSource) -> None:
    g = modern
    assert names(g.V().has("person", "name", "josh")) == ["josh"]
    assert names(g.V().has_label("software")) == ["lop", "ripple"]
    assert names(g.V().has_id(1, 2)) == ["marko", "vadas"]
    assert names(g.V().has("lang")) == ["lop", "ripple"]
    assert names(g.V().has_not("age")) == ["lop", "ripple"]
    assert names(g.V().has(T.label, "software")) == ["lop", "ripple"]
    assert g.V(1).properties().has_key_("age").value().to_list() == [29]
    assert g.V().properties().has_value("lop").key().to_list() == ["name"]
    assert g.V().has("age", 29.0).count().next() == 1  # numbers compare by value across types
    assert g.V().has("age", True).count().next() == 0  # but a boolean is never a number


def test_values_maps_and_tokens(modern: GraphTraversalSource) -> None:
    g = modern
    assert g.V(1).value_map().next() == {"name": ["marko"], "age": [29]}
    assert g.V(1).value_map("name").with_(WithOptions.tokens).next() == {
        T.id: 1,
        T.label: "person",
        "name": ["marko"],
    }
    assert g.V(1).element_map().next() == {T.id: 1, T.label: "person", "name": "marko", "age": 29}
    edge_map = g.E(7).element_map().next()
    assert edge_map[Direction.OUT] == {T.id: 1, T.label: "person"}
    assert edge_map[Direction.IN] == {T.id: 2, T.label: "person"} and edge_map["weight"] == 0.5
    assert g.V(1).id_().next() == 1 and g.V(1).label().next() == "person"
    assert sorted(g.V(1).properties().key().to_list()) == ["age", "name"]


def test_paths_select_project(modern: GraphTraversalSource) -> None:
    g = modern
    path = g.V(1).out("knows").has("name", "josh").path().by("name").next()
    assert isinstance(path, Path) and path.objects == ["marko", "josh"]
    rows = g.V(1).as_("a").out("created").as_("b").select("a", "b").by("name").to_list()
    assert rows == [{"a": "marko", "b": "lop"}]
    assert g.V(1).as_("x").out().as_("x").select(Pop.first, "x").values("name").dedup().to_list() == ["marko"]
    projected = g.V(4).project("name", "created").by("name").by(__.out("created").count()).next()
    assert projected == {"name": "josh", "created": 2}
    assert g.V(1).out("knows").path().count(Scope.local).dedup().to_list() == [2]


def test_group_group_count_order(modern: GraphTraversalSource) -> None:
    g = modern
    assert g.V().group_count().by(T.label).next() == {"person": 4, "software": 2}
    by_label = g.V().group().by(T.label).by("name").next()
    assert sorted(by_label["software"]) == ["lop", "ripple"]
    assert g.V().group().by(T.label).by(__.count()).next() == {"person": 4, "software": 2}
    assert g.V().has_label("person").order().by("age", Order.desc).values("name").to_list() == [
        "peter",
        "josh",
        "marko",
        "vadas",
    ]
    assert g.V().values("name").order().to_list() == ["josh", "lop", "marko", "peter", "ripple", "vadas"]
    assert g.V().values("age").fold().order(Scope.local).by(Order.desc).next() == [35, 32, 29, 27]
    counts = g.V().group_count().by("name").select(Column.values).unfold().dedup().to_list()
    assert counts == [1]


def test_reducers_global_and_local(modern: GraphTraversalSource) -> None:
    g = modern
    assert g.V().count().next() == 6
    assert g.V().values("age").sum_().next() == 123
    assert g.V().values("age").min_().next() == 27
    assert g.V().values("age").max_().next() == 35
    assert g.V().values("age").mean().next() == pytest.approx(30.75)
    assert g.V().values("age").fold().sum_(Scope.local).next() == 123
    assert g.V().values("age").fold().count(Scope.local).next() == 4
    assert g.V().values("nothing").sum_().to_list() == []
    assert g.V().values("age").fold().next() == [29, 27, 32, 35]
    assert sorted(g.V().values("age").fold().unfold().to_list()) == [27, 29, 32, 35]


def test_ranges(modern: GraphTraversalSource) -> None:
    g = modern
    ordered = g.V().values("name").order()
    assert ordered.clone().limit(2).to_list() == ["josh", "lop"]
    assert ordered.clone().range_(1, 3).to_list() == ["lop", "marko"]
    assert ordered.clone().skip(4).to_list() == ["ripple", "vadas"]
    assert ordered.clone().tail(2).to_list() == ["ripple", "vadas"]
    assert g.V().values("name").order().fold().limit(Scope.local, 2).next() == ["josh", "lop"]
    assert g.V().values("name").order().fold().tail(Scope.local, 1).next() == "vadas"
    assert g.V().both().dedup().count().next() == 6
    assert g.V().both().dedup().by(T.label).count().next() == 2


def test_filters_and_branches(modern: GraphTraversalSource) -> None:
    g = modern
    assert names(g.V().where(__.out("created"))) == ["josh", "marko", "peter"]
    assert names(g.V().not_(__.out("created"))) == ["lop", "ripple", "vadas"]
    assert names(g.V().and_(__.out("knows"), __.out("created"))) == ["marko"]
    assert names(g.V().or_(__.has("age", 27), __.has("lang"))) == ["lop", "ripple", "vadas"]
    assert names(g.V().has_label("person").out("created").is_(__.has("name", "ripple"))) == []
    assert g.V().values("age").is_(P.gt(30)).count().next() == 2
    assert g.V(1).as_("a").out("created").in_("created").where(P.neq("a")).values("name").to_list() == [
        "josh",
        "peter",
    ]
    assert (
        sorted(g.V().coalesce(__.values("lang"), __.constant("none")).to_list())
        == ["java", "java"] + ["none"] * 4
    )
    assert sorted(g.V(1).union(__.out("knows"), __.out("created")).values("name").to_list()) == [
        "josh",
        "lop",
        "vadas",
    ]
    assert g.V(2).optional(__.out()).values("name").to_list() == ["vadas"]
    assert sorted(
        g.V()
        .has_label("person")
        .choose(__.values("age").is_(P.gt(30)), __.constant("old"), __.constant("young"))
        .to_list()
    ) == ["old", "old", "young", "young"]
    options = (
        g.V()
        .has_label("person")
        .choose(__.values("name"))
        .option("marko", __.constant(1))
        .option("josh", __.constant(2))
        .to_list()
    )
    assert sorted(options) == [1, 2]
    assert g.V(1).local(__.out().values("name").order().limit(1)).to_list() == ["josh"]
    assert g.inject(1, 2).union(__.count(), __.sum_()).to_list() == [
        2,
        3,
    ]  # union branches see the whole stream


def test_side_effects(modern: GraphTraversalSource) -> None:
    g = modern
    assert sorted(g.V().has_label("software").aggregate("x").cap("x").next(), key=lambda v: v.id) == [
        Vertex(3),
        Vertex(5),
    ]
    assert g.V().values("age").store("ages").cap("ages").next() == [29, 27, 32, 35]
    assert g.V(1).side_effect(__.out().count()).values("name").to_list() == ["marko"]
    assert g.V().has_label("software").aggregate("s").fold().V(1).out().where(P.without("s")).values(
        "name"
    ).to_list() == [
        "vadas",
        "josh",
    ]
    assert g.with_side_effect("k", [1]).inject(2).store("k").cap("k").next() == [1, 2]
    assert g.V().both().barrier().count().next() == 12


def test_where_over_a_growing_side_effect_sees_each_traverser_its_own_collection(
    modern: GraphTraversalSource,
) -> None:
    g = modern
    # store() is lazy: the collection grows as traversers pass, so each where() sees the values stored so far
    seen = g.V().values("age").store("ages").where(P.within("ages")).to_list()
    assert seen == [29, 27, 32, 35]
    repeated = g.inject(1, 2, 1, 3, 2).where(P.without("kept")).store("kept").cap("kept").next()
    assert repeated == [1, 2, 3]  # each value kept the first time only: the test follows the collection
    mixed = (
        g.with_side_effect("x", [Vertex(1), "lop"])
        .V()
        .where(__.values("name").where(P.within("x")))
        .values("name")
    )
    assert mixed.to_list() == ["lop"]
    assert g.with_side_effect("x", [Vertex(1), Vertex(4)]).V().where(P.within("x")).values(
        "name"
    ).to_list() == [
        "marko",
        "josh",
    ]


def test_inject_and_constant(g: GraphTraversalSource) -> None:
    assert g.inject(1, "a", [1, 2], {"k": 1}).to_list() == [1, "a", [1, 2], {"k": 1}]
    assert g.inject({"a": 1, "b": 2}).unfold().to_list() == [{"a": 1}, {"b": 2}]
    assert g.inject(1).constant("c").to_list() == ["c"]
    assert g.inject(3, 1, 2).identity().order().to_list() == [1, 2, 3]


def test_named_group_count_grows_across_repeat_iterations(modern: GraphTraversalSource) -> None:
    g = modern
    counts = g.V(1).repeat(__.out().group_count("m").by("name")).times(2).cap("m").next()
    assert counts == {"vadas": 1, "josh": 1, "lop": 2, "ripple": 1}


def test_choose_branches_run_over_all_their_traversers(modern: GraphTraversalSource) -> None:
    g = modern
    folded = g.V().choose(__.has_label("person"), __.values("age").fold(), __.values("name").fold()).to_list()
    assert sorted(folded, key=len) == [["lop", "ripple"], [29, 27, 32, 35]]


def test_select_after_repeat_merges_unlabelled_traversers(modern: GraphTraversalSource) -> None:
    g = modern
    # only as-labels are kept for select(), so the walk is still bulked
    rows = g.V().as_("a").repeat(__.both()).times(3).as_("b").select("a", "b").by("name").to_list()
    assert len(rows) == g.V().repeat(__.both()).times(3).count().next()
    assert {"a": "marko", "b": "josh"} in rows


def test_within_keeps_gremlin_equality_over_many_candidates(modern: GraphTraversalSource) -> None:
    g = modern
    many_names = [f"nobody-{i}" for i in range(5000)] + ["josh", "vadas"]
    assert names(g.V().has("name", P.within(*many_names))) == ["josh", "vadas"]
    assert names(g.V().has("name", P.without(*many_names))) == ["lop", "marko", "peter", "ripple"]
    # numbers match across widths, never bools; NaN matches nothing
    assert names(g.V().has("age", P.within(27.0, True, float("nan"), "29"))) == ["vadas"]
    assert g.inject(True, 1, 1.0, "a", [1, 2]).is_(P.within(True, [1, 2])).to_list() == [True, [1, 2]]


def test_add_e_to_resolves_a_side_effect(modern: GraphTraversalSource) -> None:
    peter = modern.V(6).next()
    edge = modern.with_side_effect("b", peter).V(1).add_e("knows").to("b").in_v().values("name").to_list()
    assert edge == ["peter"]


def test_path_filters_and_dedup_labels_compare_by_projections(modern: GraphTraversalSource) -> None:
    g = modern
    # marko-lop-marko drops out: lop has no age to compare
    assert g.V(1).both().both().cyclic_path().by("age").count().next() == 2
    # marko and vadas are different vertices, but both are persons
    assert len(g.V(1).out("knows").simple_path().to_list()) == 2
    assert g.V(1).out("knows").simple_path().by(T.label).to_list() == []
    pairs = g.V(1).as_("a").both().as_("b").dedup("a", "b").by("age").select("b").by("name").to_list()
    assert sorted(pairs) == ["josh", "vadas"]


def test_add_e_from_to_after_its_properties(g: GraphTraversalSource) -> None:
    ends = (
        g.add_v("person")
        .as_("a")
        .add_v("person")
        .as_("b")
        .add_e("knows")
        .property("weight", 1)
        .from_("a")
        .to("b")
        .project("out", "in")
        .by(__.out_v().id_())
        .by(__.in_v().id_())
        .next()
    )
    assert ends["out"] != ends["in"]
    assert g.E().values("weight").to_list() == [1]


def test_vertex_property_takes_its_id_from_t_id(g: GraphTraversalSource) -> None:
    g.add_v("person").property("name", "marko", T.id, 100, "since", 2020).iterate()
    assert g.V().properties("name").id_().to_list() == [100]
    assert g.V().properties("name").values("since").to_list() == [2020]
    g.add_v("person").property("name", "vadas").iterate()  # generated ids continue past the given one
    assert g.V().properties("name").id_().to_list()[1] > 100
