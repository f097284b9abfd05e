"""The Avro encoding: every op and value type round-trips, fastavro reads what we write, damage is refused."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import uuid

import fastavro
import pytest

from lineage_platform.cdc.avro import EVENT_SCHEMA_V1, SCHEMA_VERSION, decode_event, encode_event
from lineage_platform.cdc.errors import ChangeCaptureError, SchemaVersionError
from lineage_platform.cdc.events import ChangeEvent

VALUES = [
    None,
    True,
    False,
    0,
    -(2**63),
    2**63 - 1,
    2**80,
    1.25,
    "qualified.name",
    "",
    "ünïcödé",
    dt.datetime(2026, 11, 22, 3, 14, tzinfo=dt.UTC),
    dt.date(2026, 1, 2),
    uuid.UUID(int=42),
    decimal.Decimal("12.30"),
    [1, "a", [2.5]],
    {"x", "y"},
    {"k": [1, {"n": None}]},
]
EVENTS = [
    ChangeEvent("g", 1, 0, 1_700_000_000_000, "addV", 7, "table"),
    ChangeEvent("g", 1, 1, 1_700_000_000_000, "addVP", 7, "table", 8, "qualifiedName", "db.t"),
    ChangeEvent("g", 2, 0, 1, "setMeta", 7, "table", "vp-8", "source", "declared"),
    ChangeEvent("g", 2, 1, 1, "dropMeta", 7, None, 8, "source"),
    ChangeEvent("g", 3, 0, 1, "addE", "e-1", "flowsTo", out_id=7, in_id="v-9"),
    ChangeEvent("g", 3, 1, 1, "setEP", "e-1", "flowsTo", key="strength", value="weak"),
    ChangeEvent("g", 4, 0, 1, "dropEP", "e-1", "flowsTo", key="strength"),
    ChangeEvent("g", 4, 1, 1, "dropE", "e-1", "flowsTo"),
    ChangeEvent("g", 4, 2, 1, "dropVP", 7, "table", 8),
    ChangeEvent("g", 2**40, 3, 1, "dropV", 7, "table"),
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: e.op)
def test_every_op_round_trips_and_fastavro_reads_it_with_the_published_schema(event: ChangeEvent) -> None:
    data = encode_event(event)
    assert decode_event(data) == event
    generic = fastavro.schemaless_reader(io.BytesIO(data), fastavro.parse_schema(EVENT_SCHEMA_V1), None)
    assert (generic["schema_version"], generic["op"], generic["scn"]) == (SCHEMA_VERSION, event.op, event.scn)
    assert generic["element_id"] == event.element_id


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_property_values_keep_their_type(value: object) -> None:
    event = ChangeEvent("g", 5, 0, 1, "addVP", 1, "column", 2, "p", value)
    decoded = decode_event(encode_event(event)).value
    assert decoded == value
    assert type(decoded) is type(value)


def test_a_relation_id_object_travels_as_its_text() -> None:
    class RelationId:
        def __str__(self) -> str:
            return "4r-8-2dx-g"

    event = ChangeEvent("g", 1, 0, 1, "addE", RelationId(), "usedBy", out_id=1, in_id=2)
    assert decode_event(encode_event(event)).element_id == "4r-8-2dx-g"


def test_an_unknown_schema_version_is_refused_with_what_to_do() -> None:
    data = b"\x04" + encode_event(EVENTS[0])[1:]  # zig-zag 2
    with pytest.raises(SchemaVersionError, match="schema version 2") as raised:
        decode_event(data)
    assert "upgrade" in raised.value.hint


@pytest.mark.parametrize("cut", [0, 3, 10])
def test_a_truncated_event_is_an_error_not_a_partial_event(cut: int) -> None:
    data = encode_event(EVENTS[1])
    with pytest.raises(ChangeCaptureError):
        decode_event(data[:cut])
