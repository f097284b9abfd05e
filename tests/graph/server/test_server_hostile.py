"""Hostile clients: big frames before the login, silent connections, password guessing. None of them may
stop the server from serving everyone else."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gremlin_python.process.anonymous_traversal import traversal
from gremlin_python.process.graph_traversal import __

from lineage_platform.graph.embedded.server import Authenticator, add_user

RIGHT, WRONG = "AHNwYXJrAHMzY3JldA==", "AHNwYXJrAGd1ZXNz"  # SASL PLAIN for spark:s3cret and spark:guess


@pytest.fixture
def authenticator(tmp_path: Path) -> Authenticator:
    credentials = tmp_path / "creds.txt"
    add_user(credentials, "spark", "s3cret")
    return Authenticator.from_file(credentials)


def _read_closed(client) -> int | None:
    with pytest.raises(RuntimeError, match="closed"):
        client.read()
    return client.close_code


def test_a_big_frame_before_the_login_is_refused_without_decoding(
    serve_graph, blocking_graph, raw_client, remote, authenticator
) -> None:
    server = serve_graph(blocking_graph, authenticator, login_frame_bytes=4096)
    intruder = raw_client(server.url)
    started = time.monotonic()
    intruder.send("traversal", "bytecode", {"gremlin": __.inject([None] * 300_000).bytecode})
    assert _read_closed(intruder) == 1009  # message too big, before a 407 could be computed
    assert time.monotonic() - started < 1.0  # 300k nulls take ~1 s to decode here; they never were

    small = raw_client(server.url)  # small frames still get the login challenge
    small.send("traversal", "bytecode", {"gremlin": __.inject(1).bytecode})
    assert small.read()["status"]["code"] == 407
    g = traversal().with_remote(remote(server.url, username="spark", password="s3cret"))
    assert g.inject(2).to_list() == [2]


def test_big_frames_are_decoded_off_the_event_loop(serve_graph, blocking_graph, raw_client) -> None:
    server = serve_graph(blocking_graph)
    big, other = raw_client(server.url, read_timeout=60), raw_client(server.url)
    padding = [None] * 1_000_000  # ~2 MB, ~3 s of decoding here: it spans the whole loop below
    big.send("traversal", "bytecode", {"gremlin": __.inject(1).bytecode, "padding": padding})
    round_trips = []
    decoding_since = time.monotonic()
    while True:
        sent = time.monotonic()
        other.send("traversal", "bytecode", {"gremlin": __.inject(2).bytecode})
        assert other.read()["status"]["code"] == 200
        round_trips.append(time.monotonic() - sent)
        if time.monotonic() - decoding_since > 1.5:
            break
    reply = big.read()
    assert [t.object for t in reply["result"]["data"]] == [1]
    assert max(round_trips) < 0.5, round_trips


def test_a_client_that_does_not_log_in_in_time_is_closed(
    serve_graph, blocking_graph, raw_client, authenticator
) -> None:
    server = serve_graph(blocking_graph, authenticator, login_timeout=0.3, idle_timeout=60)
    silent = raw_client(server.url)
    assert _read_closed(silent) == 1008
    waiting = raw_client(server.url)  # asked to log in, never answers the challenge
    waiting.send("traversal", "bytecode", {"gremlin": __.inject(1).bytecode})
    assert waiting.read()["status"]["code"] == 407
    assert _read_closed(waiting) == 1008


def test_an_idle_connection_is_closed_but_a_long_request_is_not_idle(
    serve_graph, blocking_graph, raw_client, remote
) -> None:
    server = serve_graph(blocking_graph, idle_timeout=0.4)
    idle = raw_client(server.url)
    assert _read_closed(idle) == 1008
    g = traversal().with_remote(remote(server.url))
    assert g.inject(1).to_list() == [1]
    time.sleep(0.8)  # its pooled connection is closed as idle: gremlinpython opens a new one
    assert g.inject(2).to_list() == [2]

    busy = raw_client(server.url, read_timeout=5)
    blocked = busy.send("traversal", "bytecode", {"gremlin": _block()})
    time.sleep(1.0)  # the request runs longer than the idle timeout
    blocking_graph.release.set()
    reply = busy.read()
    assert (reply["requestId"], reply["status"]["code"]) == (blocked, 200)
    assert _read_closed(busy) == 1008  # idle again once it was answered


def _block():
    bytecode = __.inject(1).bytecode
    bytecode.add_step("block")
    return bytecode


def test_connections_that_never_finish_the_handshake_are_closed(serve_graph, blocking_graph, remote) -> None:
    server = serve_graph(blocking_graph, handshake_timeout=0.5)
    slow = []
    for _ in range(20):
        sock = socket.create_connection(("127.0.0.1", server.server.port))
        sock.sendall(b"GET /gremlin HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # headers never end
        sock.settimeout(5)
        slow.append(sock)
    silent = socket.create_connection(("127.0.0.1", server.server.port))
    silent.settimeout(5)
    started = time.monotonic()
    for sock in [*slow, silent]:
        assert sock.recv(1024) == b""  # closed by the server
        sock.close()
    assert time.monotonic() - started < 4
    g = traversal().with_remote(remote(server.url))
    assert g.inject(1).to_list() == [1]


def test_failed_logins_are_throttled_per_address(
    serve_graph, blocking_graph, raw_client, authenticator
) -> None:
    server = serve_graph(blocking_graph, authenticator, max_failed_logins=4, failed_login_window=60)
    for _ in range(2):  # reconnecting does not reset the count
        guesser = raw_client(server.url)
        for _ in range(2):
            guesser.send("traversal", "authentication", {"sasl": WRONG})
            assert guesser.read()["status"]["code"] == 401
    late = raw_client(server.url)
    late.send("traversal", "authentication", {"sasl": RIGHT})  # even the right password waits
    reply = late.read()
    assert reply["status"]["code"] == 401
    assert "too many failed logins from 127.0.0.1; retry in" in reply["status"]["message"]
    _read_closed(late)


_FD_LIMITED_SERVER = """
import logging, resource, sys, time
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
from lineage_platform.graph.embedded.engine import EmbeddedGraph
from lineage_platform.graph.embedded.server import BackgroundServer, ServerSettings
with BackgroundServer(EmbeddedGraph(None), ServerSettings(port=0)) as server:
    print(server.server.port, flush=True)
    sys.stdin.readline()
"""


def test_running_out_of_file_descriptors_backs_off_and_logs_once(remote) -> None:
    server = subprocess.Popen(
        [sys.executable, "-c", _FD_LIMITED_SERVER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
    )
    try:
        port = int(server.stdout.readline())
        clients = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(120)]
        time.sleep(2.5)  # over the limit for a while: asyncio's own loop logged ~500 tracebacks a second
        for client in clients:
            client.close()
        time.sleep(1.5)  # the listener retries every second
        g = traversal().with_remote(remote(f"ws://127.0.0.1:{port}/gremlin"))
        assert g.inject(1).to_list() == [1]
    finally:
        _out, log_text = server.communicate("\n", timeout=30)
    assert "Traceback" not in log_text
    failures = [line for line in log_text.splitlines() if "cannot accept connections" in line]
    assert len(failures) == 1, log_text[-2000:]
    assert "Too many open files" in failures[0] and "ulimit -n, now 64" in failures[0]
    assert "accepting connections again" in log_text
