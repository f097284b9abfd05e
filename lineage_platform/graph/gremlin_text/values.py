"""Literal values of Gremlin text turned into the Python objects gremlinpython serializes the same way.

``1b`` -> SingleByte, ``1s`` -> short, ``1``/``1i`` -> int, ``1l`` -> long, ``1n`` -> bigint, ``1f``/``1d``/``1.5``
-> float, ``1m`` -> Decimal, ``datetime("...")`` -> timezone-aware datetime, ``UUID("...")`` -> uuid.UUID,
``Lambda.function("...")`` -> the script lambda gremlinpython sends to the server.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from decimal import Decimal

from gremlin_python.statics import SingleByte, bigint, long, short

_INTEGER_TYPES: dict[str, Callable[[int], int]] = {
    "b": SingleByte,
    "s": short,
    "i": int,
    "l": long,
    "n": bigint,
}


def number(text: str, *, negative: bool = False) -> int | float | Decimal:
    """The value of a number token (sign applied first, so ``-128b`` is a valid byte).

    >>> type(number("1l")).__name__, number("2.5d"), number("7", negative=True)
    ('long', 2.5, -7)

    Raises:
        ValueError: the value does not fit its type (e.g. ``200b``).
    """
    sign = "-" if negative else ""
    if text[:2].lower() == "0x":
        body, suffix = (text[:-1], "l") if text[-1] in "lL" else (text, "")
        value: int = int(sign + body, 16)
        return long(value) if suffix else value
    suffix = text[-1].lower() if text[-1].isalpha() else ""
    body = sign + (text[:-1] if suffix else text)
    if suffix == "m":
        return Decimal(body)
    if suffix in ("f", "d") or (not suffix and any(c in body for c in ".eE")):
        return float(body)
    if any(c in body for c in ".eE"):
        raise ValueError(f"{text} has a fraction or exponent but the integer suffix '{suffix}'")
    return _INTEGER_TYPES.get(suffix, int)(int(body))


def datetime_value(text: str) -> dt.datetime:
    """``datetime("2023-08-01T00:00:00Z")``: ISO-8601; a value without offset is taken as UTC.

    Raises:
        ValueError: not an ISO-8601 date or date-time.
    """
    parsed = dt.datetime.fromisoformat(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def uuid_value(text: str) -> uuid.UUID:
    """``UUID("...")``; raises ValueError when the text is not a UUID."""
    return uuid.UUID(text)


def script_lambda(script: str, language: str | None = None) -> Callable[[], str | tuple[str, str]]:
    """A gremlinpython lambda: a function returning the script (and its language when not Groovy)."""
    result: str | tuple[str, str] = script if language is None else (script, language)

    def gremlin_lambda() -> str | tuple[str, str]:
        return result

    return gremlin_lambda
