"""Fixtures for the Gremlin Server tests, reusable by any test that needs a served graph.

* ``serve_graph(graph, **settings)`` starts a :class:`BackgroundServer` on a free loopback port and stops it
  after the test; ``served_url`` is that for a fresh embedded graph in ``tmp_path``.
* ``remote(url, **kwargs)`` opens a gremlinpython DriverRemoteConnection with the serializer ``connect()``
  uses (JanusGraph's GraphBinary) and closes it after the test.
* ``raw_client(url)`` sends single GraphBinary frames (or text ones) and reads GraphBinary or GraphSON answers over a bare aiohttp WebSocket (to count 206s,
  send broken frames, pipeline several requests before reading, or disconnect abruptly).
* ``peer_url`` is parametrized: the project's server on a fresh schema-free graph, then the reference TinkerPop
  Gremlin Server (tests/reference_servers.py), for checks both must pass alike.
* ``wait_until(condition, timeout)`` polls until a condition holds (state another thread changes).
* ``blocking_graph`` is a stand-in graph whose ``inject(...).block()`` traversal waits until released, ignoring
  cancellation: it stands for work the engine cannot interrupt (runaway engine traversals are cancelled; see
  test_server_engine.py). It counts the blocks running at once.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
import pytest
from gremlin_python.driver.driver_remote_connection import DriverRemoteConnection
from gremlin_python.driver.serializer import GraphBinarySerializersV1, GraphSONSerializersV3d0
from gremlin_python.process.traversal import Bytecode, Traverser
from janusgraph_python.driver.serializer import JanusGraphBinarySerializersV1

from lineage_platform.errors import GraphError, UnsupportedStepError
from lineage_platform.graph.connect import open_embedded
from lineage_platform.graph.embedded.server import BackgroundServer, ServerSettings

T = TypeVar("T")


class FakeTransaction:
    """Holds the blocking graph's lock until commit or rollback, like the engine's Transaction."""

    def __init__(self, graph: BlockingGraph) -> None:
        self._graph = graph
        self.is_open = True

    def commit(self) -> None:
        self._end()

    def rollback(self) -> None:
        self._end()

    def _end(self) -> None:
        if self.is_open:
            self.is_open = False
            self._graph.lock.release()


class BlockingGraph:
    """Answers ``inject(...)``; ``block()`` waits until :attr:`release` is set; ``big(n, size)`` makes n strings;
    ``opaque()`` yields a value with no wire type."""

    def __init__(self, lock_timeout: float = 5.0) -> None:
        self.lock = threading.Lock()
        self.release = threading.Event()
        self.started = threading.Event()
        self.running = 0
        self.most_running = 0
        self._counting = threading.Lock()
        self.lock_timeout = lock_timeout
        self.closed = False

    def begin(self) -> FakeTransaction:
        if not self.lock.acquire(timeout=self.lock_timeout):
            raise GraphError("the graph is busy")
        return FakeTransaction(self)

    def execute(self, bytecode: Bytecode, tx: Any = None, cancellation: Any = None) -> list[Traverser]:
        values: list[Any] = []
        for name, *args in bytecode.step_instructions:
            if name == "inject":
                values.extend(args)
            elif name == "big":
                count, size = args
                values.extend(str(i).ljust(size, "x") for i in range(count))
            elif name == "opaque":
                values.append(object())
            elif name == "block":
                self._block()
            else:
                raise UnsupportedStepError(f"the step {name}() is not supported")
        return [Traverser(v, 1) for v in values]

    def _block(self) -> None:
        with self._counting:
            self.running += 1
            self.most_running = max(self.most_running, self.running)
        self.started.set()
        self.release.wait()
        with self._counting:
            self.running -= 1

    def close(self) -> None:
        self.closed = True


def _wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


@pytest.fixture
def wait_until() -> Callable[..., bool]:
    """``wait_until(condition, timeout=5.0)``: poll until the condition holds; returns whether it did."""
    return _wait_until


@pytest.fixture
def blocking_graph() -> Iterator[BlockingGraph]:
    graph = BlockingGraph()
    yield graph
    graph.release.set()


@pytest.fixture
def serve_graph() -> Iterator[Callable[..., BackgroundServer]]:
    started: list[BackgroundServer] = []

    def start(graph: Any, authenticator: Any = None, **settings: Any) -> BackgroundServer:
        server = BackgroundServer(graph, ServerSettings(port=0, **settings), authenticator).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def embedded_graph(tmp_path: Path) -> Iterator[Any]:
    from lineage_platform.graph.embedded.engine import EmbeddedGraph

    graph = EmbeddedGraph(tmp_path / "graph", lock_timeout=5.0)
    yield graph
    graph.close()


@pytest.fixture
def served_url(serve_graph: Callable[..., BackgroundServer], embedded_graph: Any) -> str:
    return serve_graph(embedded_graph).url


@pytest.fixture
def remote() -> Iterator[Callable[..., DriverRemoteConnection]]:
    opened: list[DriverRemoteConnection] = []

    def open_connection(url: str, **kwargs: Any) -> DriverRemoteConnection:
        kwargs.setdefault("message_serializer", JanusGraphBinarySerializersV1())
        connection = DriverRemoteConnection(url, "g", **kwargs)
        opened.append(connection)
        return connection

    yield open_connection
    for connection in opened:
        connection.close()


class RawClient:
    """A bare WebSocket client speaking GraphBinary frames, to see individual frames, send broken ones, send
    several requests before reading any answer, and disconnect abruptly."""

    def __init__(self, url: str, read_timeout: float = 10.0) -> None:
        self._loop = asyncio.new_event_loop()
        self._read_timeout = read_timeout
        self._serializer = GraphBinarySerializersV1()
        self._session = self._run(self._open_session())
        self._ws = self._run(self._session.ws_connect(url, max_msg_size=0))

    def _run(self, work: Coroutine[Any, Any, T]) -> T:
        return self._loop.run_until_complete(work)

    @staticmethod
    async def _open_session() -> aiohttp.ClientSession:
        return aiohttp.ClientSession()

    def send_frame(self, frame: bytes) -> None:
        self._run(self._ws.send_bytes(frame))

    def send(self, processor: str, op: str, args: dict[str, Any], request_id: str | None = None) -> str:
        """Send one request; returns its id as responses carry it."""
        request_uuid = uuid.UUID(request_id) if request_id else uuid.uuid4()
        self.send_frame(self._serializer.build_message(request_uuid, processor, op, dict(args)))
        return str(request_uuid)

    def read(self) -> dict[str, Any]:
        message = self._run(self._ws.receive(timeout=self._read_timeout))
        if message.type == aiohttp.WSMsgType.TEXT:
            return GraphSONSerializersV3d0().deserialize_message(message.data)
        if message.type != aiohttp.WSMsgType.BINARY:
            raise RuntimeError(f"the connection was closed ({message.type.name})")
        if message.data[:1] == b"{":  # a GraphSON answer in a binary frame
            return GraphSONSerializersV3d0().deserialize_message(message.data)
        return self._serializer.deserialize_message(message.data)

    def send_text(self, text: str) -> None:
        """Send a text frame (Gremlin Server reads it as GraphSON 3.0 without a MIME header)."""
        self._run(self._ws.send_str(text))

    def read_until_final(self) -> list[dict[str, Any]]:
        frames = [self.read()]
        while frames[-1]["status"]["code"] == 206:
            frames.append(self.read())
        return frames

    @property
    def close_code(self) -> int | None:
        """The WebSocket close code, once the connection is closed."""
        return self._ws.close_code

    def drop(self) -> None:
        """Disconnect as a killed client would: shut the TCP connection down without a closing handshake."""
        self._ws.get_extra_info("socket").shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self._run(self._ws.close())
        self._run(self._session.close())
        # A WebSocket the server closed first keeps its HTTP response open; let it go while the loop still runs.
        del self._ws
        gc.collect()
        self._loop.close()


@pytest.fixture
def raw_client() -> Iterator[Callable[..., RawClient]]:
    opened: list[RawClient] = []

    def open_client(url: str, read_timeout: float = 10.0) -> RawClient:
        client = RawClient(url, read_timeout)
        opened.append(client)
        return client

    yield open_client
    for client in opened:
        client.close()


@pytest.fixture(params=["lineage graph serve", "tinkerpop"])
def peer_url(request: pytest.FixtureRequest, open_schema: None) -> Iterator[str]:
    """The URL of `lineage graph serve` on a fresh schema-free graph, then of the reference TinkerPop server."""
    logging.getLogger("gremlinpython").setLevel(logging.CRITICAL)  # the tests assert the expected failures
    if request.param == "tinkerpop":
        yield request.getfixturevalue("tinkerpop_url")
        return
    server = BackgroundServer(open_embedded(None), ServerSettings(port=0)).start()
    try:
        yield server.url
    finally:
        server.stop()
