"""Property values as change ops carry them: scalars as they are, every other stored type as tagged JSON.

The embedded store keeps str, int, float, bool, datetime, UUID, Decimal and lists, sets or dicts of them. null,
bool, str, float and 64-bit ints travel as they are; the rest as ``{"kind": ..., "json": ...}`` (the Avro
``TaggedValue`` record of change events, lineage_platform/cdc/avro.py), so subscribers in any language can read
them and Python ones get the same value back. The JSON is standard JSON: inside it, integers beyond 64 bits, NaN
and ±infinity are tagged too (``{"$t": "float", "v": "nan"}``), and -0.0 keeps its sign.

The graph's outbox stores ops in this encoding (graph/outbox.py) and change capture decodes it (cdc/), so it
lives here, below both.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import uuid
from typing import Any

from lineage_platform.errors import GraphError


class UnstorableValueError(GraphError):
    """A property value of a type no change op can carry."""


_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


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
    raise UnstorableValueError(
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


def encode_value(value: Any) -> Any:
    """``value`` as change ops carry it: null, bool, str, float and 64-bit ints as they are, anything else as
    ``{"kind": ..., "json": ...}``; a type no change can carry raises :class:`UnstorableValueError`.

    >>> encode_value(7), encode_value({1, 2})
    (7, {'kind': 'set', 'json': '{"$t":"set","v":[1,2]}'})
    """
    if value is None or isinstance(value, (bool, str, float)):
        return value
    if isinstance(value, int) and _LONG_MIN <= value <= _LONG_MAX:
        return value
    tagged = _to_json(value)
    kind = tagged["$t"] if isinstance(tagged, dict) else "list"
    return {"kind": kind, "json": json.dumps(tagged, separators=(",", ":"), allow_nan=False)}


def decode_value(datum: Any) -> Any:
    """The Python value of an encoded datum (inverse of :func:`encode_value`).

    >>> decode_value(encode_value(2**70)) == 2**70
    True
    """
    if isinstance(datum, dict):
        return _from_json(json.loads(datum["json"]))
    return datum
