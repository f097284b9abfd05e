"""Gremlin value semantics: equality, comparability and the total order used by order()."""

from __future__ import annotations

import datetime
import decimal
import math
import uuid
from typing import Any

from gremlin_python.process.traversal import Direction, T
from gremlin_python.structure.graph import Edge, Element, Path, Vertex, VertexProperty

from lineage_platform.graph.embedded.memgraph import EdgeRec, PropRec, VertexPropRec, VertexRec

NUMBER_TYPES = (int, float, decimal.Decimal)
ELEMENT_TYPES = (VertexRec, EdgeRec, VertexPropRec)


class MapEntry(tuple):
    """A Map.Entry produced by unfolding a map: ``(key, value)``; results show it as a one-entry dict."""

    __slots__ = ()

    @property
    def key(self) -> Any:
        """The entry's key."""
        return self[0]

    @property
    def value(self) -> Any:
        """The entry's value."""
        return self[1]


class Incomparable(Exception):
    """Two values have no order between them (Gremlin's ERROR outcome of a comparison)."""


def is_number(value: Any) -> bool:
    """True for ints, floats and decimals, but not for bools."""
    return isinstance(value, NUMBER_TYPES) and not isinstance(value, bool)


def element_id(value: Any) -> Any:
    """The id of a stored or detached element, or the value itself."""
    if isinstance(value, (ELEMENT_TYPES, Element)):
        return value.id
    return value


def gremlin_eq(a: Any, b: Any) -> bool:
    """Gremlin's equality: numbers compare by value across types, bools never equal numbers, elements by id."""
    if a is b:
        return not (isinstance(a, float) and math.isnan(a))
    if is_number(a):
        return is_number(b) and a == b
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, ELEMENT_TYPES) or isinstance(b, ELEMENT_TYPES):
        if isinstance(a, Element) or isinstance(b, Element):
            return type_rank(a) == type_rank(b) and a.id == b.id
        return False
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(gremlin_eq(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return len(a) == len(b) and all(k in b and gremlin_eq(v, b[k]) for k, v in a.items())
    if type(a) is not type(b) and not (isinstance(a, str) and isinstance(b, str)):
        if isinstance(a, (set, frozenset)) and isinstance(b, (set, frozenset)):
            return a == b
        return False
    return a == b


def compare(a: Any, b: Any) -> int:
    """-1/0/1 for comparable values; raises Incomparable otherwise (as Gremlin's lt/gt do)."""
    if a is None and b is None:
        return 0
    if is_number(a) and is_number(b):
        if (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
            raise Incomparable()
        return (a > b) - (a < b)
    for kind in (str, bool, datetime.datetime, datetime.date, uuid.UUID):
        if isinstance(a, kind) and isinstance(b, kind):
            return (a > b) - (a < b)
    raise Incomparable()


_RANKS: tuple[tuple[type | tuple[type, ...], int], ...] = (
    (bool, 1),
    (NUMBER_TYPES, 2),
    ((datetime.datetime, datetime.date), 3),
    (str, 4),
    (uuid.UUID, 5),
    (VertexRec, 6),
    (EdgeRec, 7),
    (VertexPropRec, 8),
    (PropRec, 9),
    (Path, 10),
    ((set, frozenset), 11),
    ((list, tuple), 12),
    (dict, 13),
)


def type_rank(value: Any) -> int:
    """Position of the value's type in Gremlin's orderability (null first, unknown types last)."""
    if value is None:
        return 0
    if isinstance(value, Vertex):
        return 6
    if isinstance(value, Edge):
        return 7
    if isinstance(value, VertexProperty):
        return 8
    if isinstance(value, MapEntry):
        return 13
    if isinstance(value, (T, Direction)):
        return 4
    for kinds, rank in _RANKS:
        if isinstance(value, kinds):
            return rank
    return 14


def order_key(value: Any) -> tuple:
    """A sort key giving Gremlin's total order across types (numbers by value, NaN above all numbers)."""
    rank = type_rank(value)
    if rank == 2:
        if isinstance(value, float) and math.isnan(value):
            return (rank, 1, 0)
        return (rank, 0, value)
    if isinstance(value, (T, Direction)):
        return (4, value.name.rstrip("_"))
    if rank in (1, 3, 4, 5):
        return (rank, value)
    if rank in (6, 7, 8):
        return (rank, order_key(value.id))
    if rank == 9:
        return (rank, value.key, order_key(value.value))
    if rank == 10:
        return (rank, tuple(order_key(o) for o in value.objects))
    if rank == 11:
        return (rank, tuple(sorted(order_key(o) for o in value)))
    if rank == 12:
        return (rank, tuple(order_key(o) for o in value))
    if rank == 13:
        items = value.items() if isinstance(value, dict) else [value]
        return (rank, tuple(sorted((order_key(k), order_key(v)) for k, v in items)))
    if rank == 0:
        return (0,)
    return (rank, str(value))


def hashable_key(key: Any) -> Any:
    """A usable dict key / set item for ``key``: lists become tuples, maps tuples of items, sets frozensets."""
    if isinstance(key, list):
        return tuple(hashable_key(item) for item in key)
    if isinstance(key, dict):
        return tuple((hashable_key(k), hashable_key(v)) for k, v in key.items())
    if isinstance(key, set):
        return frozenset(key)
    return key


def hash_key(value: Any) -> Any:
    """A hashable key under which equal Gremlin values (same type) collide, for dedup/group/bulking."""
    if type(value) is VertexRec:
        return value
    if isinstance(value, (list, tuple)) and not isinstance(value, MapEntry):
        return ("l", tuple(hash_key(v) for v in value))
    if isinstance(value, MapEntry):
        return ("e", hash_key(value[0]), hash_key(value[1]))
    if isinstance(value, dict):
        return ("m", frozenset((hash_key(k), hash_key(v)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):
        return ("s", frozenset(hash_key(v) for v in value))
    if isinstance(value, Path):
        return ("p", tuple(hash_key(v) for v in value.objects))
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
    if isinstance(value, ELEMENT_TYPES):
        return value
    return (type(value), value)
