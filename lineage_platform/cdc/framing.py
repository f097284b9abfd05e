"""Change events as Kafka messages: one message per event, or consecutive chunks when an event is larger
than the channel's message limit; and, on the subscriber's side, chunks put back together.

Every message carries the header ``cdc-tx-events``: how many events its transaction holds, so a subscriber
can hold a transaction until all of it has arrived. A chunk also carries ``cdc-chunk`` = ``index/count``.
An event's chunks share its key, so they sit in one partition, one after the other (the producer keeps one
request in flight). Messages without headers (older relays) are whole events of a transaction of their own.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from lineage_platform.cdc.avro import encode_event
from lineage_platform.cdc.errors import ChangeCaptureError
from lineage_platform.cdc.events import ChangeEvent

TX_EVENTS_HEADER = "cdc-tx-events"
CHUNK_HEADER = "cdc-chunk"
DEFAULT_MESSAGE_LIMIT = 900 * 1024
"""Bytes of event data per message: under Kafka's default 1 MiB ``message.max.bytes`` and producer
``max.request.size``, with room for the key, headers and batch overhead."""


@dataclass(frozen=True)
class Message:
    """One Kafka message of change capture."""

    key: bytes
    value: bytes
    headers: list[tuple[str, bytes]]


def transaction_messages(
    events: Sequence[ChangeEvent], limit: int = DEFAULT_MESSAGE_LIMIT
) -> Iterator[Message]:
    """The messages of one transaction's events, in order; events larger than ``limit`` bytes become chunks.

    >>> event = ChangeEvent("g", 7, 0, 1, "addVP", 1, "column", 2, "doc", "x" * 100)
    >>> [(len(m.value), dict(m.headers)) for m in transaction_messages([event], limit=100)]
    [(100, {'cdc-tx-events': b'1', 'cdc-chunk': b'0/2'}), (29, {'cdc-tx-events': b'1', 'cdc-chunk': b'1/2'})]
    """
    size = (TX_EVENTS_HEADER, str(len(events)).encode())
    whole = [size]
    for event in events:
        data = encode_event(event)
        key = event.element_key.encode()
        if len(data) <= limit:
            yield Message(key, data, whole)
            continue
        count = -(-len(data) // limit)
        for index in range(count):
            chunk = data[index * limit : (index + 1) * limit]
            yield Message(key, chunk, [size, (CHUNK_HEADER, f"{index}/{count}".encode())])


@dataclass(frozen=True)
class Whole:
    """A complete event's bytes as read back: where its first record was and its transaction's size."""

    partition: int
    offset: int
    data: bytes
    transaction_events: int | None  # None: a message of an older relay, a transaction of its own


class Reassembler:
    """Puts chunked events back together, per partition; a partial event is kept until its last chunk."""

    def __init__(self) -> None:
        self._partial: dict[int, tuple[int, list[bytes]]] = {}  # partition -> (first offset, chunks so far)

    def add(self, record: Any) -> Whole | None:
        """The whole event ``record`` completes (or is), else None while chunks are still to come."""
        headers = dict(record.headers or ())
        size = headers.get(TX_EVENTS_HEADER)
        transaction_events = int(size) if size is not None else None
        chunk = headers.get(CHUNK_HEADER)
        if chunk is None:
            self._partial.pop(
                record.partition, None
            )  # chunks a crashed relay never finished: sent again whole
            return Whole(record.partition, record.offset, record.value, transaction_events)
        index, count = (int(part) for part in chunk.split(b"/"))
        if index == 0:
            self._partial[record.partition] = (
                record.offset,
                [],
            )  # a first chunk (again, after a relay restart)
        first, chunks = self._partial.get(record.partition, (record.offset, []))
        if len(chunks) != index:
            raise ChangeCaptureError(
                f"{record.topic}[{record.partition}] offset {record.offset}: chunk {index}/{count} follows "
                f"{len(chunks)} chunks of its event",
                hint="check that the topic holds only `lineage cdc relay` output",
            )
        chunks.append(record.value)
        if index + 1 < count:
            self._partial[record.partition] = (first, chunks)
            return None
        del self._partial[record.partition]
        return Whole(record.partition, first, b"".join(chunks), transaction_events)

    def held_offset(self, partition: int) -> int | None:
        """The offset of the first chunk of a partial event in ``partition``, None if there is none."""
        partial = self._partial.get(partition)
        return partial[0] if partial else None
