"""A subscriber's waiting room: the events of transactions not all of whose events have arrived yet.

A transaction's events are spread over partitions (keyed by element) and may be chunked, so a poll can bring
part of one. Its events wait here until the ``cdc-tx-events`` count is reached; complete transactions leave in
SCN order, and none leaves while an older one is still incomplete. Each partition's events are in SCN order,
so whatever has left a partition precedes everything still held in it: a sink's position can stop at the
first held record, and a restarted subscriber reads the held ones again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lineage_platform.cdc.events import ChangeEvent


@dataclass(frozen=True)
class Arrival:
    """An event as read: its partition and the offset of its (first) record."""

    partition: int
    offset: int
    event: ChangeEvent


@dataclass
class _Transaction:
    expected: int | None  # None: complete as it is (an older relay's message, one event)
    arrivals: list[Arrival] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.expected is None or len(self.arrivals) >= self.expected


class PendingTransactions:
    """Transactions by SCN until all their events are here."""

    def __init__(self) -> None:
        self._waiting: dict[tuple[int, ...], _Transaction] = {}  # (scn,) or, for a lone event, (scn, seq)

    def add(self, arrival: Arrival, expected: int | None) -> None:
        """Hold ``arrival``, one of ``expected`` events of its transaction (None: a transaction of its own)."""
        key = (arrival.event.scn,) if expected is not None else arrival.event.position
        self._waiting.setdefault(key, _Transaction(expected)).arrivals.append(arrival)

    def pop_complete(self) -> list[Arrival]:
        """The events of the complete transactions that no incomplete one precedes, in (SCN, seq) order."""
        ready: list[Arrival] = []
        for key in sorted(self._waiting, key=self._order):
            transaction = self._waiting[key]
            if not transaction.complete:
                break
            ready.extend(sorted(transaction.arrivals, key=lambda a: a.event.position))
            del self._waiting[key]
        return ready

    def _order(self, key: tuple[int, ...]) -> tuple[int, int]:
        first = self._waiting[key].arrivals[0].event
        return first.scn, first.seq

    def held_offset(self, partition: int) -> int | None:
        """The offset of the first record still held in ``partition``, None if nothing is."""
        offsets = [a.offset for t in self._waiting.values() for a in t.arrivals if a.partition == partition]
        return min(offsets, default=None)

    def __len__(self) -> int:
        """How many transactions are waiting."""
        return len(self._waiting)
