"""Cooperative cancellation: runaway traversals stop at their deadline or when cancelled, roll back and release
the graph lock."""

from __future__ import annotations

import threading
import time

import pytest
from gremlin_python.process.graph_traversal import GraphTraversal, GraphTraversalSource, __

from lineage_platform.errors import TraversalError, TraversalInterrupted
from lineage_platform.graph.embedded.cancel import Cancellation
from lineage_platform.graph.embedded.engine import EmbeddedGraph

SLACK = 1.5  # seconds a cancelled traversal may take to notice, on a busy machine


def _runaways(g: GraphTraversalSource) -> dict[str, GraphTraversal]:
    """Traversals that never end on the cycle (within any test's patience)."""
    fan_out = g.V()
    for _ in range(60):  # 2**60 traversers
        fan_out = fan_out.both()
    return {
        "navigation repeat": g.V().repeat(__.out()).times(10**9).count(),
        "generic repeat": g.inject(1).repeat(__.identity()),
        "repeat with paths": g.V().repeat(__.both().as_("x")).emit().select("x").count(),
        "fan-out chain": fan_out.count(),
    }


@pytest.mark.parametrize("kind", ["navigation repeat", "generic repeat", "repeat with paths"])
def test_evaluation_timeout_stops_a_runaway_traversal_in_process(
    cycle: GraphTraversalSource, graph: EmbeddedGraph, kind: str
) -> None:
    runaway = _runaways(cycle.with_("evaluationTimeout", 200))[kind]
    started = time.monotonic()
    with pytest.raises(TraversalInterrupted, match="evaluation timeout"):
        runaway.to_list()
    assert 0.2 <= time.monotonic() - started < 0.2 + SLACK
    assert graph._lock.holder is None
    cycle.add_v("node").iterate()  # the graph lock was released at once (lock_timeout is 2 s)
    assert cycle.V().count().next() == 3


def test_cancel_from_another_thread_stops_a_traversal(
    cycle: GraphTraversalSource, graph: EmbeddedGraph
) -> None:
    cancellation = Cancellation()
    threading.Timer(0.2, cancellation.cancel, ("stopped by the test",)).start()
    runaway = _runaways(cycle)["fan-out chain"]
    with pytest.raises(TraversalInterrupted, match="stopped by the test"):
        graph.execute(runaway.bytecode, cancellation=cancellation)
    with pytest.raises(TraversalInterrupted):  # a cancelled Cancellation stops the next execution at once
        graph.execute(cycle.V().count().bytecode, cancellation=cancellation)


def test_an_interrupted_statement_rolls_back_its_whole_transaction(
    cycle: GraphTraversalSource, graph: EmbeddedGraph
) -> None:
    tx = graph.begin()
    graph.execute(cycle.V().has("name", "a").property("name", "renamed").bytecode, tx)
    with pytest.raises(TraversalInterrupted):
        graph.execute(_runaways(cycle.with_("evaluationTimeout", 100))["generic repeat"].bytecode, tx)
    assert not tx.is_open
    cycle.V().has("name", "a").property("name", "written after").iterate()  # the lock is free
    assert sorted(cycle.V().values("name").to_list()) == ["b", "written after"]


def test_waiting_for_the_graph_lock_can_be_cancelled(graph: EmbeddedGraph, g: GraphTraversalSource) -> None:
    tx = graph.begin()
    graph.execute(g.add_v("node").bytecode, tx)
    errors: list[BaseException] = []

    def wait_for_lock() -> None:
        try:
            graph.execute(g.with_("evaluationTimeout", 200).V().count().bytecode)
        except BaseException as exc:
            errors.append(exc)

    started = time.monotonic()
    waiter = threading.Thread(target=wait_for_lock)
    waiter.start()
    waiter.join(timeout=5)
    elapsed = time.monotonic() - started
    tx.rollback()
    assert len(errors) == 1 and isinstance(errors[0], TraversalInterrupted)
    assert elapsed < 0.2 + SLACK < graph._lock.timeout + 0.2  # not the busy error after lock_timeout


def test_with_options_are_accepted_in_process(g: GraphTraversalSource) -> None:
    assert g.with_("evaluationTimeout", 0).with_("batchSize", 2).inject(1, 2).to_list() == [1, 2]
    with pytest.raises(TraversalError, match="evaluationTimeout must be milliseconds"):
        g.with_("evaluationTimeout", -5).inject(1).to_list()
