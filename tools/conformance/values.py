"""TinkerPop's typed-value notation (``v[marko]``, ``d[1].i``, ``l[a,b]``, ``m[{...}]``, ``p[...]``, ...).

`parse_value` turns one notation string into the Python object gremlinpython would hand back, looking
graph elements up through an `ElementLookup`. Patterns are tried in the order of TinkerPop's Java step
definitions; a string that matches none is a plain string.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from typing import Any, Protocol

from gremlin_python.process.traversal import Direction, Merge, P, T
from gremlin_python.statics import SingleByte, bigint, long, short
from gremlin_python.structure.graph import Edge, Path, Vertex, VertexProperty

from lineage_platform.errors import GraphError


class ElementLookup(Protocol):
    """Finds the graph elements a notation names (vertices by their ``name`` property)."""

    def vertex(self, name: str) -> Vertex:
        """The vertex whose ``name`` is `name`."""

    def edge(self, out_name: str, label: str, in_name: str) -> Edge:
        """The edge `label` from the vertex named `out_name` to the vertex named `in_name`."""

    def vertex_property(self, name: str, key: str, value: Any) -> VertexProperty:
        """The property `key` = `value` of the vertex named `name`."""


_NUMBER_TYPES: dict[str, Callable[[str], Any]] = {
    "b": lambda text: SingleByte(int(text)),
    "s": lambda text: short(int(text)),
    "i": int,
    "l": lambda text: long(int(text)),
    "f": float,
    "d": float,
    "m": Decimal,
    "n": lambda text: bigint(int(text)),
}
_SPECIAL_DOUBLES = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}
_T = {"id": T.id, "label": T.label, "key": T.key, "value": T.value}
_DIRECTION = {
    "OUT": Direction.OUT,
    "IN": Direction.IN,
    "BOTH": Direction.BOTH,
    "from": Direction.OUT,
    "to": Direction.IN,
}
_MERGE = {"outV": Merge.out_v, "inV": Merge.in_v, "onCreate": Merge.on_create, "onMatch": Merge.on_match}

_EDGE = re.compile(r"^(.+)-(\w+)->(.+)$")


def split_top_level(text: str) -> list[str]:
    """Split a list body on the commas that are not inside brackets.

    >>> split_top_level("a,l[b,c],d")
    ['a', 'l[b,c]', 'd']
    """
    if not text:
        return []
    parts, depth, current = [], 0, []
    for char in text:
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


class _Groovy:
    """A Groovy closure from ``c[...]``: gremlinpython sends a callable returning (script, language)."""

    def __init__(self, script: str) -> None:
        self.script = script

    def __call__(self) -> tuple[str, str]:
        return self.script, "gremlin-groovy"


def _element(kind: str, body: str, suffix: str, lookup: ElementLookup) -> Any:
    if kind == "v":
        element: Any = lookup.vertex(body)
    else:
        match = _EDGE.match(body)
        if not match:
            raise GraphError(f"cannot read edge notation e[{body}]", hint="write e[outName-label->inName]")
        element = lookup.edge(*match.groups())
    if suffix == ".id":
        return element.id
    if suffix == ".sid":
        return str(element.id)
    return element


def _vertex_property(body: str, lookup: ElementLookup) -> VertexProperty:
    name, _, rest = body.partition("-")
    key, _, value = rest.partition("->")
    return lookup.vertex_property(name, key, parse_value(value, lookup))


def _map_part(value: Any, lookup: ElementLookup) -> Any:
    if isinstance(value, str):
        return parse_value(value, lookup)
    if isinstance(value, list):
        return [_map_part(item, lookup) for item in value]
    if isinstance(value, dict):
        return {_hashable(_map_part(k, lookup)): _map_part(v, lookup) for k, v in value.items()}
    return value


def _hashable(key: Any) -> Any:
    """Map keys that are lists or sets become tuples or frozensets (Python cannot key a dict by a list)."""
    if isinstance(key, list):
        return tuple(_hashable(item) for item in key)
    if isinstance(key, set):
        return frozenset(_hashable(item) for item in key)
    return key


def parse_value(text: str, lookup: ElementLookup) -> Any:
    """Turn one typed-value notation string into its Python value.

    >>> parse_value("l[d[1].i,s[a],null]", lookup=None)
    [1, {'a'}, None]
    """
    if text == "null":
        return None
    if text in ("true", "false"):
        return text == "true"
    match = re.fullmatch(r"d\[(.*)\]\.([bsilfdmn])", text)
    if match:
        return _NUMBER_TYPES[match.group(2)](match.group(1))
    match = re.fullmatch(r"d\[(NaN|Infinity|-Infinity)\]", text)
    if match:
        return _SPECIAL_DOUBLES[match.group(1)]
    match = re.fullmatch(r"(v|e)\[(.+)\](\.id|\.sid)?", text)
    if match:
        return _element(match.group(1), match.group(2), match.group(3) or "", lookup)
    match = re.fullmatch(r"vp\[(.+)\]", text)
    if match:
        return _vertex_property(match.group(1), lookup)
    match = re.fullmatch(r"dt\[(.+)\]", text)
    if match:
        return datetime.fromisoformat(match.group(1).replace("Z", "+00:00"))
    match = re.fullmatch(r"uuid\[(.+)\]", text)
    if match:
        return uuid.UUID(match.group(1))
    match = re.fullmatch(r"(l|s|p)\[(.*)\]", text, flags=re.DOTALL)
    if match:
        items = [parse_value(part, lookup) for part in split_top_level(match.group(2))]
        if match.group(1) == "s":
            return set(items)
        return Path([], items) if match.group(1) == "p" else items
    match = re.fullmatch(r"m\[(.*)\]", text, flags=re.DOTALL)
    if match:
        return _map_part(json.loads(match.group(1)), lookup)
    match = re.fullmatch(r"c\[(.*)\]", text, flags=re.DOTALL)
    if match:
        return _Groovy(match.group(1))
    match = re.fullmatch(r"t\[(\w+)\]", text)
    if match:
        return _T[match.group(1)]
    match = re.fullmatch(r"D\[(\w+)\]", text)
    if match:
        return _DIRECTION[match.group(1)]
    match = re.fullmatch(r"M\[(\w+)\]", text)
    if match:
        return _MERGE[match.group(1)]
    match = re.fullmatch(r"str\[(.*)\]", text, flags=re.DOTALL)
    if match:
        return match.group(1)
    return text


def parse_predicate(operator: str, argument: str, lookup: ElementLookup) -> P:
    """The ``using the parameter x of P.within("l[]")`` form: a predicate around a typed value."""
    return P(operator, parse_value(argument, lookup))
