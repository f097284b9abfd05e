"""Publishing hook events from the job being instrumented, without slowing it down.

``emit(sql, user=..., job=..., ...)`` puts the event on a bounded in-memory queue and returns at once; a
background thread owns the ``KafkaProducer``, serialises the events and sends them. The caller never waits
for the network or the broker: when the queue is full (broker down or slow) the event is dropped and counted.
At interpreter exit the queue is drained and the producer flushed (for at most ``close_timeout`` seconds).

The module-level :func:`emit` uses one process-wide :class:`HookEmitter` configured from the environment
(``LINEAGE_KAFKA_BOOTSTRAP``, ``LINEAGE_HOOK_TOPIC``) or by :func:`configure`.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import threading
import time
from dataclasses import dataclass
from typing import Any

from lineage_platform.config import ENV_PREFIX, load_settings
from lineage_platform.ingest.events.native import query_event

DEFAULT_TOPIC = "lineage-events"
DEFAULT_QUEUE_SIZE = 10_000
_STOP = object()


@dataclass
class EmitterStats:
    """What happened to the emitted events so far."""

    queued: int = 0
    sent: int = 0
    dropped: int = 0
    failed: int = 0


class HookEmitter:
    """A bounded queue drained by a background thread that owns the KafkaProducer."""

    def __init__(
        self,
        bootstrap_servers: str,
        topic: str = DEFAULT_TOPIC,
        *,
        queue_size: int = DEFAULT_QUEUE_SIZE,
        close_timeout: float = 5.0,
        producer_config: dict[str, Any] | None = None,
    ) -> None:
        self.bootstrap_servers = bootstrap_servers
        self.topic = topic
        self.close_timeout = close_timeout
        self.stats = EmitterStats()
        self._producer_config = {
            "linger_ms": 20,
            "acks": 1,
            "retries": 3,
            "max_block_ms": 5000,  # longest a send may wait for metadata or buffer space (in the sender thread)
            **(producer_config or {}),
        }
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=queue_size)
        self._closed = False
        self._thread = threading.Thread(target=self._drain, name="lineage-hook-emitter", daemon=True)
        self._thread.start()

    def emit(self, sql: str, *, default_db: str | None = None, **run: str | None) -> bool:
        """Queue a query event for ``sql`` with the run's provenance; False if it was dropped (queue full/closed).

        ``run`` takes ``status`` (default SUCCEEDED), ``user``, ``start_time``, ``end_time``, ``host``, ``cluster``,
        ``engine``, ``job``, ``queue``.
        """
        return self.emit_event(query_event(sql, default_db=default_db, **run))

    def emit_event(self, event: dict[str, Any]) -> bool:
        """Queue any JSON-serialisable event (a platform, Atlas or OpenLineage event); never blocks."""
        if self._closed:
            self.stats.dropped += 1
            return False
        try:
            self._queue.put_nowait(event)
        except queue.Full:
            self.stats.dropped += 1
            return False
        self.stats.queued += 1
        return True

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued event was handed to the broker (or failed); False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.stats.sent + self.stats.failed < self.stats.queued:
            if deadline is not None and time.monotonic() > deadline:
                return False
            time.sleep(0.005)
        return True

    def close(self, timeout: float | None = None) -> None:
        """Stop accepting events, send what is queued (for at most ``timeout`` seconds) and stop the thread."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(queue.Full):  # full and not draining: the thread is stuck, join() gives up
            self._queue.put(_STOP, timeout=timeout if timeout is not None else self.close_timeout)
        self._thread.join(timeout if timeout is not None else self.close_timeout)

    def _drain(self) -> None:
        producer = self._connect()
        while True:
            event = self._queue.get()
            if event is _STOP:
                break
            if producer is None:
                producer = self._connect()
            if producer is None:
                self.stats.failed += 1
                continue
            try:
                future = producer.send(self.topic, value=json.dumps(event, default=str).encode())
            except Exception:  # e.g. no metadata within max_block_ms: count it, the thread must live on
                self.stats.failed += 1
                continue
            future.add_callback(self._on_sent)
            future.add_errback(self._on_failed)
        if producer is not None:
            producer.flush(self.close_timeout)
            producer.close(self.close_timeout)

    def _connect(self) -> Any:
        from kafka import KafkaProducer
        from kafka.errors import KafkaError

        try:
            return KafkaProducer(bootstrap_servers=self.bootstrap_servers, **self._producer_config)
        except KafkaError:
            return None  # broker unreachable: the events in hand fail, the next one tries again

    def _on_sent(self, _metadata: Any) -> None:
        self.stats.sent += 1

    def _on_failed(self, _error: Exception) -> None:
        self.stats.failed += 1


_default: HookEmitter | None = None
_default_lock = threading.Lock()


def configure(bootstrap_servers: str | None = None, topic: str | None = None, **options: Any) -> HookEmitter:
    """Replace the process-wide emitter (closing the old one); unset values come from the environment."""
    global _default
    with _default_lock:
        if _default is not None:
            _default.close()
        _default = HookEmitter(
            bootstrap_servers or load_settings().kafka_bootstrap,
            topic or os.environ.get(ENV_PREFIX + "HOOK_TOPIC", DEFAULT_TOPIC),
            **options,
        )
        return _default


def emit(sql: str, *, default_db: str | None = None, **run: str | None) -> bool:
    """Publish a query event through the process-wide emitter (created on first use); never blocks."""
    emitter = _default or configure()
    return emitter.emit(sql, default_db=default_db, **run)


@atexit.register
def _close_default() -> None:
    if _default is not None:
        _default.close()
