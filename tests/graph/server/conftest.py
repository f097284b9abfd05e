"""Fixtures for the Gremlin Server tests, reusable by any test that needs a served graph.

* ``serve_graph(graph, **settings)`` starts a :class:`BackgroundServer` on a free loopback port and stops it
  after the test; ``served_url`` is that for a fresh embedded graph in ``tmp_path``.
* ``remote(url, **kwargs)`` opens a gremlinpython DriverRemoteConnection with the serializer ``connect()``
  uses (JanusGraph's GraphBinary) and closes it after the test.
* ``raw_client(url)`` sends and reads single GraphBinary frames (to count 206s or send broken frames).
* ``blocking_graph`` is a stand-in graph whose ``inject(...).block()`` traversal waits until released, ignoring
  cancellation: it stands for work the engine cannot interrupt (runaway engine traversals are cancelled; see
  test_server_engine.py).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from gremlin_python.driver.aiohttp.transport import AiohttpTransport
from gremlin_python.driver.driver_remote_connection import DriverRemoteConnection
from gremlin_python.driver.serializer import GraphBinarySerializersV1
from gremlin_python.process.traversal import Bytecode, Traverser
from janusgraph_python.driver.serializer import JanusGraphBinarySerializersV1

from lineage_platform.errors import GraphError, UnsupportedStepError
from lineage_platform.graph.embedded.server import BackgroundServer, ServerSettings


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
                self.started.set()
                self.release.wait()
            else:
                raise UnsupportedStepError(f"the step {name}() is not supported")
        return [Traverser(v, 1) for v in values]

    def close(self) -> None:
        self.closed = True


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
    """A bare WebSocket client speaking GraphBinary frames, to see individual frames and send broken ones."""

    def __init__(self, url: str) -> None:
        self._transport = AiohttpTransport(read_timeout=10, write_timeout=10)
        self._transport.connect(url)
        self._serializer = GraphBinarySerializersV1()

    def send_frame(self, frame: bytes) -> None:
        self._transport.write(frame)

    def send(
        self, processor: str, op: str, args: dict[str, Any], request_id: uuid.UUID | None = None
    ) -> uuid.UUID:
        request_id = request_id or uuid.uuid4()
        self.send_frame(self._serializer.build_message(request_id, processor, op, dict(args)))
        return request_id

    def read(self) -> dict[str, Any]:
        return self._serializer.deserialize_message(self._transport.read())

    def read_until_final(self) -> list[dict[str, Any]]:
        frames = [self.read()]
        while frames[-1]["status"]["code"] == 206:
            frames.append(self.read())
        return frames

    def close(self) -> None:
        self._transport.close()


@pytest.fixture
def raw_client() -> Iterator[Callable[[str], RawClient]]:
    opened: list[RawClient] = []

    def open_client(url: str) -> RawClient:
        client = RawClient(url)
        opened.append(client)
        return client

    yield open_client
    for client in opened:
        client.close()
