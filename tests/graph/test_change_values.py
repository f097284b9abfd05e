"""The value encoding the outbox stores and change capture decodes (graph/change_values.py)."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import uuid

import pytest

from lineage_platform.cdc.errors import ChangeCaptureError
from lineage_platform.cdc.values import to_avro
from lineage_platform.errors import GraphError
from lineage_platform.graph.change_values import UnstorableValueError, decode_value, encode_value

VALUES = [
    None,
    True,
    "s",
    1.5,
    -(2**63),
    2**63,
    dt.datetime(2026, 11, 24, 21, 30, tzinfo=dt.UTC),
    dt.date(2026, 11, 24),
    uuid.UUID(int=7),
    decimal.Decimal("1.10"),
    [1, {"a", "b"}, {"k": [2**70]}],
    -0.0,
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_a_value_survives_the_json_the_outbox_stores(value: object) -> None:
    stored = json.dumps(encode_value(value), allow_nan=False)
    back = decode_value(json.loads(stored))
    assert back == value and type(back) is type(value)
    if isinstance(value, float):
        assert math.copysign(1, back) == math.copysign(1, value)


def test_nan_is_tagged_so_the_stored_json_stays_standard() -> None:
    assert math.isnan(decode_value(json.loads(json.dumps(encode_value([math.nan]), allow_nan=False)))[0])


def test_a_type_no_change_can_carry_is_a_graph_error_and_a_change_capture_error_in_cdc() -> None:
    with pytest.raises(UnstorableValueError, match="cannot put a object value") as raised:
        encode_value(object())
    assert isinstance(raised.value, GraphError) and raised.value.hint
    with pytest.raises(ChangeCaptureError, match="cannot put a object value") as in_cdc:
        to_avro(object())
    assert in_cdc.value.hint == raised.value.hint
