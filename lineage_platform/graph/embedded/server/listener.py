"""The accept loop: hands accepted sockets to aiohttp, and backs off (logging once per interval) when accept fails.

asyncio's own accept loop reacts to running out of file descriptors by logging a traceback for every pending
connection and scheduling a retry for each, so a server at its descriptor limit writes hundreds of thousands of
tracebacks a minute. :class:`Listener` stops reading the listening socket instead, retries after
``backoff`` seconds, and logs one line per ``log_interval`` that says how many accepts failed and what to do.
Connections arriving meanwhile wait in the kernel's listen backlog.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import socket
import time
from collections.abc import Callable

log = logging.getLogger(__name__)
ACCEPT_BATCH = 64  # connections accepted per wake-up, so a burst does not starve the event loop
DEFAULT_BACKOFF_SECONDS = 1.0
DEFAULT_LOG_INTERVAL_SECONDS = 30.0


class Listener:
    """Accepts connections on a bound socket and serves each with ``protocol_factory()``."""

    def __init__(
        self,
        sock: socket.socket,
        protocol_factory: Callable[[], asyncio.Protocol],
        *,
        backoff: float = DEFAULT_BACKOFF_SECONDS,
        log_interval: float = DEFAULT_LOG_INTERVAL_SECONDS,
    ) -> None:
        self._sock = sock
        self._factory = protocol_factory
        self._backoff = backoff
        self._log_interval = log_interval
        self._loop: asyncio.AbstractEventLoop | None = None
        self._retry: asyncio.TimerHandle | None = None
        self._failures = 0  # failed accepts not yet reported
        self._failing_since: float | None = None  # set while accepts fail and a message about it went out
        self._last_report = float("-inf")
        self._connecting: set[asyncio.Task[object]] = set()

    def start(self) -> None:
        """Listen and start accepting (call from the event loop)."""
        self._loop = asyncio.get_running_loop()
        self._sock.setblocking(False)
        self._sock.listen(socket.SOMAXCONN)
        self._loop.add_reader(self._sock.fileno(), self._accept)

    def close(self) -> None:
        """Stop accepting and close the listening socket."""
        if self._retry is not None:
            self._retry.cancel()
        if self._loop is not None and self._sock.fileno() >= 0:
            self._loop.remove_reader(self._sock.fileno())
        self._sock.close()

    def _accept(self) -> None:
        assert self._loop is not None
        for _ in range(ACCEPT_BATCH):
            try:
                conn, _address = self._sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue
            except OSError as exc:
                self._pause(exc)
                return
            self._recovered()
            conn.setblocking(False)
            task = self._loop.create_task(self._connect(conn))
            self._connecting.add(task)
            task.add_done_callback(self._connecting.discard)

    async def _connect(self, conn: socket.socket) -> None:
        assert self._loop is not None
        try:
            await self._loop.connect_accepted_socket(self._factory, conn)
        except OSError as exc:
            log.warning("could not set up an accepted connection: %s", exc)
            conn.close()

    def _pause(self, exc: OSError) -> None:
        """Stop reading the listening socket for ``backoff`` seconds; report at most once per interval."""
        assert self._loop is not None
        self._loop.remove_reader(self._sock.fileno())
        self._retry = self._loop.call_later(self._backoff, self._resume)
        self._failures += 1
        now = time.monotonic()
        if now - self._last_report < self._log_interval:
            return
        if self._failing_since is None:
            self._failing_since = now
        soft_limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        log.error(
            "cannot accept connections: %s (%d failed accept(s) since the last message; retrying every %g s, "
            "new clients wait meanwhile). Raise the open-file limit (ulimit -n, now %d) or reduce the number "
            "of connections",
            exc.strerror or exc,
            self._failures,
            self._backoff,
            soft_limit,
        )
        self._failures, self._last_report = 0, now

    def _resume(self) -> None:
        assert self._loop is not None
        self._retry = None
        if self._sock.fileno() >= 0:
            self._loop.add_reader(self._sock.fileno(), self._accept)

    def _recovered(self) -> None:
        if self._failing_since is None:
            return
        log.warning(
            "accepting connections again after %.0f s of failed accepts",
            time.monotonic() - self._failing_since,
        )
        self._failing_since = None
