"""The asyncio Gremlin Server: binds the WebSocket endpoint, owns sessions and workers, shuts down cleanly.

:class:`GremlinServer` runs inside an event loop (``await start()``, ``await stop()``); :func:`run_server`
is the blocking entry point behind ``lineage graph serve`` (stops on SIGTERM/SIGINT); :class:`BackgroundServer`
runs one in a daemon thread for tests, notebooks and benchmarks.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass
from pathlib import Path

from aiohttp import WSCloseCode, web

from lineage_platform.errors import ConfigError
from lineage_platform.graph.embedded.server.auth import Authenticator
from lineage_platform.graph.embedded.server.backend import GraphBackend
from lineage_platform.graph.embedded.server.connection import Connection
from lineage_platform.graph.embedded.server.limits import ConnectionLimits, LoginThrottle
from lineage_platform.graph.embedded.server.listener import Listener
from lineage_platform.graph.embedded.server.operations import Operations
from lineage_platform.graph.embedded.server.sessions import SessionRegistry

log = logging.getLogger(__name__)
SHUTDOWN_GRACE_SECONDS = 10.0


@dataclass(frozen=True)
class ServerSettings:
    """Everything ``lineage graph serve`` can tune; defaults follow Gremlin Server's where they make sense."""

    host: str = "127.0.0.1"
    port: int = 8182
    path: str = "/gremlin"
    credentials: Path | None = None
    traversal_sources: tuple[str, ...] = ("g",)
    batch_size: int = 64
    evaluation_timeout: float | None = 30.0
    session_timeout: float = 60.0
    max_sessions: int = 64
    max_frame_bytes: int = 10 * 1024 * 1024
    write_timeout: float = 30.0
    workers: int = 8
    max_in_flight: int = 8
    login_frame_bytes: int = 64 * 1024
    handshake_timeout: float = 10.0
    login_timeout: float = 10.0
    idle_timeout: float = 300.0
    max_items: int | None = 2_000_000
    transaction_lease: float | None = 120.0
    max_failed_logins: int = 10
    failed_login_window: float = 60.0


def is_loopback(host: str) -> bool:
    """True when every address ``host`` resolves to is a loopback address."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except socket.gaierror:
        return False
    return bool(infos) and all(ipaddress.ip_address(info[4][0]).is_loopback for info in infos)


def load_authenticator(settings: ServerSettings) -> Authenticator | None:
    """The authenticator for the settings; refuses to expose the graph beyond loopback without one."""
    if settings.credentials is not None:
        return Authenticator.from_file(settings.credentials)
    if not is_loopback(settings.host):
        raise ConfigError(
            f"refusing to serve the graph on {settings.host} without credentials: anyone who can reach "
            "that address could read and change it",
            hint="pass --credentials FILE (create it with `lineage graph serve --credentials FILE "
            "--add-user NAME`) or bind to 127.0.0.1",
        )
    return None


def _bind(host: str, port: int) -> socket.socket:
    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    try:
        return socket.create_server((host, port), family=family, reuse_port=False)
    except OSError as exc:
        raise ConfigError(
            f"cannot listen on {host}:{port}: {exc.strerror}",
            hint="pick another --port, or stop the process already using it",
        ) from exc


class GremlinServer:
    """Serves a graph over the Gremlin Server WebSocket protocol (GraphBinary v1, GraphSON 3.0 and 2.0)."""

    def __init__(
        self, graph: GraphBackend, settings: ServerSettings, authenticator: Authenticator | None
    ) -> None:
        self.settings = settings
        self._graph = graph
        self._authenticator = authenticator
        self._pool = ThreadPoolExecutor(max_workers=settings.workers, thread_name_prefix="gremlin-worker")
        self.sessions = SessionRegistry(
            graph,
            max_sessions=settings.max_sessions,
            idle_timeout=settings.session_timeout,
            transaction_lease=settings.transaction_lease,
        )
        self._operations = Operations(
            graph,
            self.sessions,
            self._pool,
            traversal_sources=settings.traversal_sources,
            max_items=settings.max_items,
        )
        self._limits = ConnectionLimits(
            settings.batch_size,
            settings.evaluation_timeout,
            settings.write_timeout,
            settings.max_in_flight,
            login_frame_bytes=settings.login_frame_bytes,
            login_timeout=settings.login_timeout,
            idle_timeout=settings.idle_timeout,
        )
        self._throttle = LoginThrottle(settings.max_failed_logins, settings.failed_login_window)
        self._connections: set[Connection] = set()
        self._runner: web.AppRunner | None = None
        self._listener: Listener | None = None
        self._reaper: asyncio.Task[None] | None = None
        self.port: int | None = None

    @property
    def url(self) -> str:
        """The ws:// URL clients connect to."""
        host = f"[{self.settings.host}]" if ":" in self.settings.host else self.settings.host
        return f"ws://{host}:{self.port}{self.settings.path}"

    async def start(self) -> None:
        """Bind and start accepting connections (port 0 picks a free port, see ``self.port``)."""
        app = web.Application()
        app.router.add_get(self.settings.path, self._handle)
        # keepalive_timeout closes a connection that has not completed its HTTP request (the WebSocket
        # handshake) in time; an upgraded WebSocket is no longer subject to it
        self._runner = web.AppRunner(
            app,
            access_log=None,
            shutdown_timeout=SHUTDOWN_GRACE_SECONDS,
            keepalive_timeout=self.settings.handshake_timeout,
        )
        await self._runner.setup()
        sock = _bind(self.settings.host, self.settings.port)
        self.port = sock.getsockname()[1]
        self._listener = Listener(sock, self._runner.server)
        self._listener.start()
        self._reaper = asyncio.create_task(self._expire_idle_sessions())
        log.info("serving the graph on %s (auth: %s)", self.url, "on" if self._authenticator else "off")

    async def stop(self) -> None:
        """Stop accepting, cancel running evaluations, close client connections, roll back open sessions,
        release the workers."""
        if self._reaper is not None:
            self._reaper.cancel()
        if self._listener is not None:
            self._listener.close()
        evaluations = self._operations.cancel_all("the server is shutting down")
        closing = [
            connection.ws.close(code=WSCloseCode.GOING_AWAY, message=b"server shutdown")
            for connection in self._connections
        ]
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(SHUTDOWN_GRACE_SECONDS):
                await asyncio.gather(*closing, return_exceptions=True)
        if self._runner is not None:
            await self._runner.cleanup()
        stopping = evaluations + self.sessions.end_all("the server shut down")
        if stopping:  # the graph may be closed once the cancelled evaluations and the rollbacks are done
            await asyncio.get_running_loop().run_in_executor(
                None, lambda: wait_futures(stopping, timeout=SHUTDOWN_GRACE_SECONDS)
            )
        self._pool.shutdown(wait=False, cancel_futures=True)
        log.info("server on %s stopped", self.url)

    async def _expire_idle_sessions(self) -> None:
        limits = [self.sessions.idle_timeout, self.sessions.transaction_lease or self.sessions.idle_timeout]
        interval = max(0.05, min(1.0, min(limits) / 4))
        while True:
            await asyncio.sleep(interval)
            self.sessions.end_idle()
            self.sessions.end_overdue_transactions()

    async def _handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(max_msg_size=self.settings.max_frame_bytes)
        await ws.prepare(request)
        peername = request.transport.get_extra_info("peername") if request.transport else None
        connection = Connection(
            ws,
            request.transport,
            (peername[0], peername[1]) if peername else None,
            self._operations,
            self.sessions,
            self._limits,
            self._authenticator,
            self._throttle,
        )
        self._connections.add(connection)
        try:
            await connection.serve()
        finally:
            self._connections.discard(connection)
            if request.transport is not None and not ws.closed:
                request.transport.abort()
        return ws


async def serve_until_stopped(
    server: GremlinServer, stop: asyncio.Event, on_ready: Callable[[str], None] | None = None
) -> None:
    """Start ``server``, tell ``on_ready`` its URL, wait for ``stop``, then stop it."""
    await server.start()
    if on_ready is not None:
        on_ready(server.url)
    try:
        await stop.wait()
    finally:
        await server.stop()


def run_server(
    graph: GraphBackend,
    settings: ServerSettings,
    authenticator: Authenticator | None,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve until SIGTERM or SIGINT, then shut down gracefully and close the graph (its final checkpoint).

    Further signals during the shutdown are logged and do not interrupt it, so a second SIGTERM cannot kill a
    checkpoint half-written (SIGKILL still can, and leaves the previous checkpoint and the log valid)."""

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in _SHUTDOWN_SIGNALS:
            loop.add_signal_handler(signum, _request_stop, stop, signum)
        await serve_until_stopped(GremlinServer(graph, settings, authenticator), stop, on_ready)

    try:
        asyncio.run(main())
    finally:
        with _signals_deferred():
            log.info("closing the store (its final checkpoint may take a while)")
            graph.close()
            log.info("the store is closed")


_SHUTDOWN_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _request_stop(stop: asyncio.Event, signum: int) -> None:
    if stop.is_set():
        _log_signal_during_shutdown(signum)
    stop.set()


def _log_signal_during_shutdown(signum: int, _frame: object = None) -> None:
    log.warning(
        "%s received while shutting down: finishing the shutdown and the store's checkpoint first (SIGKILL "
        "abandons the checkpoint; the previous checkpoint and the log stay valid)",
        signal.Signals(signum).name,
    )


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Log SIGTERM/SIGINT instead of dying while the store closes (main thread only, where handlers live)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _log_signal_during_shutdown) for signum in _SHUTDOWN_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class BackgroundServer:
    """A GremlinServer on its own event loop in a daemon thread; a context manager that stops it on exit."""

    def __init__(
        self,
        graph: GraphBackend,
        settings: ServerSettings | None = None,
        authenticator: Authenticator | None = None,
    ) -> None:
        self.server = GremlinServer(graph, settings or ServerSettings(port=0), authenticator)
        self._loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="gremlin-server", daemon=True)
        self._started = threading.Event()
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        """The ws:// URL clients connect to."""
        return self.server.url

    def start(self) -> BackgroundServer:
        """Start serving; returns once the port is bound (or raises what prevented it)."""
        self._thread.start()
        self._started.wait()
        if self._error is not None:
            raise self._error
        return self

    def stop(self) -> None:
        """Shut down gracefully and wait for the thread."""
        if self._stop is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join()

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        try:
            await serve_until_stopped(self.server, self._stop, on_ready=lambda _url: self._started.set())
        except BaseException as exc:
            self._error = exc
        finally:
            self._started.set()
