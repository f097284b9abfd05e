"""The Kafka collector: hook events from topics into the lineage graph, each applied exactly once in effect.

Loop (one consumer in a consumer group; run several for more partitions):

1. ``poll`` up to ``max_records`` records;
2. decode each (``events.EventDecoder``: platform events, Atlas HookNotifications, OpenLineage RunEvents);
   a record that cannot be used (garbage, JSON nested too deep, a compressed message inflating past
   ``max_event_bytes``, ...) goes to the dead-letter list with its reason;
3. write all decoded lineage in one transaction (``LineageWriter.write_together``: one durable commit per poll;
   keyed upserts, so re-writing is harmless);
   if that write is refused for a reason that is not transient, each event is written on its own and the ones
   still refused join the dead letters;
4. send the dead letters (original bytes; headers ``reason``, ``topic``, ``partition``, ``offset``) and wait
   for the broker to take them;
5. only then commit the offsets — but never past a part of a split Atlas message whose other parts are still
   missing, so a restart reads that part again. A split message still incomplete after ``split_timeout``
   seconds is given up: its parts go to the dead letters and the commit moves on.

A collector killed anywhere in this loop re-reads at most the records after its last commit and writes them
again, which changes nothing: every event ends up applied exactly once in the graph.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lineage_platform.errors import ConfigError, IngestError
from lineage_platform.ingest.apply import apply_events
from lineage_platform.ingest.catalog_index import CatalogIndex
from lineage_platform.ingest.events import EventDecoder, LineageItems
from lineage_platform.ingest.events.atlas import DEFAULT_MAX_BYTES

if TYPE_CHECKING:
    from gremlin_python.process.graph_traversal import GraphTraversalSource
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.consumer.fetcher import ConsumerRecord

    from lineage_platform.sql.function_rules import FunctionRule

DEFAULT_GROUP = "lineage-collector"
DEFAULT_DEAD_LETTER_TOPIC = "lineage-dead-letter"
DEFAULT_MAX_EVENT_BYTES = DEFAULT_MAX_BYTES
FIRST_POLL_RECORDS = 20  # the first poll's size, before the rate of this stream is known


@dataclass(frozen=True)
class CollectorOptions:
    """Where to read, where to write, and when to stop."""

    bootstrap_servers: str
    topics: tuple[str, ...]
    group_id: str = DEFAULT_GROUP
    dead_letter_topic: str | None = DEFAULT_DEAD_LETTER_TOPIC
    graph_url: str | None = None
    schema: dict[str, Any] | None = None
    function_rules: Mapping[str, FunctionRule] | None = None  # lineage rules of user UDFs
    batch_size: int = 500
    max_records: int = 500
    poll_timeout_ms: int = 500
    fetch_max_wait_ms: int = 100
    connect_timeout_ms: int = 30000
    split_timeout: float = 300.0
    max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES
    max_poll_interval_ms: int = 5000
    session_timeout_ms: int = 6000
    idle_timeout: float | None = None
    max_records_total: int | None = None


def next_poll_size(records: int, seconds: float, max_records: int, max_poll_interval_ms: int) -> int:
    """Records to ask for in the next poll: as many as the rate just seen applies in half the max poll interval, at
    most twice the last poll and ``max_records``, at least one. A slow stream (SQL hook events parse at tens per
    second) then never outlasts the interval, which would make the group rebalance and hand the same uncommitted
    records out again.

    >>> next_poll_size(500, 26.0, 500, 5000), next_poll_size(20, 0.01, 500, 5000), next_poll_size(3, 60.0, 500, 5000)
    (48, 40, 1)
    """
    fitting = int(records * max_poll_interval_ms / 2000 / seconds) if seconds > 0 else max_records
    return max(1, min(max_records, 2 * records, fitting))


@dataclass
class CollectorStats:
    """Counts since the collector started, and the lag (records not yet read) at the last poll."""

    records: int = 0
    applied: int = 0
    dead_lettered: int = 0
    pending_parts: int = 0
    statements: int = 0
    vertices: int = 0
    edges: int = 0
    runs: int = 0
    commits: int = 0
    lag: int | None = None
    seconds: float = 0.0
    formats: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)

    def rows(self) -> list[tuple[str, str]]:
        """(name, value) pairs for display."""
        names = ("records", "applied", "dead_lettered", "pending_parts", "statements", "vertices", "edges")
        rows = [
            (name.replace("_", " "), str(getattr(self, name))) for name in (*names, "runs", "commits", "lag")
        ]
        rows += [(f"format {name}", str(count)) for name, count in sorted(self.formats.items())]
        rows += [(f"dead letter: {reason}", str(count)) for reason, count in self.reasons.most_common()]
        return [*rows, ("seconds", f"{self.seconds:.2f}")]


@dataclass(frozen=True)
class _Event:
    record: ConsumerRecord
    items: LineageItems


class Collector:
    """Consumes hook events and writes their lineage; see the module docstring for the guarantees."""

    def __init__(
        self,
        options: CollectorOptions,
        g: GraphTraversalSource | None = None,
        on_batch: Callable[[CollectorStats], None] | None = None,
    ) -> None:
        from lineage_platform.graph import connect
        from lineage_platform.graph.writer import LineageWriter

        if not options.topics:
            raise ConfigError(
                "no topic to collect from", hint="pass --topic (several times for several topics)"
            )
        self.options = options
        self.writer = LineageWriter(g or connect(options.graph_url), batch_size=options.batch_size)
        self.decoder = EventDecoder(
            CatalogIndex(options.schema), options.function_rules, max_bytes=options.max_event_bytes
        )
        self.stats = CollectorStats()
        self.on_batch = on_batch
        self._stopping = False
        self._done: dict[TopicPartition, int] = {}  # next offset to commit per partition
        self._held: dict[tuple[str, int, int], ConsumerRecord] = {}  # parts of incomplete split messages

    def stop(self) -> None:
        """Ask the loop to finish the batch in hand, commit and return (safe from a signal handler)."""
        self._stopping = True

    def run(self) -> CollectorStats:
        """Collect until stopped, idle for ``idle_timeout`` seconds, or ``max_records_total`` records are read."""
        started = time.monotonic()
        consumer = self._consumer()
        producer = self._producer() if self.options.dead_letter_topic else None
        last_record = time.monotonic()
        poll_size = min(FIRST_POLL_RECORDS, self.options.max_records)
        try:
            while not self._stopping:
                polled = consumer.poll(timeout_ms=self.options.poll_timeout_ms, max_records=poll_size)
                records = [record for batch in polled.values() for record in batch]
                if records:
                    began = time.monotonic()
                    self._process(records, consumer, producer)
                    last_record = time.monotonic()
                    poll_size = next_poll_size(
                        len(records),
                        last_record - began,
                        self.options.max_records,
                        self.options.max_poll_interval_ms,
                    )
                elif self._held:
                    self._give_up_splits(consumer, producer)
                elif not consumer.assignment():
                    last_record = time.monotonic()  # still joining the group: not idle yet
                self.stats.lag = _lag(consumer)
                self.stats.seconds = time.monotonic() - started
                if records and self.on_batch is not None:
                    self.on_batch(self.stats)
                if (
                    self.options.idle_timeout is not None
                    and time.monotonic() - last_record > self.options.idle_timeout
                ):
                    break
                if (
                    self.options.max_records_total is not None
                    and self.stats.records >= self.options.max_records_total
                ):
                    break
        finally:
            consumer.close()
            if producer is not None:
                producer.close()
        self.stats.seconds = time.monotonic() - started
        return self.stats

    def _consumer(self) -> KafkaConsumer:
        from kafka import KafkaConsumer
        from kafka.errors import KafkaError

        try:
            return KafkaConsumer(
                *self.options.topics,
                bootstrap_servers=self.options.bootstrap_servers,
                group_id=self.options.group_id,
                enable_auto_commit=False,
                auto_offset_reset="earliest",
                max_poll_interval_ms=self.options.max_poll_interval_ms,
                fetch_max_wait_ms=self.options.fetch_max_wait_ms,
                bootstrap_timeout_ms=self.options.connect_timeout_ms,
                session_timeout_ms=self.options.session_timeout_ms,
                heartbeat_interval_ms=max(100, self.options.session_timeout_ms // 3),
            )
        except KafkaError as exc:
            raise ConfigError(
                f"no Kafka broker answers at {self.options.bootstrap_servers}",
                hint="check --bootstrap-servers (LINEAGE_KAFKA_BOOTSTRAP) and that the broker runs",
            ) from exc

    def _producer(self) -> KafkaProducer:
        from kafka import KafkaProducer

        return KafkaProducer(bootstrap_servers=self.options.bootstrap_servers, acks="all", linger_ms=5)

    def _process(
        self, records: list[ConsumerRecord], consumer: KafkaConsumer, producer: KafkaProducer | None
    ) -> None:
        from kafka import TopicPartition

        events: list[_Event] = []
        dead: list[tuple[ConsumerRecord, str]] = []
        for record in records:
            position = (record.topic, record.partition, record.offset)
            self._done[TopicPartition(record.topic, record.partition)] = record.offset + 1
            try:
                decoded = self.decoder.decode(record.value, position)
            except IngestError as exc:
                dead.append((record, str(exc)))
                continue
            self.stats.formats[decoded.format] += 1
            if decoded.pending:
                self._held[position] = record
            else:
                events.append(_Event(record, decoded.items))
        refused = self._write(events)
        self._dead_letter(dead + refused + self._abandoned_parts(), producer)
        self._commit(consumer)
        self.stats.records += len(records)
        self.stats.applied += len(events) - len(refused)

    def _abandoned_parts(self) -> list[tuple[ConsumerRecord, str]]:
        """Parts of split messages incomplete for longer than ``split_timeout``, with the reason; forgets the
        records of messages completed meanwhile."""
        dead = []
        for split in self.decoder.atlas_parts.expire(time.monotonic() - self.options.split_timeout):
            reason = (
                f"incomplete split Atlas message {split.msg_id}: {split.received} of {split.expected} parts "
                f"within {self.options.split_timeout:g} s"
            )
            dead += [(self._held[position], reason) for position in split.positions]
        pending = set(self.decoder.atlas_parts.pending())
        self._held = {position: record for position, record in self._held.items() if position in pending}
        self.stats.pending_parts = len(pending)
        return dead

    def _give_up_splits(self, consumer: KafkaConsumer, producer: KafkaProducer | None) -> None:
        """Between records: dead-letter split messages that waited too long, so the commit can move on."""
        dead = self._abandoned_parts()
        if dead:
            self._dead_letter(dead, producer)
            self._commit(consumer)

    def _write(self, events: list[_Event]) -> list[tuple[ConsumerRecord, str]]:
        """Write the events' lineage; returns the events the graph refused, with the reason."""
        summary, refused = apply_events(self.writer, [(event.record, event.items) for event in events])
        self._count(summary)
        return refused

    def _count(self, summary: Any) -> None:
        self.stats.statements += summary.statements
        self.stats.vertices += summary.vertices
        self.stats.edges += summary.edges
        self.stats.runs += summary.runs

    def _dead_letter(self, dead: list[tuple[ConsumerRecord, str]], producer: KafkaProducer | None) -> None:
        for record, reason in dead:
            self.stats.dead_lettered += 1
            self.stats.reasons[reason.split(":")[0]] += 1
            if producer is None:
                continue
            headers = [
                ("reason", reason.encode()),
                ("topic", record.topic.encode()),
                ("partition", str(record.partition).encode()),
                ("offset", str(record.offset).encode()),
            ]
            producer.send(
                self.options.dead_letter_topic, value=record.value or b"", key=record.key, headers=headers
            )
        if dead and producer is not None:
            producer.flush()

    def _commit(self, consumer: KafkaConsumer) -> None:
        """Commit what was processed on the assigned partitions, but not past a part still waiting for others."""
        from kafka import TopicPartition
        from kafka.errors import CommitFailedError
        from kafka.structs import OffsetAndMetadata

        assigned = consumer.assignment()
        self._done = {tp: offset for tp, offset in self._done.items() if tp in assigned}
        ends = dict(self._done)
        for topic, partition, offset in self.decoder.atlas_parts.pending():
            tp = TopicPartition(topic, partition)
            if tp in ends:
                ends[tp] = min(ends[tp], offset)
        try:
            consumer.commit({tp: OffsetAndMetadata(offset, "", -1) for tp, offset in ends.items()})
            self.stats.commits += 1
        except CommitFailedError:
            pass  # the group rebalanced: the partition's new owner re-reads these records, which changes nothing


def _lag(consumer: KafkaConsumer) -> int | None:
    """Records not yet read on the assigned partitions, from the high-water marks of the last fetch."""
    total = None
    for tp in consumer.assignment():
        highwater = consumer.highwater(tp)
        position = consumer.position(tp) if highwater is not None else None
        if highwater is not None and position is not None:
            total = (total or 0) + max(0, highwater - position)
    return total


def describe(stats: CollectorStats) -> str:
    """One progress line: counts and lag."""
    return json.dumps(
        {
            "records": stats.records,
            "applied": stats.applied,
            "dead_lettered": stats.dead_lettered,
            "pending_parts": stats.pending_parts,
            "lag": stats.lag,
        }
    )
