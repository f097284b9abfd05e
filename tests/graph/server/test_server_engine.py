"""The embedded engine served over WebSockets, used through gremlinpython exactly as JanusGraph would be."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from gremlin_python.driver.client import Client
from gremlin_python.driver.driver_remote_connection import DriverRemoteConnection
from gremlin_python.driver.protocol import GremlinServerError
from gremlin_python.process.anonymous_traversal import traversal
from gremlin_python.process.graph_traversal import __
from gremlin_python.process.traversal import Cardinality, Operator, P, Pick, Pop, Scope, T
from gremlin_python.structure.graph import Graph

pytest.importorskip("lineage_platform.graph.embedded.engine", reason="the embedded engine is not built yet")

REPO = Path(__file__).resolve().parents[3]


def _count(g, label: str) -> int:
    return g.V().has_label(label).count().next()


def test_reads_and_writes_round_trip(served_url, remote) -> None:
    g = traversal().with_remote(remote(served_url))
    table = g.add_v("table").property("qualifiedName", "db.orders").property("name", "orders").next()
    column = g.add_v("column").property("qualifiedName", "db.orders.id").next()
    g.V(table.id).add_e("hasColumn").to(__.V(column.id)).property("since", 3).iterate()

    assert g.V().has("table", "qualifiedName", "db.orders").values("name").to_list() == ["orders"]
    assert g.V(table.id).out("hasColumn").values("qualifiedName").to_list() == ["db.orders.id"]
    edge = g.E().has_label("hasColumn").next()
    assert (edge.outV.id, edge.inV.id) == (table.id, column.id)
    assert g.V().has("qualifiedName", P.within("db.orders", "db.orders.id")).count().next() == 2
    details = g.V(table.id).element_map().next()
    assert (details[T.id], details[T.label], details["name"]) == (table.id, "table", "orders")
    assert g.V().group().by(T.label).by(__.count()).next() == {"table": 1, "column": 1}


def test_many_results_arrive_in_batches(served_url, remote) -> None:
    g = traversal().with_remote(remote(served_url))
    g.inject(*range(10)).as_("i").add_v("file").property("n", __.select("i")).iterate()
    assert sorted(g.with_("batchSize", 2).V().has_label("file").values("n").to_list()) == list(range(10))


def test_transactions_commit_and_roll_back(served_url, remote) -> None:
    g = traversal().with_remote(remote(served_url))
    tx = g.tx()
    gtx = tx.begin()
    gtx.add_v("table").property("name", "kept").iterate()
    assert _count(gtx, "table") == 1
    tx.commit()

    tx = g.tx()
    gtx = tx.begin()
    gtx.add_v("table").property("name", "discarded").iterate()
    tx.rollback()
    assert g.V().has_label("table").values("name").to_list() == ["kept"]


def test_readers_never_see_another_clients_uncommitted_writes(served_url, remote) -> None:
    writer = traversal().with_remote(remote(served_url))
    reader = traversal().with_remote(remote(served_url))
    tx = writer.tx()
    gtx = tx.begin()
    gtx.add_v("table").property("name", "uncommitted").iterate()

    answered: dict[str, float | int] = {}

    def read() -> None:
        answered["count"] = _count(reader, "table")
        answered["at"] = time.monotonic()

    thread = threading.Thread(target=read)
    thread.start()
    time.sleep(0.3)
    assert "count" not in answered  # the reader waits while the transaction holds the graph
    rolled_back_at = time.monotonic()
    tx.rollback()
    thread.join(timeout=10)
    assert answered["count"] == 0 and answered["at"] >= rolled_back_at


def test_a_reader_waiting_too_long_on_a_busy_graph_gets_an_error(serve_graph, tmp_path, remote) -> None:
    from lineage_platform.graph.embedded.engine import EmbeddedGraph

    graph = EmbeddedGraph(tmp_path / "busy", lock_timeout=0.3)
    try:
        url = serve_graph(graph).url
        tx = traversal().with_remote(remote(url)).tx()
        tx.begin().add_v("table").iterate()
        with pytest.raises(GremlinServerError, match=r"graph busy.*retry") as caught:
            traversal().with_remote(remote(url)).V().count().next()
        assert caught.value.status_code == 596  # SERVER_ERROR_TEMPORARY: the client may retry
        assert caught.value.status_attributes["exceptions"] == ["GraphBusyError"]
        tx.commit()
        assert traversal().with_remote(remote(url)).V().count().next() == 1
    finally:
        graph.close()


def test_sixteen_concurrent_clients(served_url, remote) -> None:
    def client_work(worker: int) -> list[int]:
        g = traversal().with_remote(remote(served_url))
        for i in range(10):
            g.add_v("process").property("worker", worker).property("i", i).iterate()
        return sorted(g.V().has("process", "worker", worker).values("i").to_list())

    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(client_work, range(16)))
    assert results == [list(range(10))] * 16
    assert _count(traversal().with_remote(remote(served_url)), "process") == 160


def test_concurrent_transactions_take_turns(served_url, remote) -> None:
    def commit_one(worker: int) -> None:
        tx = traversal().with_remote(remote(served_url)).tx()
        gtx = tx.begin()
        gtx.add_v("process").property("worker", worker).iterate()
        tx.commit()

    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(commit_one, range(16)))
    assert _count(traversal().with_remote(remote(served_url)), "process") == 16


def test_a_transaction_commits_while_every_shared_worker_waits_for_it(
    serve_graph, embedded_graph, remote
) -> None:
    url = serve_graph(embedded_graph, workers=2).url
    tx = traversal().with_remote(remote(url)).tx()
    gtx = tx.begin()
    gtx.add_v("table").iterate()
    with ThreadPoolExecutor(max_workers=4) as pool:
        readers = [pool.submit(_count, traversal().with_remote(remote(url)), "table") for _ in range(4)]
        time.sleep(0.3)  # both shared workers are now blocked on the graph lock the transaction holds
        started = time.monotonic()
        tx.commit()
        assert time.monotonic() - started < 2  # the session's own worker is free to commit
        assert [reader.result(timeout=10) for reader in readers] == [1, 1, 1, 1]


def _make_cycle(g) -> object:
    """Two table vertices with edges a -> b -> a, so repeat() over them never ends by itself; returns a's id."""
    a = g.add_v("table").property("name", "a").next()
    b = g.add_v("table").property("name", "b").next()
    g.V(a.id).add_e("next").to(__.V(b.id)).iterate()
    g.V(b.id).add_e("next").to(__.V(a.id)).iterate()
    return a.id


RUNAWAYS = (
    lambda g: g.V().repeat(__.out()).times(10**9).count(),
    lambda g: g.inject(1).repeat(__.identity()),
)


def test_runaway_traversals_are_cancelled_and_free_their_workers(
    serve_graph, embedded_graph, remote, caplog
) -> None:
    url = serve_graph(embedded_graph, workers=2, evaluation_timeout=0.3).url
    _make_cycle(traversal().with_remote(remote(url)))

    def run_away(index: int) -> tuple[int, float]:
        g = traversal().with_remote(remote(url))
        started = time.monotonic()
        with pytest.raises(GremlinServerError) as caught:
            RUNAWAYS[index % 2](g).to_list()
        return caught.value.status_code, time.monotonic() - started

    with ThreadPoolExecutor(max_workers=4) as pool:  # twice as many runaways as the server has workers
        answers = list(pool.map(run_away, range(4)))
    assert all(status == 598 and elapsed < 0.3 + 2 for status, elapsed in answers), answers
    started = time.monotonic()
    assert traversal().with_remote(remote(url)).V().count().next() == 2  # the workers and the lock are free
    assert time.monotonic() - started < 1
    assert "evaluation exceeded the timeout of 300 ms; cancelling it" in caplog.text


def test_a_runaway_traversal_in_a_session_is_rolled_back_and_releases_the_graph(
    serve_graph, embedded_graph, remote
) -> None:
    url = serve_graph(embedded_graph, evaluation_timeout=0.3).url
    g = traversal().with_remote(remote(url))
    a = _make_cycle(g)
    tx = g.tx()
    gtx = tx.begin()
    gtx.V(a).property("name", "uncommitted").iterate()
    with pytest.raises(GremlinServerError, match="598"):
        RUNAWAYS[0](gtx).to_list()
    started = time.monotonic()
    g.V(a).property("name", "written by another client").iterate()  # no wait for the session's lock
    assert time.monotonic() - started < 1
    assert sorted(g.V().values("name").to_list()) == ["b", "written by another client"]
    with pytest.raises(GremlinServerError, match=r"499: session .* timed out"):
        gtx.V().count().next()


@pytest.mark.parametrize("leave", ["close", "drop"])
def test_a_client_leaving_mid_request_cancels_its_traversals(
    leave, serve_graph, embedded_graph, remote, raw_client, wait_until, caplog
) -> None:
    """One worker: another client is answered only once the leaver's runaway is cancelled. ``drop`` leaves
    without a closing handshake while a second runaway waits unread for the connection's only slot."""
    url = serve_graph(embedded_graph, workers=1, max_in_flight=1, evaluation_timeout=8).url
    g = traversal().with_remote(remote(url))
    _make_cycle(g)
    leaver = raw_client(url)
    for _ in range(2 if leave == "drop" else 1):
        leaver.send("traversal", "bytecode", {"gremlin": RUNAWAYS[0](g).bytecode})
    assert wait_until(lambda: embedded_graph._lock.holder is not None)  # the runaway is running
    started = time.monotonic()
    leaver.drop() if leave == "drop" else leaver.close()
    assert g.V().count().next() == 2
    assert time.monotonic() - started < 2  # not after the 8 s evaluation timeout
    assert "closed with 1 request(s) running; cancelling them" in caplog.text


def test_pipelined_requests_of_a_session_run_in_order(served_url, raw_client, remote) -> None:
    g = traversal().with_graph(Graph())  # only builds bytecode
    steps = [
        g.add_v("table").property("name", "a"),
        g.V().has("name", "a").add_e("next").to(__.add_v("table").property("name", "b")),
        g.V().has("name", "a").out("next").values("name"),
    ]
    client = raw_client(served_url)
    sent = [client.send("session", "bytecode", {"gremlin": t.bytecode, "session": "s-1"}) for t in steps]
    replies = [client.read() for _ in sent]
    assert [r["requestId"] for r in replies] == sent
    assert [t.object for t in replies[-1]["result"]["data"]] == ["b"]  # the read saw both writes
    client.send("session", "close", {"session": "s-1"})
    assert client.read()["status"]["code"] == 204
    assert traversal().with_remote(remote(served_url)).V().count().next() == 0  # never committed


def test_shutdown_cancels_running_traversals(serve_graph, embedded_graph, remote) -> None:
    server = serve_graph(embedded_graph, evaluation_timeout=None)
    g = traversal().with_remote(remote(server.url))
    _make_cycle(g)
    failures: list[Exception] = []

    def run_away() -> None:
        try:
            RUNAWAYS[0](g).to_list()
        except Exception as exc:  # the server closes the connection
            failures.append(exc)

    runaway = threading.Thread(target=run_away)
    runaway.start()
    time.sleep(0.3)
    assert embedded_graph._lock.holder is not None  # the runaway is running
    started = time.monotonic()
    server.stop()
    runaway.join(timeout=5)
    assert time.monotonic() - started < 3 and len(failures) == 1
    assert embedded_graph._lock.holder is None  # rolled back: the store can be closed


@pytest.mark.parametrize("served", [True, False], ids=["through the server", "in process"])
def test_list_and_set_cardinality_and_operator_enums_reach_the_engine(
    served, serve_graph, embedded_graph, remote
) -> None:
    from lineage_platform.graph.connect import EmbeddedRemoteConnection

    connection = (
        remote(serve_graph(embedded_graph).url) if served else EmbeddedRemoteConnection(embedded_graph)
    )
    g = traversal().with_remote(connection)
    v = (
        g.add_v("table")
        .property(Cardinality.list_, "tag", "a")
        .property(Cardinality.list_, "tag", "a")
        .next()
    )
    g.V(v.id).property(Cardinality.set_, "owner", "x").property(Cardinality.set_, "owner", "x").iterate()
    g.V(v.id).property(Cardinality.set_, "owner", "y").iterate()
    assert g.V(v.id).values("tag").to_list() == ["a", "a"]
    assert sorted(g.V(v.id).values("owner").to_list()) == ["x", "y"]
    assert g.inject(1, 2, 3).fold().unfold().sum_(Scope.global_).next() == 6
    assert g.with_sack(1).inject(5).sack(Operator.sum_).sack().next() == 6
    assert g.V(v.id).values("tag").fold().select(Pop.all_, "x").to_list() == []
    assert g.V(v.id).choose(__.label()).option(Pick.any_, __.constant("any")).to_list() == ["any"]


def test_two_thousand_chained_steps_run_through_the_server(served_url, remote) -> None:
    g = traversal().with_remote(remote(served_url))
    counting = g.inject(0)
    for _ in range(2000):
        counting = counting.math("_ + 1")
    assert counting.to_list() == [2000]


def test_unknown_steps_are_reported_by_name(served_url, remote) -> None:
    g = traversal().with_remote(remote(served_url))
    unknown = g.V()
    unknown.bytecode.add_step("frobnicate")
    with pytest.raises(GremlinServerError, match="frobnicate") as caught:
        unknown.to_list()
    assert caught.value.status_code == 500
    assert g.V().count().next() == 0


def test_scripts_are_evaluated_with_bindings(served_url) -> None:
    client = Client(served_url, "g")
    try:
        client.submit("g.addV('table').property('name', n).iterate()", {"n": "orders"}).all().result()
        assert client.submit("g.V().hasLabel('table').values('name')").all().result() == ["orders"]
        script = "g.addV('table').property('name', 'a').next()\ng.addV('never').property('name', 'b')\ng.V().count()"
        assert client.submit(script).all().result() == [
            2
        ]  # as in Groovy, a bare non-final traversal never runs
        assert client.submit("g.V().values('name').toSet()").all().result() == ["orders", "a"]
        with pytest.raises(GremlinServerError, match="597"):
            client.submit("g.V(.count()").all().result()
    finally:
        client.close()


def test_session_scripts_run_in_one_transaction(served_url) -> None:
    session = Client(served_url, "g", session=str(uuid.uuid4()))
    session.submit("g.addV('table').property('name', 'pending').iterate()").all().result()
    assert session.submit("g.V().count()").all().result() == [1]
    session.close()  # closing the session rolls back what it did not commit
    sessionless = Client(served_url, "g")
    try:
        assert sessionless.submit("g.V().count()").all().result() == [0]
    finally:
        sessionless.close()


def test_connect_works_unchanged_against_the_server(served_url) -> None:
    from lineage_platform.graph.connect import connect

    g = connect(served_url)
    g.add_v("database").property("qualifiedName", "db").iterate()
    assert g.V().has_label("database").values("qualifiedName").to_list() == ["db"]


# -- a real server process -------------------------------------------------------------------------------


def _start_server_process(store: Path) -> tuple[subprocess.Popen, str]:
    command = "from lineage_platform.cli.serve_commands import serve; serve()"
    process = subprocess.Popen(
        [sys.executable, "-c", command, "--store", str(store), "--port", "0"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if " on ws://" in line:
            threading.Thread(target=process.stderr.read, daemon=True).start()  # keep the pipe drained
            return process, line.split(" on ", 1)[1].split()[0]
        if not line and process.poll() is not None:
            break
    process.kill()
    raise AssertionError("the server process did not start")


def _stored_names(store: Path) -> list[str]:
    from lineage_platform.graph.embedded.engine import EmbeddedGraph

    graph = EmbeddedGraph(store)
    try:
        return sorted(t.object for t in graph.execute(__.V().values("name").bytecode))
    finally:
        graph.close()


@pytest.mark.slow
def test_committed_data_survives_kill_9_of_the_server(tmp_path: Path) -> None:
    store = tmp_path / "graph"
    process, url = _start_server_process(store)
    connection = DriverRemoteConnection(url, "g")
    try:
        g = traversal().with_remote(connection)
        g.add_v("table").property("name", "autocommitted").iterate()
        tx = g.tx()
        gtx = tx.begin()
        gtx.add_v("table").property("name", "committed").iterate()
        tx.commit()
        open_tx = g.tx()
        open_tx.begin().add_v("table").property("name", "in flight").iterate()
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        with contextlib.suppress(Exception):  # the server is gone: closing the session cannot succeed
            connection.close()
    assert _stored_names(store) == ["autocommitted", "committed"]


@pytest.mark.slow
def test_sigterm_rolls_back_open_transactions_and_closes_the_store(tmp_path: Path) -> None:
    store = tmp_path / "graph"
    process, url = _start_server_process(store)
    connection = DriverRemoteConnection(url, "g")
    try:
        g = traversal().with_remote(connection)
        g.add_v("table").property("name", "committed").iterate()
        g.tx().begin().add_v("table").property("name", "in flight").iterate()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
        with contextlib.suppress(Exception):
            connection.close()
    assert _stored_names(store) == ["committed"]


@pytest.mark.slow
def test_a_second_sigterm_waits_for_the_final_checkpoint(tmp_path: Path) -> None:
    from lineage_platform.graph.embedded.engine import EmbeddedGraph

    store = tmp_path / "graph"
    with EmbeddedGraph(store) as graph:  # big enough for the final checkpoint to take a while
        graph.execute(
            __.inject(list(range(100_000))).unfold().add_v("table").property("n", __.identity()).bytecode
        )
    command = "from lineage_platform.cli.serve_commands import serve; serve()"
    process = subprocess.Popen(
        [sys.executable, "-c", command, "--store", str(store), "--port", "0"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    closing = threading.Event()

    def read_log() -> None:
        for line in process.stderr:
            lines.append(line)
            if "closing the store" in line:
                closing.set()

    threading.Thread(target=read_log, daemon=True).start()
    try:
        deadline = time.monotonic() + 60
        while not any(" on ws://" in line for line in lines) and time.monotonic() < deadline:
            time.sleep(0.05)
        url = next(line for line in lines if " on ws://" in line).split(" on ", 1)[1].split()[0]
        connection = DriverRemoteConnection(url, "g")
        traversal().with_remote(connection).add_v("table").property("name", "last").iterate()
        connection.close()
        process.send_signal(signal.SIGTERM)
        assert closing.wait(30)
        process.send_signal(signal.SIGTERM)  # while the store writes its final checkpoint
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
    log_text = "".join(lines)
    assert (
        "SIGTERM received while shutting down: finishing the shutdown and the store's checkpoint" in log_text
    )
    assert "the store is closed" in log_text
    assert _stored_names(store) == ["last"]
    assert (store / "snapshot-00000000000000000002.snap").exists()  # the final checkpoint was completed
