"""The relay: publishes a change source's events to Kafka, keyed by element, and checkpoints the SCN.

Delivery is at-least-once. Events go out in SCN order; each element's events share a key and so a partition,
and the producer keeps one request in flight, so every element's changes arrive in order. The checkpoint is
saved only after the broker acknowledged everything up to it; after a crash the relay sends the events after
the checkpoint again and subscribers drop the copies by (SCN, seq). Events larger than ``message_limit`` go as
chunks and every message says how many events its transaction has (``framing.py``), so subscribers apply a
transaction only once all of it has arrived.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

from lineage_platform.cdc.channel import ensure_topic, kafka_error, open_producer
from lineage_platform.cdc.checkpoint import RelayCheckpoint
from lineage_platform.cdc.events import ChangeEvent
from lineage_platform.cdc.framing import DEFAULT_MESSAGE_LIMIT, transaction_messages

DEFAULT_BATCH_TRANSACTIONS = 5000


class ChangeSource(Protocol):
    """Where committed changes come from (:class:`LogCapture` or :class:`OutboxCapture`)."""

    name: str
    scn: int

    def poll(self, max_transactions: int) -> Any:
        """Iterate ``(scn, events)`` of transactions committed since the last poll."""

    def acknowledge(self, scn: int) -> None:
        """Everything up to ``scn`` is durably published and checkpointed."""


@dataclass
class RelaySummary:
    """What a relay published."""

    transactions: int = 0
    events: int = 0
    unlabelled: int = 0
    last_scn: int = 0
    seconds: float = 0.0


class Relay:
    """Publishes ``source`` to ``topic`` on ``brokers`` and records progress in ``checkpoint``."""

    def __init__(
        self,
        source: ChangeSource,
        brokers: str,
        topic: str,
        checkpoint: RelayCheckpoint,
        *,
        batch_transactions: int = DEFAULT_BATCH_TRANSACTIONS,
        message_limit: int = DEFAULT_MESSAGE_LIMIT,
    ) -> None:
        """``message_limit``: bytes of event data per Kafka message; larger events are sent as chunks."""
        self.source = source
        self.brokers = brokers
        self.topic = topic
        self.checkpoint = checkpoint
        self.batch_transactions = batch_transactions
        self.message_limit = message_limit
        ensure_topic(brokers, topic)
        self._producer = open_producer(brokers)

    def publish_batch(self) -> RelaySummary:
        """Publish what the source has now (up to one batch), wait for the broker, save the checkpoint."""
        from kafka.errors import KafkaError

        started = time.perf_counter()
        summary = RelaySummary(last_scn=self.source.scn)
        send = self._producer.send
        try:
            for scn, events in self.source.poll(self.batch_transactions):
                for message in transaction_messages(events, self.message_limit):
                    send(self.topic, key=message.key, value=message.value, headers=message.headers)
                summary.transactions += 1
                summary.events += len(events)
                summary.unlabelled += _count_unlabelled(events)
                summary.last_scn = scn
            if summary.transactions:
                self._producer.flush()
        except KafkaError as exc:
            raise kafka_error(f"publish to {self.topic}", self.brokers, exc) from exc
        if summary.transactions:
            self.checkpoint.save(summary.last_scn)
            self.source.acknowledge(summary.last_scn)
        summary.seconds = time.perf_counter() - started
        return summary

    def catch_up(self) -> RelaySummary:
        """Publish batches until the source has nothing more."""
        total = RelaySummary(last_scn=self.source.scn)
        while (batch := self.publish_batch()).transactions:
            _accumulate(total, batch)
        return total

    def run(self, stop: threading.Event, *, interval: float = 0.05) -> RelaySummary:
        """Publish until ``stop`` is set, polling the source every ``interval`` seconds when idle."""
        total = RelaySummary(last_scn=self.source.scn)
        while not stop.is_set():
            batch = self.publish_batch()
            _accumulate(total, batch)
            if not batch.transactions:
                stop.wait(interval)
        return total

    def close(self) -> None:
        """Flush and close the producer."""
        self._producer.close()


def _count_unlabelled(events: list[ChangeEvent]) -> int:
    return sum(1 for event in events if event.label is None)


def _accumulate(total: RelaySummary, batch: RelaySummary) -> None:
    total.transactions += batch.transactions
    total.events += batch.events
    total.unlabelled += batch.unlabelled
    total.last_scn = batch.last_scn
    total.seconds += batch.seconds
