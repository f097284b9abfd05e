"""The subscriber library: read a topic's change events in order, once each, into a sink.

A sink (the reference one is :class:`~lineage_platform.cdc.mirror.SqliteMirror`) stores the changes and, in
the same transaction, the subscriber's position per partition: the next offset and the (SCN, seq) of the
last event applied there. Each element's events sit in one partition in (SCN, seq) order, so an event at or
below its partition's last position is a copy the relay sent again after a crash, and is dropped.

Chunked events are put back together (``framing.py``) and a transaction's events wait until all of them have
arrived (``transactions.py``): a sink only ever holds whole transactions, and the position it records stops
at the first record still waiting, so a restarted subscriber reads those again.

A new subscriber starts from a snapshot: the graph as of some SCN (see
:func:`~lineage_platform.cdc.store_snapshot.snapshot_of_store`), then reads each partition from its start,
skipping events at or below that SCN. If Kafka already deleted events the subscriber would need, it says so
with :class:`BootstrapRequired` instead of skipping them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from lineage_platform.cdc.avro import decode_event
from lineage_platform.cdc.channel import kafka_error, open_consumer
from lineage_platform.cdc.errors import BootstrapRequired, ChangeCaptureError
from lineage_platform.cdc.events import ChangeEvent
from lineage_platform.cdc.framing import Reassembler, Whole
from lineage_platform.cdc.transactions import Arrival, PendingTransactions

_REBOOTSTRAP_HINT = "bootstrap this subscriber again from a snapshot (`lineage cdc mirror --rebootstrap`)"


@dataclass(frozen=True)
class Position:
    """How far a subscriber got in one partition."""

    next_offset: int
    scn: int
    seq: int


@dataclass
class Snapshot:
    """The graph as of ``scn``, as the events that rebuild it (all stamped ``scn``)."""

    scn: int
    events: Iterable[ChangeEvent]


class Sink(Protocol):
    """Where a subscriber keeps the changes and its positions (atomically together)."""

    def load(self) -> tuple[int | None, dict[int, Position]]:
        """The snapshot SCN (None: never bootstrapped) and the saved positions."""

    def bootstrap(self, snapshot: Snapshot) -> None:
        """Replace everything with ``snapshot``; forget positions."""

    def apply(self, events: Iterable[ChangeEvent], positions: dict[int, Position]) -> None:
        """Store ``events`` and ``positions`` in one transaction."""

    def close(self) -> None:
        """Release the sink's resources."""


@dataclass
class SubscriberSummary:
    """What a subscriber did."""

    applied: int = 0
    duplicates: int = 0
    snapshot_scn: int = 0
    last_scn: int = 0
    seconds: float = 0.0


class Subscriber:
    """Keeps ``sink`` in sync with ``topic``.

    ``snapshot`` makes the first (or a forced) bootstrap; without one, ``since_scn`` says which changes a new
    subscriber wants (those after it) and no content is loaded.
    """

    def __init__(
        self,
        brokers: str,
        topic: str,
        sink: Sink,
        *,
        snapshot: Callable[[], Snapshot] | None = None,
        since_scn: int | None = None,
        rebootstrap: bool = False,
    ) -> None:
        self.brokers = brokers
        self.topic = topic
        self.sink = sink
        snapshot_scn, self._positions = sink.load()
        if snapshot_scn is None or rebootstrap:
            snapshot_scn = self._bootstrap(snapshot, since_scn)
        self.summary = SubscriberSummary(snapshot_scn=snapshot_scn, last_scn=snapshot_scn)
        self._floor = snapshot_scn
        # per partition: the (SCN, seq) of the last event taken (applied or waiting), and the last offset read
        self._seen = {partition: (p.scn, p.seq) for partition, p in self._positions.items()}
        self._read: dict[int, int] = {}
        self._chunks = Reassembler()
        self._pending = PendingTransactions()
        self._unchecked: set[int] = set()  # fresh partitions whose first record must prove nothing was lost
        self._consumer = open_consumer(brokers)
        try:
            self._assign()
        except BaseException:
            self._consumer.close()
            raise

    def _bootstrap(self, snapshot: Callable[[], Snapshot] | None, since_scn: int | None) -> int:
        if snapshot is not None:
            taken = snapshot()
        elif since_scn is not None:
            taken = Snapshot(since_scn, ())
        else:
            raise BootstrapRequired(
                f"this subscriber of {self.topic} has no snapshot yet",
                hint="give it a snapshot source (--store for an embedded graph) or the SCN to start after",
            )
        self.sink.bootstrap(taken)
        self._positions = {}
        return taken.scn

    def _assign(self) -> None:
        from kafka import TopicPartition
        from kafka.errors import KafkaError

        try:
            numbers = self._consumer.partitions_for_topic(self.topic)
            if not numbers:
                raise ChangeCaptureError(
                    f"topic {self.topic} does not exist on {self.brokers}",
                    hint="start `lineage cdc relay` for this topic first, or check --topic",
                )
            partitions = [TopicPartition(self.topic, n) for n in sorted(numbers)]
            self._consumer.assign(partitions)
            beginnings = self._consumer.beginning_offsets(partitions)
        except KafkaError as exc:
            raise kafka_error(f"read {self.topic}", self.brokers, exc) from exc
        for partition in partitions:
            position = self._positions.get(partition.partition)
            first = beginnings[partition]
            require_resumable(self.topic, partition.partition, position, first)
            if position is None:
                self._consumer.seek(partition, first)
                if first > 0:
                    self._unchecked.add(partition.partition)
            else:
                self._consumer.seek(partition, position.next_offset)

    def poll(self, timeout_ms: int = 200, max_records: int = 5000) -> int:
        """Apply one batch of new events; returns how many records were read (0: nothing new)."""
        from kafka.errors import KafkaError

        started = time.perf_counter()
        try:
            batches = self._consumer.poll(timeout_ms=timeout_ms, max_records=max_records)
        except KafkaError as exc:
            raise kafka_error(f"read {self.topic}", self.brokers, exc) from exc
        read = 0
        for partition, records in batches.items():
            read += len(records)
            self._read[partition.partition] = records[-1].offset
            for record in records:
                whole = self._chunks.add(record)
                if whole is not None:
                    self._take(whole, record)
        ready = self._pending.pop_complete()
        moved = self._positions_after(ready, {partition.partition for partition in batches})
        if moved:
            events = [arrival.event for arrival in ready]
            self.sink.apply(events, moved)
            self._positions.update(moved)
            self.summary.applied += len(events)
            self.summary.last_scn = max([self.summary.last_scn, *(event.scn for event in events)])
        self.summary.seconds += time.perf_counter() - started
        return read

    def _take(self, whole: Whole, record: Any) -> None:
        """Hold one whole event read from its partition, unless it is in the snapshot or a copy."""
        partition = whole.partition
        event = _decode(record, whole.data)
        if partition in self._unchecked:
            self._unchecked.discard(partition)
            require_nothing_trimmed(self.topic, partition, whole.offset, event.scn, self._floor)
        if event.scn <= self._floor:
            return  # already part of the snapshot
        if event.position <= self._seen.get(partition, (self._floor, -1)):
            self.summary.duplicates += 1  # sent again by a relay that restarted
            return
        self._seen[partition] = event.position
        self._pending.add(Arrival(partition, whole.offset, event), whole.transaction_events)

    def _positions_after(self, ready: list[Arrival], read: set[int]) -> dict[int, Position]:
        """The new position of every partition read or applied from: the next offset stops at the first record
        still waiting (a partial chunked event or part of an incomplete transaction)."""
        applied = {arrival.partition: arrival.event.position for arrival in ready}  # ready is in order
        moved = {}
        for partition in read | set(applied):
            held = [
                offset
                for offset in (self._chunks.held_offset(partition), self._pending.held_offset(partition))
                if offset is not None
            ]
            next_offset = min(held) if held else self._read[partition] + 1
            before = self._positions.get(partition)
            last = applied.get(partition) or ((before.scn, before.seq) if before else (self._floor, -1))
            moved[partition] = Position(next_offset, *last)
        return moved

    def run_until_idle(self, idle_seconds: float = 1.0) -> SubscriberSummary:
        """Apply events until none arrived for ``idle_seconds``."""
        quiet_since = time.monotonic()
        while time.monotonic() - quiet_since < idle_seconds:
            if self.poll():
                quiet_since = time.monotonic()
        return self.summary

    def run(self, stop: threading.Event) -> SubscriberSummary:
        """Apply events until ``stop`` is set."""
        while not stop.is_set():
            self.poll()
        return self.summary

    def close(self) -> None:
        """Close the Kafka consumer and the sink."""
        self._consumer.close()
        self.sink.close()


def require_resumable(topic: str, partition: int, position: Position | None, first_offset: int) -> None:
    """Raise :class:`BootstrapRequired` if retention deleted records after where a subscriber stopped."""
    if position is not None and position.next_offset < first_offset:
        raise BootstrapRequired(
            f"{topic}[{partition}] now starts at offset {first_offset}; this subscriber stopped at offset "
            f"{position.next_offset}, so the changes in between were deleted by retention",
            hint=_REBOOTSTRAP_HINT,
        )


def require_nothing_trimmed(topic: str, partition: int, offset: int, scn: int, snapshot_scn: int) -> None:
    """Raise :class:`BootstrapRequired` unless a fresh subscriber's first record of a partition proves that
    nothing newer than its snapshot was deleted before it (offset 0, or an SCN no newer than the snapshot)."""
    if offset > 0 and scn > snapshot_scn:
        raise BootstrapRequired(
            f"{topic}[{partition}] starts at offset {offset} with SCN {scn}; events between the snapshot "
            f"(SCN {snapshot_scn}) and it may have been deleted by retention",
            hint="take a newer snapshot: " + _REBOOTSTRAP_HINT,
        )


def _decode(record: Any, data: bytes) -> ChangeEvent:
    """The event ``data`` (a record's value, or the chunks ending with ``record``); damage is reported with the
    record's place, never skipped."""
    try:
        return decode_event(data)
    except ChangeCaptureError as exc:
        raise type(exc)(
            f"{record.topic}[{record.partition}] offset {record.offset}: {exc.message}", hint=exc.hint
        ) from exc
