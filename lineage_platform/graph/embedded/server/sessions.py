"""Sessions: a client-chosen id bound to one connection and at most one open graph transaction.

Each session runs its graph calls on its own single worker thread. Two reasons: calls of one session stay
in order, and a session holding the graph lock can always commit even when every shared worker is blocked
waiting for that lock. The registry itself is only touched from the event loop thread, so it needs no lock.

A session's transaction holds the graph's only write lock, so it gets a lease: a transaction open longer than
``transaction_lease`` seconds (counted from its first statement, however busy the session is) is rolled back
and the session ended; its client learns why on its next request.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from gremlin_python.process.traversal import Bytecode, Traverser

from lineage_platform.graph.embedded.cancel import Cancellation
from lineage_platform.graph.embedded.server.backend import GraphBackend, Transaction

log = logging.getLogger(__name__)
T = TypeVar("T")
_REMEMBERED_ENDED_SESSIONS = 1024


class SessionError(Exception):
    """A request names a session it may not use; the message says why."""


class Session:
    """One client session: an ordered worker thread and the transaction it has open, if any."""

    def __init__(self, session_id: str, owner: int, graph: GraphBackend) -> None:
        self.id = session_id
        self.owner = owner
        self.active_requests = 0
        self.last_used = time.monotonic()
        self._graph = graph
        self._tx: Transaction | None = None
        self.tx_since: float | None = None  # when the open transaction started (set on the session's worker)
        self._worker = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix=f"gremlin-session-{session_id[:8]}"
        )

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Run ``fn(*args)`` on this session's worker, after everything submitted before it."""
        return self._worker.submit(fn, *args)

    def execute(self, bytecode: Bytecode, cancellation: Cancellation | None = None) -> list[Traverser]:
        """Run a traversal inside the session's transaction, opening one if none is open. Worker only."""
        if self._tx is None or not self._tx.is_open:
            self._tx = self._graph.begin()
            self.tx_since = time.monotonic()
        try:
            return self._graph.execute(bytecode, self._tx, cancellation)
        finally:
            if not self._tx.is_open:  # an interrupted statement rolled the whole transaction back
                self.tx_since = None

    def commit(self) -> None:
        """Commit the open transaction, if any. Worker only."""
        try:
            if self._tx is not None and self._tx.is_open:
                self._tx.commit()
        finally:
            self._tx, self.tx_since = None, None

    def rollback(self) -> None:
        """Roll back the open transaction, if any. Worker only."""
        try:
            if self._tx is not None and self._tx.is_open:
                self._tx.rollback()
        finally:
            self._tx, self.tx_since = None, None

    def end(self) -> Future[None]:
        """Roll back whatever is open (after any call still running) and retire the worker thread."""
        done = self._worker.submit(self._rollback_logged)
        self._worker.shutdown(wait=False)
        return done

    def _rollback_logged(self) -> None:
        try:
            self.rollback()
        except Exception:
            log.exception("rolling back session %s failed", self.id)


class SessionRegistry:
    """Open sessions by id, with the owning connection, idle expiry and a memory of ended ids."""

    def __init__(
        self,
        graph: GraphBackend,
        *,
        max_sessions: int,
        idle_timeout: float,
        transaction_lease: float | None = None,
    ) -> None:
        self._graph = graph
        self._max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.transaction_lease = transaction_lease
        self._open: dict[str, Session] = {}
        self._ended: OrderedDict[str, str] = OrderedDict()

    def __len__(self) -> int:
        return len(self._open)

    def acquire(self, session_id: str, owner: int) -> Session:
        """The session with this id, opened on first use; raises SessionError when it may not be used."""
        session = self._open.get(session_id)
        if session is not None:
            if session.owner != owner:
                raise SessionError(f"session {session_id} belongs to another connection")
            session.last_used = time.monotonic()
            return session
        if session_id in self._ended:
            raise SessionError(
                f"session {session_id} was closed ({self._ended[session_id]}); "
                "its transaction was rolled back: start a new transaction"
            )
        if len(self._open) >= self._max_sessions:
            raise SessionError(
                f"too many open sessions ({self._max_sessions}); commit or roll back open transactions first"
            )
        session = self._open[session_id] = Session(session_id, owner, self._graph)
        return session

    def end(self, session_id: str, reason: str) -> Future[None] | None:
        """Roll back and forget a session; later use of its id is refused with ``reason``."""
        session = self._open.pop(session_id, None)
        if session is None:
            return None
        self._ended[session_id] = reason
        while len(self._ended) > _REMEMBERED_ENDED_SESSIONS:
            self._ended.popitem(last=False)
        log.info("session %s ended: %s", session_id, reason)
        return session.end()

    def close(self, session_id: str, owner: int) -> Future[None] | None:
        """End a session at its client's request; closing an unknown or already ended session is a no-op."""
        session = self._open.get(session_id)
        if session is None:
            return None
        if session.owner != owner:
            raise SessionError(f"session {session_id} belongs to another connection")
        done = self.end(session_id, "closed by the client")
        self._ended.pop(session_id, None)
        return done

    def end_owned_by(self, owner: int, reason: str) -> list[Future[None]]:
        """End every session of one connection."""
        ids = [sid for sid, session in self._open.items() if session.owner == owner]
        return [f for sid in ids if (f := self.end(sid, reason)) is not None]

    def end_idle(self, now: float | None = None) -> list[str]:
        """End sessions idle longer than the timeout; returns their ids."""
        now = time.monotonic() if now is None else now
        idle = [
            sid
            for sid, session in self._open.items()
            if session.active_requests == 0 and now - session.last_used > self.idle_timeout
        ]
        for sid in idle:
            self.end(sid, f"idle for more than {self.idle_timeout:g} s")
        return idle

    def end_overdue_transactions(self, now: float | None = None) -> list[str]:
        """End sessions whose transaction has been open longer than the lease (rolling it back, which frees
        the graph lock once any request still running in the session ends); returns their ids."""
        if self.transaction_lease is None:
            return []
        now = time.monotonic() if now is None else now
        overdue = [
            sid
            for sid, session in self._open.items()
            if session.tx_since is not None and now - session.tx_since > self.transaction_lease
        ]
        for sid in overdue:
            log.warning("session %s: its transaction outlived the lease; rolling it back", sid)
            self.end(
                sid,
                f"its transaction held the graph lock longer than the {self.transaction_lease:g} s transaction "
                "lease and was rolled back; keep transactions shorter",
            )
        return overdue

    def end_all(self, reason: str) -> list[Future[None]]:
        """End every open session (server shutdown)."""
        return [f for sid in list(self._open) if (f := self.end(sid, reason)) is not None]
