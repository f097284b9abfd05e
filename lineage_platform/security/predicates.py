"""Implication between row predicates: does every row matching one set of conditions match another?

Used to decide whether a grant's row restriction covers the rows a query reads. Only what can be proved
from ``column op constant`` tests is accepted; anything else counts as "not implied" (fail closed).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lineage_platform.model import Predicate

_RANGE_OPS = {"<", "<=", ">", ">="}


def implies_all(known: Iterable[Predicate], required: Iterable[Predicate]) -> bool:
    """True when the AND of ``known`` implies every predicate of ``required`` (same column names).

    >>> eu = Predicate("db.t", "region", "=", "EU")
    >>> implies_all([eu], [Predicate("", "region", "IN", ("EU", "US"))])
    True
    >>> implies_all([], [eu])
    False
    """
    known = list(known)
    return all(any(implies(k, r) for k in known if k.column == r.column) for r in required)


def implies(known: Predicate, required: Predicate) -> bool:
    """Whether rows satisfying ``known`` satisfy ``required`` (both on the same column)."""
    if (known.op, _hashable(known.value)) == (required.op, _hashable(required.value)):
        return True
    values = _values(known)
    if values is not None:
        return all(_satisfies(v, required) for v in values)
    if known.op in _RANGE_OPS and required.op in _RANGE_OPS:
        return _range_within(known, required)
    # NULL fails every comparison, so any test but IS NULL implies IS NOT NULL
    return required.op == "IS NOT NULL" and known.op != "IS NULL"


def _values(predicate: Predicate) -> tuple[Any, ...] | None:
    """The finite set of values a predicate allows, when it is one (``=`` / ``IN``)."""
    if predicate.op == "=":
        return (predicate.value,)
    if predicate.op == "IN":
        return tuple(predicate.value)
    return None


def _satisfies(value: Any, predicate: Predicate) -> bool:
    """Whether a constant satisfies ``predicate``; incomparable types count as no."""
    op, target = predicate.op, predicate.value
    try:
        if op == "=":
            return value == target
        if op == "!=":
            return value != target
        if op == "IN":
            return value in target
        if op == "NOT IN":
            return value not in target
        if op == "IS NOT NULL":
            return value is not None
        if op in _RANGE_OPS and (type(value) is type(target) or _both_numbers(value, target)):
            return {"<": value < target, "<=": value <= target, ">": value > target, ">=": value >= target}[
                op
            ]
    except TypeError:
        return False
    return False


def _range_within(known: Predicate, required: Predicate) -> bool:
    """``x > 5`` implies ``x >= 3``: same direction and a bound at least as tight."""
    if not (type(known.value) is type(required.value) or _both_numbers(known.value, required.value)):
        return False
    lower = {">", ">="}
    if (known.op in lower) != (required.op in lower):
        return False
    k, r = known.value, required.value
    if known.op in lower:
        return k > r or (k == r and (known.op == ">" or required.op == ">="))
    return k < r or (k == r and (known.op == "<" or required.op == "<="))


def _both_numbers(a: Any, b: Any) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value
