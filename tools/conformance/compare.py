"""Result comparison with TinkerPop's rules.

Every value is reduced to a hashable canonical form first: elements by kind and id, paths by their objects
(labels ignored), numbers by value whatever their width (doubles to 14 significant digits, well inside the
suite's 1e-15 tolerance for values near 1), maps and sets order-free, lists in order. The assertion forms
then work on canonical values: unordered (same multiset), ordered (same sequence), of (each result among
the expected), empty and count.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal
from enum import Enum
from typing import Any

from gremlin_python.structure.graph import Edge, Path, Property, Vertex, VertexProperty


def _number(value: float | int | Decimal) -> tuple[str, Any]:
    if isinstance(value, float):
        if math.isnan(value):
            return ("number", "NaN")
        if math.isinf(value) or value.is_integer():
            return ("number", value if math.isinf(value) else int(value))
        return ("number", float(f"{value:.14g}"))
    if isinstance(value, Decimal):
        return ("number", int(value) if value == value.to_integral_value() else float(f"{value:.14g}"))
    return ("number", int(value))


def canonical(value: Any) -> Any:
    """A hashable form of a result value under which TinkerPop's equal values are equal."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int | float | Decimal):
        return _number(value)
    if isinstance(value, VertexProperty):
        return ("vertex property", canonical(value.id))
    if isinstance(value, Vertex):
        return ("vertex", canonical(value.id))
    if isinstance(value, Edge):
        return ("edge", canonical(value.id))
    if isinstance(value, Property):
        return ("property", value.key, canonical(value.value))
    if isinstance(value, Path):
        return ("list", tuple(canonical(item) for item in value.objects))
    if isinstance(value, dict):
        return ("map", frozenset(Counter((canonical(k), canonical(v)) for k, v in value.items()).items()))
    if isinstance(value, set | frozenset):
        return ("set", frozenset(canonical(item) for item in value))
    if isinstance(value, list | tuple):
        return ("list", tuple(canonical(item) for item in value))
    if isinstance(value, Enum):
        return ("enum", type(value).__name__, value.name.rstrip("_"))  # T.id_ is T.id
    if isinstance(value, datetime):
        return ("datetime", value.timestamp())
    return (type(value).__name__, repr(value))


def next_result_items(value: Any) -> list[Any]:
    """What ``iterated next`` compares: the items of a collection or path, a map's entries as one-entry maps."""
    if isinstance(value, dict):
        return [{key: item} for key, item in value.items()]
    if isinstance(value, list | set | tuple):
        return list(value)
    if isinstance(value, Path):
        return list(value.objects)
    return [value]


def _describe(values: Iterable[Any]) -> str:
    return "[" + ", ".join(repr(v) for v in values) + "]"


def check_results(form: str, actual: list[Any], expected: list[Any]) -> str | None:
    """None when `actual` satisfies the assertion `form` against `expected`, else why not."""
    got = [canonical(v) for v in actual]
    want = [canonical(v) for v in expected]
    if form == "ordered":
        ok = got == want
    elif form == "unordered":
        ok = Counter(got) == Counter(want)
    elif form == "of":
        allowed = set(want)
        ok = all(item in allowed for item in got)
    elif form == "empty":
        ok = not got
    else:
        raise ValueError(f"unknown assertion form {form!r}")
    if ok:
        return None
    return f"result should be {form}\n  expected: {_describe(expected)}\n  actual:   {_describe(actual)}"
