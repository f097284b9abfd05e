"""Chunked events and whole transactions, without a broker: records as a consumer returns them."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from lineage_platform.cdc.avro import decode_event
from lineage_platform.cdc.errors import ChangeCaptureError
from lineage_platform.cdc.events import ChangeEvent
from lineage_platform.cdc.framing import Reassembler, transaction_messages
from lineage_platform.cdc.transactions import Arrival, PendingTransactions


@dataclass
class _Record:
    topic: str
    partition: int
    offset: int
    value: bytes
    headers: list


def _records(events: list[ChangeEvent], limit: int, first_offset: int = 0) -> list[_Record]:
    return [
        _Record("t", 0, first_offset + n, m.value, m.headers)
        for n, m in enumerate(transaction_messages(events, limit))
    ]


def test_an_event_larger_than_the_limit_is_chunked_and_put_back_together() -> None:
    big = ChangeEvent("g", 3, 1, 1, "addVP", 7, "column", 8, "doc", "é" * 5000)
    records = _records([ChangeEvent("g", 3, 0, 1, "addV", 7, "column"), big], limit=1000)
    assert all(len(r.value) <= 1000 for r in records) and len(records) == 1 + 11
    reassembler = Reassembler()
    wholes = [w for w in map(reassembler.add, records) if w is not None]
    assert [decode_event(w.data) for w in wholes] == [ChangeEvent("g", 3, 0, 1, "addV", 7, "column"), big]
    assert [(w.offset, w.transaction_events) for w in wholes] == [(0, 2), (1, 2)]


def test_a_partial_event_holds_its_first_offset_and_a_resent_first_chunk_starts_over() -> None:
    big = ChangeEvent("g", 4, 0, 1, "setEP", "e-1", "flowsTo", key="k", value="x" * 3000)
    first_try = _records([big], limit=1000)[:2]  # a relay that died after two chunks
    again = _records([big], limit=1000, first_offset=2)
    reassembler = Reassembler()
    assert [reassembler.add(r) for r in first_try] == [None, None]
    assert reassembler.held_offset(0) == 0
    wholes = [w for w in map(reassembler.add, again) if w is not None]
    assert [(w.offset, decode_event(w.data)) for w in wholes] == [(2, big)]
    assert reassembler.held_offset(0) is None


def test_a_chunk_out_of_order_stops_with_its_place() -> None:
    records = _records([ChangeEvent("g", 4, 0, 1, "addVP", 1, "t", 2, "p", "y" * 3000)], limit=1000)
    with pytest.raises(ChangeCaptureError, match=r"t\[0\] offset 1: chunk 1/4 follows 0 chunks"):
        Reassembler().add(records[1])


def _arrival(partition: int, offset: int, scn: int, seq: int) -> Arrival:
    return Arrival(partition, offset, ChangeEvent("g", scn, seq, 1, "addV", scn * 10 + seq, "table"))


def test_transactions_leave_whole_in_scn_order_and_never_overtake_an_incomplete_one() -> None:
    pending = PendingTransactions()
    pending.add(_arrival(0, 10, 5, 0), 2)  # scn 5: one of two events
    pending.add(_arrival(1, 3, 6, 0), 1)  # scn 6: complete, but after 5
    assert pending.pop_complete() == []
    assert (pending.held_offset(0), pending.held_offset(1)) == (10, 3)
    pending.add(_arrival(1, 2, 5, 1), 2)
    assert [a.event.position for a in pending.pop_complete()] == [(5, 0), (5, 1), (6, 0)]
    assert len(pending) == 0 and pending.held_offset(0) is None
