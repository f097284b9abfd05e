"""The graph's exclusive write lock and explicit transactions.

One transaction at a time holds the lock, from its first statement until commit or rollback; autocommit
executions hold it for their duration. The lock belongs to the Transaction object, not to a thread, so a server
may run one session's requests on any thread. A waiter gives up when the lock timeout runs out
(:class:`GraphBusyError`, transient: retry) or when its execution is cancelled.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from lineage_platform.errors import GraphBusyError, GraphError
from lineage_platform.graph.embedded.cancel import Cancellation

# How often a waiter with a Cancellation looks whether it has been cancelled (seconds).
_CANCEL_POLL = 0.05


class GraphLock:
    """An exclusive lock that remembers who holds it and since when (for the 'graph busy' message)."""

    def __init__(self, timeout: float) -> None:
        self._lock = threading.Lock()
        self.timeout = timeout
        self.holder: Any = None
        self.since = 0.0

    def acquire(self, owner: Any, cancellation: Cancellation | None = None) -> None:
        """Take the lock for ``owner``; raise GraphBusyError after the timeout, TraversalInterrupted when
        ``cancellation`` says so first."""
        if cancellation is None:
            acquired = self._lock.acquire(timeout=self.timeout)
        else:
            acquired = self._acquire_cancellable(cancellation)
        if not acquired:
            held = time.monotonic() - self.since
            raise GraphBusyError(
                f"graph busy: a transaction has been open for {held:.0f}s; retry later",
                hint="commit or roll back the open transaction (g.tx()), or raise lock_timeout",
            )
        self.holder = owner
        self.since = time.monotonic()

    def _acquire_cancellable(self, cancellation: Cancellation) -> bool:
        """Wait in slices, checking ``cancellation`` between them; False when the lock timeout runs out."""
        give_up = time.monotonic() + self.timeout
        while True:
            cancellation.check()
            remaining = give_up - time.monotonic()
            if remaining <= 0:
                return False
            if self._lock.acquire(timeout=min(remaining, _CANCEL_POLL)):
                return True

    def release(self, owner: Any) -> None:
        """Release the lock held by ``owner``."""
        if self.holder is not owner:
            raise GraphError(
                "the graph lock is not held by this transaction", hint="this is a bug in the caller"
            )
        self.holder = None
        self._lock.release()


class Transaction:
    """An explicit transaction (``g.tx()``): takes the graph lock at its first statement."""

    def __init__(
        self,
        start: Callable[[Transaction, Cancellation | None], None],
        finish: Callable[[Transaction, bool], None],
    ) -> None:
        self._start = start
        self._finish = finish
        self.started = False
        self.closed = False

    @property
    def is_open(self) -> bool:
        """True until commit() or rollback()."""
        return not self.closed

    def ensure_started(self, cancellation: Cancellation | None = None) -> None:
        """Take the graph lock and open the change set (first statement only); waiting for the lock stops
        when ``cancellation`` is cancelled."""
        if self.closed:
            raise GraphError("this transaction is already closed", hint="begin a new transaction")
        if not self.started:
            self._start(self, cancellation)
            self.started = True

    def commit(self) -> None:
        """Make the transaction's writes permanent (and durable when the graph has a store)."""
        self._close(commit=True)

    def rollback(self) -> None:
        """Undo the transaction's writes."""
        self._close(commit=False)

    def _close(self, *, commit: bool) -> None:
        if self.closed:
            return
        self.closed = True
        if self.started:
            self._finish(self, commit)
