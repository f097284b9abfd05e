"""Seeded, bounded mutation of inputs for the fuzz tests: random bytes, byte-level damage, and JSON documents
with values swapped for adversarial ones (wrong types, huge or non-finite numbers, deep nesting, odd text)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

CASES = 2000  # per test: a few seconds each on a busy machine
ADVERSARIAL: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    2**70,
    -(2**63) - 1,
    1e308,
    float("nan"),
    float("inf"),
    "",
    "x",
    "not-a-time",
    "10000-01-01T00:00:00Z",
    "\u2028\x0b\x1c\r",
    "\ud800",
    "'; DROP TABLE t; --",
    [],
    {},
    ["a"],
    {"@type": "g:Map", "@value": ["a"]},
    {"@type": "g:Int64", "@value": 2**70},
    {"@type": "g:Nope", "@value": 1},
)
_DEEP = ("[" * 5000 + "]" * 5000, '{"a":' * 5000 + "1" + "}" * 5000)


def _paths(doc: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _paths(value, (*path, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            yield from _paths(value, (*path, index))


def _replace(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    copy = dict(doc) if isinstance(doc, dict) else list(doc)
    copy[path[0]] = _replace(doc[path[0]], path[1:], value)
    return copy


def mutate_json(doc: Any, rng: random.Random) -> str:
    """``doc`` as JSON with one to three values (or keys' values) swapped for adversarial ones."""
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(list(_paths(doc)))
        doc = _replace(doc, path, rng.choice(ADVERSARIAL))
    text = json.dumps(doc, ensure_ascii=rng.random() < 0.5)
    if rng.random() < 0.1:  # a value nested thousands deep, spliced in as raw text
        marker = json.dumps(rng.choice(ADVERSARIAL[:2]))
        text = text.replace(marker, rng.choice(_DEEP), 1)
    return text


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """``data`` damaged: bits flipped, bytes cut, inserted or repeated, or replaced by random bytes."""
    buffer = bytearray(data)
    kind = rng.randrange(5)
    if kind == 0 or not buffer:
        return rng.randbytes(rng.randint(0, 2 * len(buffer) + 16))
    for _ in range(rng.randint(1, 8)):
        at = rng.randrange(len(buffer) or 1)
        if kind == 1 and buffer:
            buffer[at % len(buffer)] ^= 1 << rng.randrange(8)
        elif kind == 2:
            del buffer[at : at + rng.randint(1, 16)]
        elif kind == 3:
            buffer[at:at] = rng.randbytes(rng.randint(1, 8))
        else:
            buffer[at:at] = buffer[at : at + rng.randint(1, 64)] * rng.randint(1, 4)
    return bytes(buffer)


def _as_bytes(original: Any) -> bytes:
    if isinstance(original, bytes):
        return original
    return (original if isinstance(original, str) else json.dumps(original)).encode("utf-8", "surrogatepass")


def cases(seeds: list[Any], seed: int, count: int = CASES) -> Iterator[bytes]:
    """``count`` seeded mutations of the seed inputs: JSON documents (dicts, lists) and raw text or bytes."""
    rng = random.Random(seed)
    for _ in range(count):
        original = rng.choice(seeds)
        if isinstance(original, dict | list) and rng.random() < 0.6:
            yield mutate_json(original, rng).encode("utf-8", "surrogatepass")
        else:
            yield mutate_bytes(_as_bytes(original), rng)
