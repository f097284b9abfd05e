"""One URL picks the graph backend; everything above this module sees a gremlinpython GraphTraversalSource.

| URL                          | backend                                                   |
| ---------------------------- | --------------------------------------------------------- |
| ``None``                     | the configured default (``LINEAGE_GRAPH_URL``)             |
| ``embedded:PATH``            | the embedded engine on a durable store at PATH, in process |
| ``memory:``                  | the embedded engine without persistence (tests, scratch)   |
| ``ws://host:port/gremlin``   | JanusGraph / any Gremlin Server (also ``lineage graph serve``) |

Transactions behave the same on every backend: outside ``g.tx()`` each traversal commits on its own, as a
sessionless Gremlin Server request does; inside ``g.tx()`` the usual commit and rollback apply.

This module is the only place that reads a graph URL: callers ask :func:`backend_facts` (of a connection or of a
URL) whether the graph is shared, who makes ids, which change feed it offers and whether it has transactions.
"""

from __future__ import annotations

import atexit
import logging
import threading
import uuid
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from gremlin_python.driver.client import Client
from gremlin_python.driver.driver_remote_connection import DriverRemoteConnection
from gremlin_python.driver.protocol import GremlinServerError
from gremlin_python.driver.remote_connection import RemoteConnection, RemoteTraversal
from gremlin_python.process.anonymous_traversal import traversal
from gremlin_python.process.graph_traversal import GraphTraversalSource

from graph_schema import load_schema
from lineage_platform.config import DEFAULT_GRAPH_PATH, ENV_PREFIX, load_settings
from lineage_platform.errors import ConfigError, GraphError

_SERVER_SCHEMES = ("ws://", "wss://")
_lock = threading.Lock()
_embedded: dict[str, Any] = {}  # resolved store path (or "memory:<n>") -> EmbeddedGraph
_remote: list[Any] = []  # open DriverRemoteConnections, closed at exit


class IdStrategy(StrEnum):
    """Who gives elements their ids: the writer (ids kept as written) or the graph server."""

    KEEP = "keep"  # write the given vertex, edge and vertex-property ids (embedded engine, TinkerGraph)
    GENERATE = "generate"  # let the graph choose ids (JanusGraph: no user-supplied ids by default)


ChangeFeed = Literal["log", "outbox"]


@dataclass(frozen=True)
class BackendFacts:
    """What callers may ask about a graph backend instead of parsing its URL.

    shared: a Gremlin Server other processes also write to (ws://), rather than a store in this process.
    id_strategy: whether ids given by a writer are kept or the server generates them (GraphSON import's default).
    change_feed: where change capture reads committed writes: ``"log"`` (an embedded durable store's own log),
    ``"outbox"`` (a served graph's change-capture outbox) or None (``memory:`` keeps nothing).
    transactions: whether ``g.tx()`` works; None until :func:`supports_transactions` has asked the server.
    store: the embedded durable store's directory (None for ``memory:`` and servers).
    """

    shared: bool
    id_strategy: IdStrategy
    change_feed: ChangeFeed | None
    transactions: bool | None
    store: Path | None = None


_MEMORY_FACTS = BackendFacts(shared=False, id_strategy=IdStrategy.KEEP, change_feed=None, transactions=True)
_SERVER_FACTS = BackendFacts(
    shared=True, id_strategy=IdStrategy.GENERATE, change_feed="outbox", transactions=None
)


def _store_facts(store: Path) -> BackendFacts:
    return BackendFacts(
        shared=False, id_strategy=IdStrategy.KEEP, change_feed="log", transactions=True, store=store
    )


def _url_facts(url: str) -> BackendFacts:
    """The facts of the backend ``url`` names; an unknown URL is a ConfigError saying which URLs work."""
    if url.startswith(_SERVER_SCHEMES):
        return _SERVER_FACTS
    if url == "memory:":
        return _MEMORY_FACTS
    if url.startswith("embedded:"):
        return _store_facts(Path(url.removeprefix("embedded:") or DEFAULT_GRAPH_PATH).expanduser())
    raise ConfigError(
        f"unknown graph URL {url!r}",
        hint="use embedded:PATH, memory: or ws://host:port/gremlin (set LINEAGE_GRAPH_URL or --graph)",
    )


class EmbeddedRemoteConnection(RemoteConnection):
    """A gremlinpython RemoteConnection that executes bytecode on an in-process EmbeddedGraph."""

    def __init__(self, graph: Any, *, session: bool = False) -> None:
        super().__init__(f"embedded:{graph.path or 'memory'}", "g")
        self._graph = graph
        self._session = session
        self._tx: Any = None
        self._closed = False

    @property
    def graph(self) -> Any:
        """The EmbeddedGraph this connection executes on."""
        return self._graph

    def submit(self, bytecode: Any) -> RemoteTraversal:
        """Execute the bytecode; inside a session, within the session's transaction."""
        if self._closed:
            raise ConfigError("this graph connection is closed", hint="connect() again")
        if self._session and self._tx is None:
            self._tx = self._graph.begin()
        return RemoteTraversal(iter(self._graph.execute(bytecode, self._tx)))

    def is_closed(self) -> bool:
        return self._closed

    def is_session_bound(self) -> bool:
        return self._session

    def create_session(self) -> EmbeddedRemoteConnection:
        """A connection bound to a new transaction (what ``g.tx().begin()`` asks for)."""
        return EmbeddedRemoteConnection(self._graph, session=True)

    def remove_session(self, session: EmbeddedRemoteConnection) -> None:
        session.close()

    def commit(self) -> None:
        if self._tx is not None:
            self._tx.commit()
        self._tx = None

    def rollback(self) -> None:
        if self._tx is not None:
            self._tx.rollback()
        self._tx = None

    def close(self) -> None:
        """Close the connection; an open transaction is rolled back."""
        if self._tx is not None and self._tx.is_open:
            self._tx.rollback()
        self._tx = None
        self._closed = True


SCHEMA_MODES = ("strict", "open")


def schema_rules() -> Any:
    """The strict-schema rules for a newly opened embedded graph, or None when ``LINEAGE_GRAPH_SCHEMA=open``."""
    from lineage_platform.graph.embedded.strict import SchemaRules

    mode = load_settings().graph_schema
    if mode not in SCHEMA_MODES:
        raise ConfigError(
            f"unknown graph schema mode {mode!r}",
            hint="set LINEAGE_GRAPH_SCHEMA to strict (refuse what JanusGraph refuses) or open",
        )
    return SchemaRules.from_schema(load_schema()) if mode == "strict" else None


def open_embedded(path: str | Path | None) -> Any:
    """The process-wide EmbeddedGraph for a store path (None: a new memory-only graph), opened once.

    The graph enforces the schema's unique keys and, in strict mode (the default), every other rule JanusGraph's
    schema enforces (see ``graph/embedded/strict.py``).
    """
    from lineage_platform.graph.embedded.engine import EmbeddedGraph

    schema = load_schema()
    rules = schema_rules()
    with _lock:
        key = str(Path(path).expanduser().resolve()) if path is not None else f"memory:{len(_embedded)}"
        graph = _embedded.get(key)
        if graph is None:
            graph = EmbeddedGraph(
                None if path is None else key,
                unique=schema.unique_keys,
                indexed=schema.indexed_keys,
                rules=rules,
            )
            _embedded[key] = graph
        return graph


_AUTH_REFUSED = (401, 407)


def _unreachable(url: str, exc: Exception) -> GraphError | None:
    """The GraphError for a driver failure that means the server at ``url`` cannot be reached, else None."""
    import aiohttp

    if not isinstance(exc, OSError | TimeoutError | aiohttp.ClientError):
        return None
    return GraphError(
        f"cannot reach the graph server at {url}: {exc or type(exc).__name__}",
        hint=f"start the server, or check the URL given with --graph or {ENV_PREFIX}GRAPH_URL",
    )


class ServerConnection(DriverRemoteConnection):
    """A DriverRemoteConnection whose failures to reach the server or to log in become a GraphError naming the
    URL and what to do; the server's answers to the traversals themselves pass through unchanged.

    Its sessions (``g.tx()``) wait for the server's answer to a commit or rollback and raise a refusal.
    gremlinpython's own session connections hand the answer back unread and close the session at once, so a
    commit the server refused (JanusGraph: a lock or uniqueness conflict with a concurrent writer) was lost
    without an error, and the close could reach the server before the commit.
    """

    def __init__(self, url: str, traversal_source: str = "g", **options: Any) -> None:
        super().__init__(url, traversal_source, **options)
        self._options = options
        self._sessions: list[ServerConnection] = []

    def create_session(self) -> ServerConnection:
        """A connection bound to a new server session (what ``g.tx().begin()`` asks for)."""
        if self.is_session_bound():
            raise GraphError(
                "a session connection cannot open another session", hint="use the parent connection"
            )
        options = {**self._options, "session": uuid.uuid4()}
        session = ServerConnection(self.url, self._traversal_source, **options)
        self._sessions.append(session)
        return session

    def remove_session(self, session_based_connection: RemoteConnection) -> None:
        """Close a session made by :meth:`create_session`."""
        session_based_connection.close()
        if session_based_connection in self._sessions:
            self._sessions.remove(session_based_connection)

    def close(self) -> None:
        """Close this connection and the sessions it opened."""
        for session in self._sessions:
            session.close()
        self._sessions.clear()
        super().close()

    def commit(self) -> None:
        """Commit the session's transaction; a refusal raises GremlinServerError (a conflict is transient)."""
        super().commit().all().result()

    def rollback(self) -> None:
        """Roll the session's transaction back, waiting for the server to have done it."""
        super().rollback().all().result()

    def submit(self, bytecode: Any) -> RemoteTraversal:
        """Submit like DriverRemoteConnection; an unreachable server or refused credentials raise GraphError."""
        try:
            return super().submit(bytecode)
        except GremlinServerError as exc:
            if exc.status_code not in _AUTH_REFUSED:
                raise
            self.close()
            raise GraphError(
                f"the graph server at {self.url} refused the login ({exc.status_message})",
                hint=f"check {ENV_PREFIX}GRAPH_USERNAME and {ENV_PREFIX}GRAPH_PASSWORD",
            ) from exc
        except Exception as exc:
            error = _unreachable(self.url, exc)
            if error is None:
                raise
            self.close()
            raise error from exc


def quiet_driver_log() -> None:
    """Keep gremlinpython from logging a server's refusals: they come back as platform errors with a hint."""
    logging.getLogger("gremlinpython").setLevel(logging.CRITICAL)


_MAX_MESSAGE_BYTES = 10 * 1024 * 1024  # gremlinpython's own default for a WebSocket frame


def _driver_options() -> dict[str, Any]:
    """What every gremlinpython driver object here is made with: the configured credentials, JanusGraph's
    GraphBinary types (read by ``graph/graphbinary_reader.py``), and a transport that also works inside a running event loop (``graph/transport.py``)."""
    from lineage_platform.graph.graphbinary_reader import FastGraphBinarySerializer
    from lineage_platform.graph.transport import transport_factory

    settings = load_settings()
    quiet_driver_log()
    return {
        "username": settings.graph_username or "",
        "password": settings.graph_password or "",
        "message_serializer": FastGraphBinarySerializer(),
        "transport_factory": transport_factory(max_content_length=_MAX_MESSAGE_BYTES),
    }


class ScriptClient(Client):
    """A driver Client for Gremlin script text whose failure to reach the server is a GraphError, as through
    :class:`ServerConnection`."""

    def submit_async(self, message: Any, bindings: Any = None, request_options: Any = None) -> Any:
        """Submit like Client; an unreachable server raises GraphError."""
        try:
            return super().submit_async(message, bindings, request_options)
        except Exception as exc:
            error = _unreachable(self._url, exc)
            if error is None:
                raise
            raise error from exc


def script_client(url: str) -> ScriptClient:
    """A driver client submitting Gremlin script text to the server at ``url`` (the console's remote path)."""
    return ScriptClient(url, "g", **_driver_options())


def _remote_connection(url: str, outbox: bool | None) -> Any:
    settings = load_settings()
    connection = ServerConnection(url, "g", **_driver_options())
    if settings.graph_outbox if outbox is None else outbox:
        from lineage_platform.graph.outbox import Outbox

        connection.outbox = Outbox()  # every product write path records its changes (graph/outbox.py)
    _remote.append(connection)
    return connection


def connect(url: str | None = None, *, outbox: bool | None = None) -> GraphTraversalSource:
    """A GraphTraversalSource on the graph named by ``url`` (default: the configured graph URL).

    outbox: for a ws:// graph, whether product writes through it record their changes in the change-capture outbox
    (default: ``LINEAGE_GRAPH_OUTBOX``); an embedded store needs none (change capture tails its log).
    """
    url = url or load_settings().graph_url
    facts = _url_facts(url)
    if facts.shared:
        return traversal().with_remote(_remote_connection(url, outbox))
    return traversal().with_remote(EmbeddedRemoteConnection(open_embedded(facts.store)))


def _connection_of(g: GraphTraversalSource) -> Any:
    return g.traversal_strategies.traversal_strategies[0].remote_connection


def backend_facts(target: GraphTraversalSource | str | None = None) -> BackendFacts:
    """The facts of the backend behind a connection, or of the one a graph URL names (default: the configured
    URL) without connecting; ``transactions`` of a server is known once :func:`supports_transactions` asked.

    >>> backend_facts("memory:").change_feed is None
    True
    >>> facts = backend_facts("ws://localhost:8182/gremlin")
    >>> facts.shared, facts.id_strategy.value, facts.change_feed
    (True, 'generate', 'outbox')
    """
    if target is None or isinstance(target, str):
        return _url_facts(target or load_settings().graph_url)
    connection = _connection_of(target)
    if not isinstance(connection, EmbeddedRemoteConnection):
        return replace(_SERVER_FACTS, transactions=getattr(connection, "_lineage_transactions", None))
    path = connection.graph.path
    return _MEMORY_FACTS if path is None else _store_facts(path)


def supports_transactions(g: GraphTraversalSource) -> bool:
    """Whether the graph behind ``g`` has transactions (the embedded engine and JanusGraph do; TinkerGraph,
    served by a Gremlin Server, does not). A server is asked once per connection: a rollback of an empty
    transaction; the answer is then part of :func:`backend_facts`."""
    known = backend_facts(g).transactions
    if known is None:
        connection = _connection_of(g)
        tx = g.tx()
        tx.begin()
        try:
            tx.rollback()  # a ServerConnection session waits for the answer: a refusal raises here
            known = True
        except GremlinServerError as error:
            if tx.is_open():
                tx.close()  # the refused rollback left the session open
            if "does not support transactions" not in str(error):
                raise
            known = False
        connection._lineage_transactions = known
    return known


def disconnect(g: GraphTraversalSource) -> None:
    """Close the connection behind ``g`` (an embedded graph itself stays open for other sources)."""
    for strategy in g.traversal_strategies.traversal_strategies:
        connection = getattr(strategy, "remote_connection", None)
        if connection is not None:
            connection.close()
            with _lock:
                if connection in _remote:
                    _remote.remove(connection)


def close_all() -> None:
    """Close every graph and connection this process opened (also run at exit)."""
    with _lock:
        for connection in _remote:
            connection.close()
        _remote.clear()
        for graph in _embedded.values():
            graph.close()
        _embedded.clear()


atexit.register(close_all)
