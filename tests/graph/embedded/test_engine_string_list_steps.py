"""The 3.7 string, list and date steps, format, math, any/all, sack, branch and fail."""

from __future__ import annotations

import datetime

import pytest
from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.process.traversal import DT, Barrier, Operator, P, Scope, T, WithOptions

from lineage_platform.errors import TraversalError


def test_string_steps(g: GraphTraversalSource) -> None:
    assert g.inject("  Ab c ").trim().to_list() == ["Ab c"]
    assert g.inject("  Ab").l_trim().to_upper().to_list() == ["AB"]
    assert g.inject("Ab  ").r_trim().to_lower().to_list() == ["ab"]
    assert g.inject("a,b,c").split(",").to_list() == [["a", "b", "c"]]
    assert g.inject("lineage").substring(1, 4).to_list() == ["ine"]
    assert g.inject("lineage").substring(-3).to_list() == ["age"]
    assert g.inject("db.t").replace(".", "/").to_list() == ["db/t"]
    assert g.inject("abc").reverse().length().to_list() == [3]
    assert g.inject("db").concat(".", __.constant("t")).to_list() == ["db.t"]
    assert g.inject(1, True, None).as_string().to_list() == ["1", "true", None]
    assert g.inject(["a", "B"]).to_upper(Scope.local).to_list() == [["A", "B"]]
    with pytest.raises(TraversalError, match=r"toUpper\(\) step can only take string"):
        g.inject(1).to_upper().to_list()
    with pytest.raises(
        TraversalError, match=r"The lTrim\(local\) step can only take string or list of strings"
    ):
        g.inject([" a", 1]).l_trim(Scope.local).to_list()


def test_reverse_turns_a_path_into_a_reversed_list(modern: GraphTraversalSource) -> None:
    assert modern.V(1).out("knows").path().by("name").reverse().to_list() == [
        ["vadas", "marko"],
        ["josh", "marko"],
    ]


def test_list_steps(g: GraphTraversalSource) -> None:
    assert g.inject([1, 2]).combine([2, 3]).to_list() == [[1, 2, 2, 3]]
    assert g.inject([1, 2]).merge([2, 3]).to_list() == [{1, 2, 3}]
    assert g.inject([1, 2]).difference([2, 3]).to_list() == [{1}]
    assert g.inject([1, 2]).disjunct([2, 3]).to_list() == [{1, 3}]
    assert g.inject([1, 2]).intersect([2, 3]).to_list() == [{2}]
    assert g.inject([1, 2]).product(["a"]).to_list() == [[[1, "a"], [2, "a"]]]
    assert g.inject(["a", None, 1]).conjoin("-").to_list() == ["a-1"]
    assert g.inject({"a": 1}).merge({"b": 2}).to_list() == [{"a": 1, "b": 2}]
    with pytest.raises(TraversalError, match="combine step can only take an array"):
        g.inject("x").combine([1]).to_list()


def test_merge_argument_must_match_the_incoming_kind(g: GraphTraversalSource) -> None:
    with pytest.raises(
        TraversalError, match="expected provided argument to evaluate to a Map, encountered str"
    ):
        g.inject({"a": 1}).merge(__.constant("b")).to_list()
    with pytest.raises(TraversalError, match="traversal argument for merge step must yield an iterable type"):
        g.inject([1]).merge(__.constant({"b": 2})).to_list()
    with pytest.raises(TraversalError, match="expected argument to be iterable but got map"):
        g.inject([1]).merge({"b": 2}).to_list()
    assert g.inject({"a": 1}).merge(__.constant({"a": 2, "b": 3})).to_list() == [{"a": 2, "b": 3}]


def test_any_all(g: GraphTraversalSource) -> None:
    assert g.inject([1, 5], [6, 7]).all_(P.gt(4)).to_list() == [[6, 7]]
    assert g.inject([1, 5], [2, 3]).any_(P.gt(4)).to_list() == [[1, 5]]


def test_sack(modern: GraphTraversalSource) -> None:
    g = modern
    total = g.with_sack(0.0).V().out_e().sack(Operator.sum_).by("weight").in_v().sack().sum_().next()
    assert total == pytest.approx(3.5)
    labels = g.with_sack("x").V(1).out_e().sack(Operator.assign).by(T.label).in_v().sack().to_list()
    assert sorted(labels) == ["created", "knows", "knows"]


def test_barrier_merges_sacks_with_the_with_sack_operator(modern: GraphTraversalSource) -> None:
    g = modern
    # lop is reached three times: merged into one traverser whose sack is 1 + 1 + 1
    assert sorted(g.with_bulk(False).with_sack(1, Operator.sum_).V().out().barrier().sack().to_list()) == [
        1,
        1,
        1,
        3,
    ]
    assert sorted(g.with_sack(1, Operator.sum_).V().out().barrier().sack().to_list()) == [1, 1, 1, 3, 3, 3]
    # without a merge operator only equal sacks merge, and every traverser still counts
    assert g.with_sack(1).V().out().barrier().sack().to_list() == [1] * 6
    # normSack scales the sacks to add up to 1 before they merge back at marko
    walk = g.with_bulk(False).with_sack(1.0, Operator.sum_).V(1)
    assert walk.local(__.out("knows").barrier(Barrier.norm_sack)).in_("knows").barrier().sack().to_list() == [
        1.0
    ]
    assert g.with_sack(1.0).V(1).out().barrier(Barrier.norm_sack).sack().to_list() == [1 / 3] * 3


def test_branch_takes_every_matching_option(modern: GraphTraversalSource) -> None:
    g = modern
    picked = (
        g.V(1)
        .branch(__.values("age"))
        .option(P.lt(30), __.constant("young"))
        .option(P.gt(20), __.constant("adult"))
    )
    assert sorted(picked.to_list()) == ["adult", "young"]
    chosen = (
        g.V(1)
        .choose(__.values("age"))
        .option(P.lt(30), __.constant("young"))
        .option(P.gt(20), __.constant("adult"))
    )
    assert chosen.to_list() == ["young"]


def test_format(modern: GraphTraversalSource) -> None:
    g = modern
    assert g.V(1).format_("%{name} is %{age}").to_list() == ["marko is 29"]
    assert g.V(1).format_("%{name} has %{_} edges").by(__.both_e().count()).to_list() == ["marko has 3 edges"]
    assert g.V(3).format_("%{name} is %{age}").to_list() == []  # lop has no age: dropped


def test_math(modern: GraphTraversalSource) -> None:
    g = modern
    assert g.V(1).values("age").math("_ * 2 + 1").to_list() == [59.0]
    assert g.V(1).as_("a").out("knows").as_("b").math("b - a").by("age").to_list() == [-2.0, 3.0]
    assert g.inject(4).math("sqrt(_) ^ 3").to_list() == [8.0]
    assert g.inject(1).math("_ / 0").to_list() == [float("inf")]
    # exp4j's functions without parentheses apply to the rest of their group
    assert g.inject(3).math("abs _ - 5").to_list() == [2.0]
    assert g.inject(3).math("(sqrt _ + 1) * 2").to_list() == [4.0]
    with pytest.raises(TraversalError, match="cannot evaluate"):
        g.inject(1).math("__import__('os')").to_list()


def test_date_steps(g: GraphTraversalSource) -> None:
    start = datetime.datetime(2023, 8, 2, tzinfo=datetime.UTC)
    assert g.inject("2023-08-02T00:00:00Z").as_date().to_list() == [start]
    assert g.inject(1694017707000).as_date().to_list() == [
        datetime.datetime(2023, 9, 6, 16, 28, 27, tzinfo=datetime.UTC)
    ]
    assert g.inject(start).date_add(DT.hour, 2).to_list() == [start + datetime.timedelta(hours=2)]
    later = start + datetime.timedelta(days=7)
    assert g.inject(later).date_diff(start).to_list() == [7 * 24 * 3600]
    with pytest.raises(TraversalError, match="Can't parse"):
        g.inject("not a date").as_date().to_list()


def test_fail_stops_the_traversal(g: GraphTraversalSource) -> None:
    assert g.inject(1).where(__.is_(2)).fail("boom").to_list() == []
    with pytest.raises(TraversalError, match="boom"):
        g.inject(1).fail("boom").to_list()


def test_index(g: GraphTraversalSource) -> None:
    assert g.inject(["a", "b"]).index().to_list() == [[["a", 0], ["b", 1]]]
    indexed = g.inject(["a", "b"]).index().with_(WithOptions.indexer, WithOptions.map).to_list()
    assert indexed == [{0: "a", 1: "b"}]
