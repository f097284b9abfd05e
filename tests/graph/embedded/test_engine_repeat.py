"""repeat() with times/until/emit before and after, loops(), simplePath/cyclicPath, and the fast navigation walk."""

from __future__ import annotations

from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.process.traversal import P, T


def test_times_after_and_before(modern: GraphTraversalSource) -> None:
    g = modern
    assert sorted(g.V(1).repeat(__.out()).times(2).values("name").to_list()) == ["lop", "ripple"]
    assert sorted(g.V(1).times(2).repeat(__.out()).values("name").to_list()) == ["lop", "ripple"]


def test_emit_after_excludes_start_and_emit_before_includes_it(modern: GraphTraversalSource) -> None:
    g = modern
    after = g.V(1).repeat(__.out()).emit().values("name").to_list()
    assert sorted(after) == ["josh", "lop", "lop", "ripple", "vadas"]
    before = g.V(1).emit().repeat(__.out()).values("name").to_list()
    assert sorted(before) == ["josh", "lop", "lop", "marko", "ripple", "vadas"]


def test_until_after_is_do_while_and_before_is_while(modern: GraphTraversalSource) -> None:
    g = modern
    do_while = g.V(1).repeat(__.out()).until(__.has("name", "marko")).to_list()
    assert do_while == []  # marko is never reached again, leaves without out-edges drop out
    while_do = g.V(1).until(__.has("name", "marko")).repeat(__.out()).values("name").to_list()
    assert while_do == ["marko"]
    leaves = g.V(1).repeat(__.out()).until(__.out_e().count().is_(0)).values("name").to_list()
    assert sorted(leaves) == ["lop", "lop", "ripple", "vadas"]


def test_emit_with_predicate_and_times(modern: GraphTraversalSource) -> None:
    g = modern
    emitted = g.V(1).repeat(__.out()).times(2).emit(__.has("lang")).values("name").to_list()
    assert sorted(emitted) == ["lop", "lop", "ripple"]


def test_loops_and_named_loops(modern: GraphTraversalSource) -> None:
    g = modern
    assert sorted(g.V(1).repeat(__.out()).until(__.loops().is_(2)).values("name").to_list()) == [
        "lop",
        "ripple",
    ]
    named = g.V(1).repeat("a", __.out()).until(__.loops("a").is_(1)).values("name").to_list()
    assert sorted(named) == ["josh", "lop", "vadas"]


def test_paths_through_repeat_and_simple_path(modern: GraphTraversalSource) -> None:
    g = modern
    paths = g.V(1).repeat(__.out()).times(2).path().by("name").to_list()
    assert sorted(p.objects for p in paths) == [["marko", "josh", "lop"], ["marko", "josh", "ripple"]]
    simple = (
        g.V(1).repeat(__.both().simple_path()).until(__.has("name", "ripple")).path().by("name").to_list()
    )
    assert sorted(p.objects for p in simple) == [
        ["marko", "josh", "ripple"],
        ["marko", "lop", "josh", "ripple"],
    ]
    assert g.V(1).both().both().cyclic_path().count().next() == 3
    assert g.V(1).both().both().simple_path().count().next() == 4


def test_bulked_walk_counts_every_path(g: GraphTraversalSource) -> None:
    # a diamond a->b->d, a->c->d: d is reached twice, so it is counted twice unless deduplicated
    for name in "abcd":
        g.add_v("column").property("name", name).iterate()
    for out_name, in_name in ["ab", "ac", "bd", "cd"]:
        g.V().has("name", out_name).add_e("flowsTo").to(__.V().has("name", in_name)).iterate()
    assert g.V().has("name", "a").repeat(__.out("flowsTo")).times(2).count().next() == 2
    assert g.V().has("name", "a").repeat(__.out("flowsTo")).times(2).dedup().count().next() == 1
    assert g.V().has("name", "a").repeat(__.out("flowsTo")).emit().count().next() == 4
    reached = g.V().has("name", "a").repeat(__.out("flowsTo")).emit().dedup().values("name").to_list()
    assert sorted(reached) == ["b", "c", "d"]


def test_distinct_walk_matches_the_generic_interpreter(g: GraphTraversalSource) -> None:
    # a cycle back to the start: the start is emitted too once reached again
    for name in "abcde":
        g.add_v("column").property("name", name).iterate()
    for out_name, in_name in ["ab", "bc", "ca", "cd", "de", "ae"]:
        g.V().has("name", out_name).add_e("flowsTo").to(__.V().has("name", in_name)).iterate()
    start = g.V().has("name", "a")
    fast = start.clone().repeat(__.out("flowsTo")).emit().times(3).dedup().values("name").to_list()
    # the same walk with a path step forces the generic, path-tracking interpreter
    generic = (
        g.V().has("name", "a").repeat(__.out("flowsTo")).emit().times(3).dedup().path().by("name").to_list()
    )
    assert sorted(fast) == sorted(p.objects[-1] for p in generic) == ["a", "b", "c", "d", "e"]
    within_one = (
        g.V().has("name", "a").emit().repeat(__.out("flowsTo")).times(1).dedup().values("name").to_list()
    )
    assert sorted(within_one) == ["a", "b", "e"]


def test_repeat_without_stop_condition_runs_until_traversers_die_out(modern: GraphTraversalSource) -> None:
    assert modern.V(1).repeat(__.out()).to_list() == []
    assert modern.V().has(T.label, P.within("person")).repeat(__.in_("knows")).count().next() == 0


def test_distinct_walk_with_folded_id_and_label(g: GraphTraversalSource) -> None:
    for name in "abc":
        g.add_v("column").property("name", name).iterate()
    g.V().has("name", "a").add_e("flowsTo").to(__.V().has("name", "b")).iterate()
    g.V().has("name", "b").add_e("flowsTo").to(__.V().has("name", "c")).iterate()
    ids = g.V().has("name", "c").repeat(__.in_("flowsTo")).emit().dedup().id_().to_list()
    assert sorted(ids) == sorted(g.V().has("name", P.within("a", "b")).id_().to_list())
    labels = g.V().has("name", "c").emit().repeat(__.in_("flowsTo")).dedup().label().to_list()
    assert labels == ["column", "column", "column"]
