"""The compile cache: a traversal run again reuses its compiled pipelines, and sees only its own execution (the
graph as it is now, its own deadline, its own loop state and side effects)."""

from __future__ import annotations

import time

import pytest
from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.process.traversal import T
from gremlin_python.structure.graph import Vertex

from lineage_platform.errors import TraversalInterrupted
from lineage_platform.graph.embedded.pipeline import Compiler


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many step lists the engine compiled so far (one entry per compilation)."""
    calls: list[int] = []
    original = Compiler._compile

    def counted(self: Compiler, bytecode: object, anonymous: bool) -> object:
        calls.append(1)
        return original(self, bytecode, anonymous)

    monkeypatch.setattr(Compiler, "_compile", counted)
    return calls


def _chain(g: GraphTraversalSource, names: list[str]) -> None:
    previous = None
    for name in names:
        vertex = g.add_v("table").property("name", name).next()
        if previous is not None:
            g.V(previous.id).add_e("feeds").to(__.V(vertex.id)).iterate()
        previous = vertex


def test_a_traversal_run_again_compiles_nothing_and_sees_the_graph_as_it_is_now(
    g: GraphTraversalSource, compiles: list[int]
) -> None:
    _chain(g, ["a", "b", "c"])
    downstream = g.V().has("name", "a").repeat(__.out("feeds").dedup()).emit().values("name")
    assert sorted(downstream.clone().to_list()) == ["b", "c"]
    compiled = len(compiles)
    assert sorted(downstream.clone().to_list()) == ["b", "c"]  # the repeat's seen vertices start afresh
    assert len(compiles) == compiled
    g.V().has("name", "c").add_e("feeds").to(__.add_v("table").property("name", "d")).iterate()
    compiled = len(compiles)  # (writes are compiled at every execution)
    assert sorted(downstream.clone().to_list()) == ["b", "c", "d"]
    g.V().has("name", "b").drop().iterate()
    assert downstream.clone().to_list() == []  # b is gone: nothing downstream of a any more
    assert len(compiles) == compiled + 1  # the drop; neither read


def test_only_the_steps_that_differ_are_compiled_again(g: GraphTraversalSource, compiles: list[int]) -> None:
    _chain(g, ["a", "b", "c"])
    walk = __.project("name", "reach").by("name").by(__.repeat(__.out("feeds")).emit().count())
    assert g.V().has("name", "a").map(walk).to_list() == [{"name": "a", "reach": 2}]
    compiled = len(compiles)
    assert g.V().has("name", "b").map(walk).to_list() == [{"name": "b", "reach": 1}]
    assert len(compiles) == compiled + 1  # the root (another name); the nested walk was kept


def test_values_equal_in_python_but_not_in_gremlin_are_not_confused(g: GraphTraversalSource) -> None:
    ones = [g.inject(0).constant(value).next() for value in (1, True, 1.0)]
    assert [type(one) for one in ones] == [int, bool, float]


def test_a_kept_pipeline_honours_each_execution_s_own_deadline(g: GraphTraversalSource) -> None:
    g.add_v("table").as_("a").add_e("self").to("a").iterate()
    with pytest.raises(TraversalInterrupted):
        g.with_("evaluationTimeout", 100).V().repeat(__.out()).times(10**9).count().to_list()
    started = time.monotonic()
    with pytest.raises(TraversalInterrupted):
        g.with_("evaluationTimeout", 300).V().repeat(__.out()).times(10**9).count().to_list()
    assert time.monotonic() - started >= 0.3  # not the first execution's deadline, long past


def test_side_effects_start_empty_at_every_execution(g: GraphTraversalSource) -> None:
    _chain(g, ["a", "b"])
    for _ in range(2):
        assert sorted(g.V().aggregate("x").cap("x").next(), key=lambda v: v.id) == sorted(
            g.V().to_list(), key=lambda v: v.id
        )
        assert g.V().group().by("name").by(__.count()).next() == {"a": 1, "b": 1}


def test_a_traversal_naming_a_stored_element_finds_the_element_stored_now(g: GraphTraversalSource) -> None:
    g.add_v("table").property(T.id, 1).property("name", "old").iterate()
    assert g.inject(Vertex(1)).values("name").to_list() == ["old"]
    g.V(1).drop().iterate()
    g.add_v("table").property(T.id, 1).property("name", "new").iterate()
    assert g.inject(Vertex(1)).values("name").to_list() == ["new"]
