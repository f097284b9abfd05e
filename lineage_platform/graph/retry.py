"""Errors of a graph backend as platform errors, and retries of writes that failed for a passing reason.

A Gremlin Server answers a refused traversal with a ``GremlinServerError`` (status 500 and the server's message).
JanusGraph refuses concurrent writers of the same element with a locking exception (``Local lock contention``,
``PermanentLockingException``, ``TemporaryLockingException``): the transaction rolled back and running the same
idempotent upserts again succeeds. A concurrent writer can also make an upsert miss an element it created a moment
before and then trip over it (a uniqueness or multiplicity refusal): running the upserts again matches it, so
these are retried too, but stay terminal errors when the retries run out (then the data is at fault). Anything
else (a schema refusal, a bad traversal) fails the same way again.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from gremlin_python.driver.protocol import GremlinServerError

from lineage_platform.errors import GraphBusyError, GraphError, LineageError

T = TypeVar("T")
ATTEMPTS = 6
FIRST_PAUSE = 0.05  # seconds; doubled after each failed attempt, with jitter
_TRANSIENT_MARKS = ("LockingException", "lock contention", "Could not commit transaction", "TimeoutException")
_RACE_MARKS = ("violates a uniqueness constraint", "An edge with the given label already exists")


def is_transient(exc: BaseException) -> bool:
    """True when the same write may succeed if tried again."""
    if isinstance(exc, LineageError):
        return exc.transient
    if isinstance(exc, GremlinServerError):
        attributes = exc.status_attributes or {}
        text = " ".join([str(exc), *map(str, attributes.get("exceptions", ()))])
        return any(mark in text for mark in _TRANSIENT_MARKS)
    return False


def _may_be_a_race(exc: BaseException) -> bool:
    return isinstance(exc, GremlinServerError) and any(mark in str(exc) for mark in _RACE_MARKS)


def as_graph_error(exc: BaseException) -> LineageError:
    """A platform error for a failure of the graph backend (a LineageError is returned unchanged)."""
    if isinstance(exc, LineageError):
        return exc
    message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if is_transient(exc):
        return GraphBusyError(
            f"the graph server kept refusing concurrent writes: {message}",
            hint="try again; fewer concurrent writers (Spark partitions) contend less",
        )
    return GraphError(
        f"the graph server refused the write: {message}",
        hint="check the data against graph_schema/schema.yaml (`lineage graph init` applies it)",
    )


def retry_transient(write: Callable[[], T], *, on_retry: Callable[[], None] | None = None) -> T:
    """Run ``write``; while it fails for a transient reason, call ``on_retry`` and run it again (bounded).

    Server failures come out as platform errors (:func:`as_graph_error`).
    """
    pause = FIRST_PAUSE
    attempt = 1
    while True:
        try:
            return write()
        except LineageError as exc:
            if attempt == ATTEMPTS or not exc.transient:
                raise
        except GremlinServerError as exc:
            if attempt == ATTEMPTS or not (is_transient(exc) or _may_be_a_race(exc)):
                raise as_graph_error(exc) from exc
        if on_retry is not None:
            on_retry()
        time.sleep(pause * (1 + random.random()))
        pause *= 2
        attempt += 1
