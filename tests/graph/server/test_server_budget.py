"""A logged-in client's runaway request: cancellation reaches the steps that grow, an item budget bounds memory,
and a request cannot lift the server's evaluation timeout."""

from __future__ import annotations

import time

import pytest
from gremlin_python.driver.protocol import GremlinServerError
from gremlin_python.process.anonymous_traversal import traversal
from gremlin_python.process.graph_traversal import __
from gremlin_python.process.traversal import Operator, Scope

from lineage_platform.errors import TraversalInterrupted, TraversalTooLarge
from lineage_platform.graph.embedded.cancel import Cancellation


def _doubling(times: int, source=__):
    """Each repeat() iteration doubles the bulk: 2**times copies of 1 once folded."""
    return source.inject(1).repeat(__.union(__.identity(), __.identity())).times(times)


def test_a_request_over_the_item_budget_gets_a_clear_error(serve_graph, embedded_graph, remote) -> None:
    server = serve_graph(embedded_graph, max_items=1_000_000)
    g = traversal().with_remote(remote(server.url))
    started = time.monotonic()
    with pytest.raises(
        GremlinServerError, match=r"fold\(\) would hold 16,777,216 items, more than the 1,000,000"
    ):
        _doubling(24, g).fold().count(Scope.local).next()
    assert time.monotonic() - started < 2  # refused before building the list
    assert _doubling(10, g).fold().count(Scope.local).next() == 1024  # within the budget


@pytest.mark.parametrize(
    "grow",
    [
        lambda t: t.fold(),
        lambda t: t.group().by(__.constant("k")),
        lambda t: t.aggregate("x").cap("x"),
        lambda t: t.fold(0, Operator.sum_),
    ],
    ids=["fold", "group", "aggregate", "fold-with-seed"],
)
def test_cancellation_reaches_the_steps_that_grow(embedded_graph, grow) -> None:
    bytecode = grow(_doubling(26)).bytecode
    started = time.monotonic()
    with pytest.raises(TraversalInterrupted):
        embedded_graph.execute(bytecode, None, Cancellation(0.05))  # well before the ~0.3 s the list takes
    assert time.monotonic() - started < 2  # ~67M copies would take far longer to build


def test_the_budget_counts_barriers_the_repeat_frontier_and_the_result(embedded_graph) -> None:
    # path() keeps the traversers apart, so the frontier doubles in traversers, not in bulk
    frontier = __.inject(1).repeat(__.union(__.identity(), __.constant(2))).times(30).path().bytecode
    with pytest.raises(TraversalTooLarge, match=r"repeat\(\) would hold"):
        embedded_graph.execute(frontier, None, Cancellation(max_items=5000))
    with pytest.raises(TraversalTooLarge, match=r"order\(\) would hold"):
        embedded_graph.execute(__.inject(*range(5000)).order().bytecode, None, Cancellation(max_items=3000))
    with pytest.raises(TraversalTooLarge, match="the result would hold"):
        embedded_graph.execute(__.inject(*range(5000)).bytecode, None, Cancellation(max_items=3000))


def test_a_cancelled_fold_frees_its_worker(serve_graph, embedded_graph, remote) -> None:
    server = serve_graph(embedded_graph, workers=1, max_items=None, evaluation_timeout=0.3)
    g = traversal().with_remote(remote(server.url))
    with pytest.raises(GremlinServerError, match="598"):
        _doubling(28, g).fold().count(Scope.local).next()
    started = time.monotonic()
    assert g.inject(1).next() == 1  # the only worker is free again
    assert time.monotonic() - started < 2


def test_a_request_cannot_lift_the_servers_evaluation_timeout(
    serve_graph, blocking_graph, raw_client
) -> None:
    server = serve_graph(blocking_graph, evaluation_timeout=0.3)
    client = raw_client(server.url, read_timeout=5)
    blocked = __.inject(1)
    blocked.bytecode.add_step("block")
    for millis in (0, 600_000):
        started = time.monotonic()
        client.send("traversal", "bytecode", {"gremlin": blocked.bytecode, "evaluationTimeout": millis})
        reply = client.read()
        assert reply["status"]["code"] == 598, reply
        assert "timeout of 300 ms" in reply["status"]["message"]
        assert time.monotonic() - started < 3
    blocking_graph.release.set()


def test_a_transaction_kept_alive_past_its_lease_is_rolled_back(serve_graph, embedded_graph, remote) -> None:
    url = serve_graph(embedded_graph, transaction_lease=1.0, session_timeout=60).url
    g = traversal().with_remote(remote(url))
    tx = g.tx()
    gtx = tx.begin()
    gtx.add_v("table").property("name", "uncommitted").iterate()
    for _ in range(3):  # a read every 0.2 s: never idle, the lock stays taken
        assert gtx.V().count().next() == 1
        time.sleep(0.2)
    started = time.monotonic()
    assert g.V().count().next() == 0  # another client waits at most until the lease runs out, not 5 s
    assert time.monotonic() - started < 2
    with pytest.raises(
        GremlinServerError, match=r"499: session .* 1 s transaction lease and was rolled back"
    ):
        gtx.V().count().next()
    g.add_v("table").property("name", "after").iterate()
    assert g.V().values("name").to_list() == ["after"]


def test_a_big_result_is_encoded_off_the_event_loop(serve_graph, embedded_graph, raw_client) -> None:
    server = serve_graph(embedded_graph)
    big, other = raw_client(server.url, read_timeout=60), raw_client(server.url)
    million = _doubling(20).fold().bytecode  # one value: a list of 1,048,576 ones, ~1 s to encode here
    big.send("traversal", "bytecode", {"gremlin": million})
    round_trips = []
    since = time.monotonic()
    while time.monotonic() - since < 1.5:
        sent = time.monotonic()
        other.send("traversal", "bytecode", {"gremlin": __.inject(2).bytecode})
        assert other.read()["status"]["code"] == 200
        round_trips.append(time.monotonic() - sent)
    reply = big.read()
    assert len(reply["result"]["data"][0].object) == 2**20
    assert max(round_trips) < 0.5, round_trips
