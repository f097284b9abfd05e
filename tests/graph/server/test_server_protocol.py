"""The server's protocol behaviour over real WebSockets, on a stand-in graph whose traversals can block.

Engine behaviour (reads, writes, isolation) is tested in test_server_engine.py.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest
from gremlin_python.driver.protocol import GremlinServerError
from gremlin_python.process.anonymous_traversal import traversal
from gremlin_python.process.graph_traversal import __

from lineage_platform.graph.embedded.server import Authenticator, add_user

GRAPHBINARY = b"\x20application/vnd.graphbinary-v1.0"


def _bytecode(*steps):
    traversal_ = __.start()
    for name, *args in steps:
        traversal_.bytecode.add_step(name, *args)
    return traversal_.bytecode


def _blocking(traversal_):
    """Append the stand-in graph's ``block`` step, which gremlinpython has no method for."""
    traversal_.bytecode.add_step("block")
    return traversal_


def test_results_are_streamed_in_batches(serve_graph, blocking_graph, raw_client, remote) -> None:
    server = serve_graph(blocking_graph)
    client = raw_client(server.url)
    client.send("traversal", "bytecode", {"gremlin": _bytecode(["inject", *range(10)]), "batchSize": 2})
    frames = client.read_until_final()
    assert [f["status"]["code"] for f in frames] == [206, 206, 206, 206, 200]
    assert [t.object for f in frames for t in f["result"]["data"]] == list(range(10))
    assert frames[-1]["status"]["attributes"]["host"].startswith("/127.0.0.1:")

    client.send("traversal", "bytecode", {"gremlin": _bytecode(["inject"])})
    assert client.read()["status"]["code"] == 204

    g = traversal().with_remote(remote(server.url))
    assert g.with_("batchSize", 2).inject(*range(10)).to_list() == list(range(10))
    assert g.inject().to_list() == []


def test_bad_requests_get_error_statuses_and_the_connection_stays_usable(
    serve_graph, blocking_graph, raw_client
) -> None:
    client = raw_client(serve_graph(blocking_graph).url)

    client.send_frame(GRAPHBINARY + b"\x81" + uuid.uuid4().bytes + b"\xff\xff")
    assert client.read()["status"]["code"] == 498
    op_and_processor = b"\x00\x00\x00\x08bytecode\x00\x00\x00\x09traversal"
    unknown_type_arg = b"\x00\x00\x00\x01" + b"\x03\x00\x00\x00\x00\x07gremlin" + b"\x99\x00"
    client.send_frame(GRAPHBINARY + b"\x81" + uuid.uuid4().bytes + op_and_processor + unknown_type_arg)
    assert client.read()["status"]["code"] == 497
    client.send("traversal", "nonsense", {})
    reply = client.read()["status"]
    assert reply["code"] == 498 and "unknown op 'nonsense'" in reply["message"]
    client.send("traversal", "bytecode", {"aliases": {"g": "g"}})
    assert client.read()["status"]["code"] == 499
    client.send("traversal", "bytecode", {"gremlin": _bytecode(["inject", 1]), "aliases": {"g": "other"}})
    reply = client.read()["status"]
    assert reply["code"] == 499 and "'other' is not configured" in reply["message"]
    client.send("traversal", "bytecode", {"gremlin": _bytecode(["inject", 1]), "batchSize": -1})
    assert client.read()["status"]["code"] == 499
    client.send("traversal", "bytecode", {"gremlin": _bytecode(["out"])})
    reply = client.read()["status"]
    assert reply["code"] == 500 and "out()" in reply["message"]
    assert reply["attributes"]["exceptions"] == ["UnsupportedStepError"]

    client.send("traversal", "bytecode", {"gremlin": _bytecode(["opaque"])})
    reply = client.read()["status"]
    assert (
        reply["code"] == 599 and "no GraphBinary type for a value of Python type object" in reply["message"]
    )

    client.send("traversal", "bytecode", {"gremlin": _bytecode(["inject", 7])})
    assert client.read()["result"]["data"][0].object == 7


def test_oversized_frames_drop_only_their_sender(serve_graph, blocking_graph, raw_client, remote) -> None:
    server = serve_graph(blocking_graph, max_frame_bytes=64 * 1024)
    g = traversal().with_remote(remote(server.url))
    assert g.inject(1).to_list() == [1]

    greedy = raw_client(server.url)
    greedy.send("traversal", "bytecode", {"gremlin": _bytecode(["inject", "x" * 100_000])})
    with pytest.raises(RuntimeError, match="closed"):
        greedy.read()
    assert g.inject(2).to_list() == [2]


def test_slow_traversals_time_out_while_others_are_served(serve_graph, blocking_graph, remote) -> None:
    server = serve_graph(blocking_graph, evaluation_timeout=0.3)
    g = traversal().with_remote(remote(server.url))
    started = time.monotonic()
    with pytest.raises(GremlinServerError, match="598: evaluation exceeded the timeout of 300 ms"):
        _blocking(g.inject(1)).to_list()
    assert time.monotonic() - started < 3
    assert g.inject(2).to_list() == [2]  # the server still answers while the abandoned worker blocks
    with pytest.raises(GremlinServerError, match="598"):
        _blocking(g.with_("evaluationTimeout", 100).inject(1)).to_list()
    blocking_graph.release.set()


def test_a_timed_out_transaction_is_rolled_back_and_its_session_refused(
    wait_until, serve_graph, blocking_graph, remote
) -> None:
    server = serve_graph(blocking_graph, evaluation_timeout=0.3)
    g = traversal().with_remote(remote(server.url))
    tx = g.tx()
    gtx = tx.begin()
    assert gtx.inject(1).to_list() == [1]
    with pytest.raises(GremlinServerError, match="598"):
        _blocking(gtx.inject(1)).to_list()
    blocking_graph.release.set()
    assert wait_until(lambda: not blocking_graph.lock.locked())
    with pytest.raises(GremlinServerError, match=r"499: session .* timed out"):
        gtx.inject(1).to_list()


def test_a_disconnect_rolls_back_the_clients_transaction(
    wait_until, serve_graph, blocking_graph, raw_client
) -> None:
    server = serve_graph(blocking_graph)
    client = raw_client(server.url)
    client.send("session", "bytecode", {"gremlin": _bytecode(["inject", 1]), "session": "s-1"})
    assert client.read()["status"]["code"] == 200
    assert blocking_graph.lock.locked()

    intruder = raw_client(server.url)
    intruder.send("session", "bytecode", {"gremlin": _bytecode(["inject", 1]), "session": "s-1"})
    reply = intruder.read()["status"]
    assert reply["code"] == 499 and "another connection" in reply["message"]

    client.close()
    assert wait_until(lambda: not blocking_graph.lock.locked())
    assert len(server.server.sessions) == 0


def test_idle_transactions_are_rolled_back(wait_until, serve_graph, blocking_graph, raw_client) -> None:
    server = serve_graph(blocking_graph, session_timeout=0.2)
    client = raw_client(server.url)
    client.send("session", "bytecode", {"gremlin": _bytecode(["inject", 1]), "session": "s-1"})
    assert client.read()["status"]["code"] == 200
    assert wait_until(lambda: not blocking_graph.lock.locked())
    client.send("session", "bytecode", {"gremlin": _bytecode(["inject", 1]), "session": "s-1"})
    reply = client.read()["status"]
    assert reply["code"] == 499 and "idle for more than 0.2 s" in reply["message"]


def test_a_client_that_stops_reading_is_dropped_and_rolled_back(
    wait_until, serve_graph, blocking_graph, raw_client
) -> None:
    server = serve_graph(blocking_graph, write_timeout=0.5)
    slow = raw_client(server.url)
    slow.send("session", "bytecode", {"gremlin": _bytecode(["inject", 1]), "session": "s-1"})
    assert slow.read()["status"]["code"] == 200
    # ~40 MB of results that the client never reads: the socket buffers fill and the server's write stalls
    big = _bytecode(["big", 4000, 10_000])
    slow.send("session", "bytecode", {"gremlin": big, "session": "s-1", "batchSize": 1})
    assert wait_until(lambda: not blocking_graph.lock.locked(), timeout=10)
    assert len(server.server.sessions) == 0


def test_login_is_required_when_credentials_are_configured(
    serve_graph, blocking_graph, remote, raw_client, tmp_path: Path
) -> None:
    credentials = tmp_path / "creds.txt"
    add_user(credentials, "spark", "s3cret")
    server = serve_graph(blocking_graph, Authenticator.from_file(credentials))

    g = traversal().with_remote(remote(server.url, username="spark", password="s3cret"))
    assert g.inject(1, 2).to_list() == [1, 2]
    tx = g.tx()
    gtx = tx.begin()
    assert gtx.inject(3).to_list() == [3]
    tx.commit()

    intruder = traversal().with_remote(remote(server.url, username="spark", password="guess"))
    with pytest.raises(GremlinServerError, match="401: Username and/or password are incorrect"):
        intruder.inject(1).to_list()

    anonymous = raw_client(server.url)
    anonymous.send("traversal", "bytecode", {"gremlin": _bytecode(["inject", 1])})
    assert anonymous.read()["status"]["code"] == 407
    for _ in range(3):
        anonymous.send("traversal", "authentication", {"sasl": "AHNwYXJrAGd1ZXNz"})
        assert anonymous.read()["status"]["code"] == 401
    with pytest.raises(RuntimeError, match="closed"):
        anonymous.read()


def test_pipelined_requests_are_answered_as_they_finish(serve_graph, blocking_graph, raw_client) -> None:
    client = raw_client(serve_graph(blocking_graph).url, read_timeout=3)
    slow = client.send("traversal", "bytecode", {"gremlin": _bytecode(["inject", 1], ["block"])})
    fast = client.send("traversal", "bytecode", {"gremlin": _bytecode(["inject", 2, 3, 4]), "batchSize": 1})
    frames = client.read_until_final()  # while the slow request still runs
    assert [(f["requestId"], f["status"]["code"]) for f in frames] == [(fast, 206), (fast, 206), (fast, 200)]
    assert [t.object for f in frames for t in f["result"]["data"]] == [2, 3, 4]
    blocking_graph.release.set()
    reply = client.read()
    assert (reply["requestId"], reply["status"]["code"]) == (slow, 200)


def test_requests_in_flight_per_connection_are_bounded(
    wait_until, serve_graph, blocking_graph, raw_client, remote
) -> None:
    server = serve_graph(blocking_graph, max_in_flight=2)
    client = raw_client(server.url)
    sent = [client.send("traversal", "bytecode", {"gremlin": _bytecode(["block"])}) for _ in range(4)]
    assert wait_until(lambda: blocking_graph.running == 2)
    time.sleep(0.2)  # the other two frames wait unread
    assert blocking_graph.running == 2
    g = traversal().with_remote(remote(server.url))
    assert g.inject(1).to_list() == [1]  # other connections have windows of their own
    blocking_graph.release.set()
    replies = [client.read() for _ in sent]
    assert sorted(r["requestId"] for r in replies) == sorted(sent)
    assert {r["status"]["code"] for r in replies} == {204}
    assert blocking_graph.most_running == 2


def test_pipelined_requests_never_run_before_the_login(
    serve_graph, blocking_graph, raw_client, tmp_path: Path
) -> None:
    credentials = tmp_path / "creds.txt"
    add_user(credentials, "spark", "s3cret")
    server = serve_graph(blocking_graph, Authenticator.from_file(credentials))
    right, wrong = "AHNwYXJrAHMzY3JldA==", "AHNwYXJrAGd1ZXNz"

    client = raw_client(server.url)
    first = client.send("traversal", "bytecode", {"gremlin": _bytecode(["inject", 1])})
    second = client.send("traversal", "bytecode", {"gremlin": _bytecode(["block"])})
    client.send("traversal", "authentication", {"sasl": right}, request_id=first)
    third = client.send("traversal", "bytecode", {"gremlin": _bytecode(["inject", 3])})
    replies = [client.read() for _ in range(4)]
    assert [(r["requestId"], r["status"]["code"]) for r in replies[:2]] == [(first, 407), (second, 401)]
    assert "authenticate first" in replies[1]["status"]["message"]
    answers = {r["requestId"]: [t.object for t in r["result"]["data"]] for r in replies[2:]}
    assert answers == {first: [1], third: [3]}

    stranger = raw_client(server.url)
    first = stranger.send("traversal", "bytecode", {"gremlin": _bytecode(["block"])})
    stranger.send("traversal", "authentication", {"sasl": wrong}, request_id=first)
    later = stranger.send("traversal", "bytecode", {"gremlin": _bytecode(["block"])})
    replies = [stranger.read() for _ in range(3)]
    assert [(r["requestId"], r["status"]["code"]) for r in replies] == [
        (first, 407),
        (first, 401),
        (later, 407),
    ]
    assert not blocking_graph.started.is_set()  # neither the refused nor the unauthenticated request ran
