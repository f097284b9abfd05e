"""Property values in change events: the Avro ``value`` union (null | boolean | long | double | string |
TaggedValue) holds them in the encoding change ops use (lineage_platform/graph/change_values.py).
"""

from __future__ import annotations

from typing import Any

from lineage_platform.cdc.errors import ChangeCaptureError
from lineage_platform.graph.change_values import UnstorableValueError, encode_value

TAGGED_VALUE_SCHEMA = {
    "type": "record",
    "name": "TaggedValue",
    "doc": "A value Avro has no type for: kind (datetime, date, uuid, decimal, int, float, list, set, dict) + JSON text.",
    "fields": [{"name": "kind", "type": "string"}, {"name": "json", "type": "string"}],
}


def to_avro(value: Any) -> Any:
    """The datum for the event's ``value`` union; a type no event can carry is a ChangeCaptureError."""
    try:
        return encode_value(value)
    except UnstorableValueError as exc:
        raise ChangeCaptureError(exc.message, hint=exc.hint) from exc
