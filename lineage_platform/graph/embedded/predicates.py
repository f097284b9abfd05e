"""Turn gremlinpython ``P``/``TextP`` objects into Python test functions with Gremlin's semantics."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from gremlin_python.process.traversal import P
from gremlin_python.structure.graph import Element

from lineage_platform.errors import TraversalError, UnsupportedStepError
from lineage_platform.graph.embedded.values import (
    ELEMENT_TYPES,
    Incomparable,
    compare,
    gremlin_eq,
    is_number,
    type_rank,
)

Test = Callable[[Any], bool]


def _ordered(op: Callable[[int], bool], bound: Any) -> Test:
    def test(value: Any) -> bool:
        try:
            return op(compare(value, bound))
        except Incomparable:
            return False

    return test


def _text(op: Callable[[str, str], bool], needle: Any, negate: bool) -> Test:
    if not isinstance(needle, str):
        raise TraversalError(
            f"TextP expects a string argument, got {needle!r}", hint="pass a string to the TextP predicate"
        )

    def test(value: Any) -> bool:
        if not isinstance(value, str):
            return False
        return op(value, needle) != negate

    return test


def _hashable_by_value(value: Any) -> bool:
    """True for values whose Gremlin equality is Python's ``==`` within a hashed set: strings, non-NaN numbers."""
    if isinstance(value, str):
        return True
    return is_number(value) and value == value  # NaN equals nothing, not even itself


def _element_key(value: Any) -> tuple[int, Any] | None:
    """What an element equals by in Gremlin (its kind and id), hashable; None for other values."""
    if isinstance(value, (*ELEMENT_TYPES, Element)) and _hashable_id(value.id):
        return type_rank(value), value.id
    return None


def _hashable_id(ident: Any) -> bool:
    return isinstance(ident, str) or (is_number(ident) and ident == ident)


def _within(values: Any, negate: bool) -> Test:
    candidates = list(values) if isinstance(values, (list, tuple, set, frozenset)) else [values]
    # within() over thousands of names or collected vertices would otherwise compare each value with every candidate
    hashed = frozenset(c for c in candidates if _hashable_by_value(c))
    elements = frozenset(key for c in candidates if (key := _element_key(c)) is not None)
    others = [c for c in candidates if not _hashable_by_value(c) and _element_key(c) is None]

    def test(value: Any) -> bool:
        if _hashable_by_value(value):
            found = value in hashed
        elif (key := _element_key(value)) is not None:
            found = key in elements
        else:
            found = any(gremlin_eq(value, c) for c in others)
        return found != negate

    return test


def _both(p: P, joiner: Callable[[bool, bool], bool]) -> Test:
    left, right = compile_predicate(p.value), compile_predicate(p.other)
    return lambda value: joiner(left(value), right(value))


def _regex(pattern: Any, negate: bool) -> Test:
    if not isinstance(pattern, str):
        raise TraversalError(
            f"regex expects a string pattern, got {pattern!r}", hint="pass a regular expression"
        )
    compiled = re.compile(pattern)
    return lambda value: isinstance(value, str) and (compiled.search(value) is not None) != negate


def compile_predicate(p: Any) -> Test:
    """A function testing a value against ``p`` (a P/TextP, or a plain value meaning ``P.eq(value)``)."""
    if not isinstance(p, P):
        return lambda value: gremlin_eq(value, p)
    op, a, b = p.operator, p.value, p.other
    if op == "eq":
        return lambda value: gremlin_eq(value, a)
    if op == "neq":
        return lambda value: not gremlin_eq(value, a)
    if op == "lt":
        return _ordered(lambda c: c < 0, a)
    if op == "lte":
        return _ordered(lambda c: c <= 0, a)
    if op == "gt":
        return _ordered(lambda c: c > 0, a)
    if op == "gte":
        return _ordered(lambda c: c >= 0, a)
    if op == "inside":
        return _both(P("and", P.gt(a), P.lt(b)), lambda x, y: x and y)
    if op == "outside":
        return _both(P("or", P.lt(a), P.gt(b)), lambda x, y: x or y)
    if op == "between":
        return _both(P("and", P.gte(a), P.lt(b)), lambda x, y: x and y)
    if op == "within":
        return _within(a, negate=False)
    if op == "without":
        return _within(a, negate=True)
    if op == "and":
        return _both(p, lambda x, y: x and y)
    if op == "or":
        return _both(p, lambda x, y: x or y)
    if op == "not":
        inner = compile_predicate(a)
        return lambda value: not inner(value)
    text_ops: dict[str, tuple[Callable[[str, str], bool], bool]] = {
        "startingWith": (str.startswith, False),
        "notStartingWith": (str.startswith, True),
        "endingWith": (str.endswith, False),
        "notEndingWith": (str.endswith, True),
        "containing": (lambda value, needle: needle in value, False),
        "notContaining": (lambda value, needle: needle in value, True),
    }
    if op in text_ops:
        fn, negate = text_ops[op]
        return _text(fn, a, negate)
    if op in ("regex", "notRegex"):
        return _regex(a, negate=op == "notRegex")
    raise UnsupportedStepError(
        f"predicate P.{op} is not supported by the embedded engine", hint="rewrite the filter"
    )


def equality_values(p: Any) -> list[Any] | None:
    """The exact values ``p`` matches (for index lookups): eq(x) -> [x], within(...) -> list, else None."""
    if not isinstance(p, P):
        return [p]
    if p.operator == "eq":
        return [p.value]
    if p.operator == "within":
        return list(p.value) if isinstance(p.value, (list, tuple, set)) else [p.value]
    return None
