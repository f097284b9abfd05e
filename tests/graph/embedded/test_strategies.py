"""The engine's strategies: each rewrite on its own, their order, explain(), and the results they keep."""

from __future__ import annotations

from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.process.traversal import Merge

from lineage_platform.graph.embedded.step_calls import StepCall, group_steps
from lineage_platform.graph.embedded.strategies import (
    STRATEGIES,
    Context,
    apply_strategies,
    explain,
    fold_start_filters,
    fuse_inject_merge,
    infix_connectives,
    navigation_walk,
)

ROOT = Context(anonymous=False)


def _calls(traversal) -> list[StepCall]:
    return group_steps(traversal.bytecode.step_instructions)


def _text(calls: list[StepCall]) -> list[str]:
    return [str(c) for c in calls]


def test_the_order_is_fold_connectives_walk_fuse() -> None:
    assert [s.__name__ for s in STRATEGIES] == [
        "fold_start_filters",
        "infix_connectives",
        "navigation_walk",
        "fuse_inject_merge",
    ]


def test_fold_start_filters_folds_has_steps_into_v_and_properties_into_add_v() -> None:
    calls = _calls(__.V().has("a", 1).has_label("t").out("x").has("b", 2))
    assert _text(fold_start_filters(calls, ROOT)) == [
        "V(has('a', 1), hasLabel('t'))",
        "out('x')",
        "has('b', 2)",
    ]
    adds = _calls(__.add_v("t").property("k", 1).property("j", 2))
    assert _text(fold_start_filters(adds, ROOT)) == ["addV('t', property('k', 1), property('j', 2))"]
    # from()/to() written after a property() modulate the addE() it folds into
    edge = _calls(__.add_e("e").property("k", 1).from_("a").to("b"))
    assert _text(fold_start_filters(edge, ROOT)) == ["addE('e', property('k', 1)).from('a').to('b')"]


def test_fold_start_filters_leaves_modulated_steps_and_its_input_alone() -> None:
    calls = _calls(__.V().has("a", 1).by("x"))  # a has() with a modulator is not folded
    assert _text(fold_start_filters(calls, ROOT)) == ["V()", "has('a', 1).by('x')"]
    original = _calls(__.V().has("a", 1))
    fold_start_filters(original, ROOT)
    assert _text(original) == ["V()", "has('a', 1)"]  # a strategy returns new steps, never edits its input


def test_infix_connectives_bind_and_tighter_than_or_and_keep_the_root_start_outside() -> None:
    calls = _calls(__.V().as_("a").out("x").and_().out("y").or_().out("z"))
    assert _text(infix_connectives(calls, ROOT)) == [
        "V()",
        "as('a')",
        "or([and([out('x')], [out('y')])], [out('z')])",
    ]
    anonymous = _calls(__.out("x").or_().out("y"))
    assert _text(infix_connectives(anonymous, Context())) == ["or([out('x')], [out('y')])"]
    plain = _calls(__.out("x").and_(__.out("y")))  # and(traversals) is a step already
    assert infix_connectives(plain, Context()) is plain


def test_navigation_walk_absorbs_dedup_and_id_after_an_emitting_repeat() -> None:
    [repeat] = navigation_walk(_calls(__.repeat(__.out("x").in_("y")).emit().dedup().label()), Context())
    assert repeat.walk is not None and repeat.walk.distinct and repeat.walk.project == "label"
    assert str(repeat.walk) == "walk: out('x').in('y') each vertex once, as label"
    limited = navigation_walk(_calls(__.repeat(__.both()).times(3).dedup()), Context())
    assert _text(limited) == ["repeat(__.both()).times(3) {walk: both() 3 times}", "dedup()"]


def test_navigation_walk_needs_a_pure_navigation_body_and_no_paths_or_sack() -> None:
    for traversal in (
        __.repeat(__.out("x").has("k", 1)).emit(),  # a filter in the body
        __.repeat(__.out("x")).until(__.has("k", 1)),  # a conditional until()
        __.repeat(__.out_e("x")).emit(),  # edges, not vertices
    ):
        assert all(c.walk is None for c in navigation_walk(_calls(traversal), Context()))
    walkable = _calls(__.repeat(__.out("x")).emit())
    assert navigation_walk(walkable, Context(full_paths=True))[0].walk is None
    assert navigation_walk(walkable, Context(sack=True))[0].walk is None
    assert navigation_walk(walkable, Context())[0].walk is not None


def test_explain_prints_the_steps_before_and_after_each_strategy() -> None:
    lines = explain(__.V().has("a", 1).repeat(__.out("x")).emit().dedup()).splitlines()
    assert [line.split()[0] for line in lines] == [
        "original",
        "fold_start_filters",
        "infix_connectives",
        "navigation_walk",
        "fuse_inject_merge",
    ]
    assert lines[0].endswith("V(), has('a', 1), repeat(__.out('x')).emit(), dedup()")
    assert lines[-1].endswith("V(has('a', 1)), repeat(__.out('x')).emit() {walk: out('x') each vertex once}")
    assert len(explain(__.out("x"), strategies=()).splitlines()) == 1


def test_fuse_inject_merge_gives_a_root_inject_of_maps_to_the_merge_step() -> None:
    rows = [{"match": {"k": 1}}, {"match": {"k": 2}}]
    upsert = __.merge_v(__.select("match")).option(Merge.on_create, __.select("create"))
    fused = fuse_inject_merge(_calls(__.inject(*rows).merge_v(__.select("match")).id_()), ROOT)
    assert [(c.name, c.rows) for c in fused] == [("mergeV", rows), ("id", None)]
    unfolded = fuse_inject_merge(_calls(__.inject(rows).unfold().merge_e(__.select("match"))), ROOT)
    assert [(c.name, c.rows) for c in unfolded] == [("mergeE", rows)]
    assert str(fuse_inject_merge(_calls(__.inject(*rows).merge_v(upsert)), ROOT)[0]).endswith(
        "{over 2 injected rows}"
    )


def test_fuse_inject_merge_leaves_every_other_shape_alone() -> None:
    rows = [{"match": {"k": 1}}]
    for kept, context in (
        (__.inject(*rows).merge_v(), Context()),  # a nested traversal: its inject() also passes its input on
        (
            __.inject(*rows).merge_v(),
            Context(anonymous=False, full_paths=True),
        ),  # unfold() would extend paths
        (__.inject(*rows).identity().merge_v(), ROOT),
        (__.inject(*rows).as_("a").merge_v(), ROOT),
        (__.inject(rows, rows).unfold().merge_v(), ROOT),  # unfold() of two lists
        (__.inject({"k": 1}, "not a map").merge_v(), ROOT),
        (__.inject(*rows).add_v("x"), ROOT),
    ):
        calls = _calls(kept)
        assert _text(fuse_inject_merge(calls, context)) == _text(calls)


def test_apply_strategies_runs_any_subset_in_order() -> None:
    calls = _calls(__.V().has("a", 1).out("x").or_().out("y"))
    assert _text(apply_strategies(calls, ROOT, (fold_start_filters,))) == [
        "V(has('a', 1))",
        "out('x')",
        "or()",
        "out('y')",
    ]
    assert _text(apply_strategies(calls, ROOT)) == ["V(has('a', 1))", "or([out('x')], [out('y')])"]


def test_results_are_the_same_with_and_without_the_walk(modern: GraphTraversalSource) -> None:
    walked = modern.V(1).repeat(__.out()).emit().dedup().values("name").to_list()
    general = modern.V(1).repeat(__.out().identity()).emit().dedup().values("name").to_list()
    assert sorted(walked) == sorted(general) == ["josh", "lop", "ripple", "vadas"]
    ids = modern.V(1).repeat(__.out()).emit().dedup().id_().to_list()
    assert sorted(ids) == [2, 3, 4, 5]
    counted = modern.V(1).repeat(__.out()).times(2).count().next()
    assert counted == modern.V(1).repeat(__.out().identity()).times(2).count().next() == 2


def test_connectives_and_folds_keep_their_results(modern: GraphTraversalSource) -> None:
    both = modern.V().has_label("person").where(__.out("created").and_().out("knows")).values("name")
    assert both.to_list() == ["marko"]
    either = modern.V().where(__.has("name", "marko").or_().has("name", "lop")).values("name").to_list()
    assert sorted(either) == ["lop", "marko"]
    assert modern.V().has("person", "name", "josh").out("created").count().next() == 2
