"""Property values in change events: Avro scalars as they are, every other stored type as tagged JSON.

The embedded store keeps str, int, float, bool, datetime, UUID, Decimal and lists, sets or dicts of them.
Avro carries null, boolean, long (64-bit), double and string natively; the rest travel as a ``TaggedValue``
record (``kind`` + ``json``), so subscribers in any language can read them and Python ones get the same
value back. The JSON is standard JSON: inside it, integers beyond 64 bits, NaN and ±infinity are tagged too
(``{"$t": "float", "v": "nan"}``), and -0.0 keeps its sign.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import uuid
from typing import Any

from lineage_platform.cdc.errors import ChangeCaptureError

_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1

TAGGED_VALUE_SCHEMA = {
    "type": "record",
    "name": "TaggedValue",
    "doc": "A value Avro has no type for: kind (datetime, date, uuid, decimal, int, float, list, set, dict) + JSON text.",
    "fields": [{"name": "kind", "type": "string"}, {"name": "json", "type": "string"}],
}


def _to_json(value: Any) -> Any:
    """A JSON-able form of ``value`` that keeps its type ({"$t": kind, "v": ...} for non-JSON types)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$t": "float", "v": repr(value)}
    if isinstance(value, int):
        return value if _LONG_MIN <= value <= _LONG_MAX else {"$t": "int", "v": str(value)}
    if isinstance(value, dt.datetime):
        return {"$t": "datetime", "v": value.isoformat()}
    if isinstance(value, dt.date):
        return {"$t": "date", "v": value.isoformat()}
    if isinstance(value, uuid.UUID):
        return {"$t": "uuid", "v": str(value)}
    if isinstance(value, decimal.Decimal):
        return {"$t": "decimal", "v": str(value)}
    if isinstance(value, (list, tuple)):
        return [_to_json(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return {"$t": "set", "v": sorted((_to_json(item) for item in value), key=repr)}
    if isinstance(value, dict):
        return {"$t": "dict", "v": [[_to_json(k), _to_json(v)] for k, v in value.items()]}
    raise ChangeCaptureError(
        f"cannot put a {type(value).__name__} value into a change event",
        hint="store only str, int, float, bool, datetime, UUID, Decimal and lists, sets or dicts of them",
    )


_FROM_TAG = {
    "int": int,
    "float": float,
    "datetime": dt.datetime.fromisoformat,
    "date": dt.date.fromisoformat,
    "uuid": uuid.UUID,
    "decimal": decimal.Decimal,
}


def _from_json(data: Any) -> Any:
    if isinstance(data, list):
        return [_from_json(item) for item in data]
    if not isinstance(data, dict):
        return data
    kind, payload = data["$t"], data["v"]
    if kind == "set":
        return {_from_json(item) for item in payload}
    if kind == "dict":
        return {_from_json(k): _from_json(v) for k, v in payload}
    return _FROM_TAG[kind](payload)


def to_avro(value: Any) -> Any:
    """The datum for the event's ``value`` union (null | boolean | long | double | string | TaggedValue)."""
    if value is None or isinstance(value, (bool, str, float)):
        return value
    if isinstance(value, int) and _LONG_MIN <= value <= _LONG_MAX:
        return value
    tagged = _to_json(value)
    kind = tagged["$t"] if isinstance(tagged, dict) else "list"
    return {"kind": kind, "json": json.dumps(tagged, separators=(",", ":"), allow_nan=False)}


def from_avro(datum: Any) -> Any:
    """The Python value of a decoded ``value`` union datum (inverse of :func:`to_avro`)."""
    if isinstance(datum, dict):
        return _from_json(json.loads(datum["json"]))
    return datum
