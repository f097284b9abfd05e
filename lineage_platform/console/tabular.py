"""Decide whether traversal results form a table, and lay them out as columns and rows.

Vertices and edges become id/label(/outV/inV) rows with one column per property key; maps (``valueMap``,
``elementMap``, ``project``, ``group``...) become one row per map with one column per key. Shared by the
console (rich tables) and the notebook magic (pandas DataFrames).
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum
from typing import Any

from aenum import Enum as AEnum
from gremlin_python.structure.graph import Edge, Element, Vertex

SCALAR_TYPES = (str, int, float, bool, Decimal, dt.datetime, uuid.UUID, Enum, AEnum, type(None))


@dataclass(frozen=True)
class Table:
    """Column names and one list of cells per row."""

    columns: list[str]
    rows: list[list[Any]]


def column_name(key: Any) -> str:
    """A readable column name: ``T.id`` -> ``id``, strings unchanged."""
    if isinstance(key, Enum | AEnum):
        return key.name.rstrip("_")
    return str(key)


def element_properties(element: Element) -> dict[str, Any]:
    """Property key -> value of a vertex or edge; a key with several values (multi-properties) gets a list."""
    grouped: dict[str, list[Any]] = {}
    for prop in element.properties or []:
        grouped.setdefault(prop.key, []).append(prop.value)
    return {key: found[0] if len(found) == 1 else found for key, found in grouped.items()}


def _element_table(elements: list[Element]) -> Table:
    columns = ["id", "label"]
    if any(isinstance(e, Edge) for e in elements):
        columns += ["outV", "inV"]
    properties = [element_properties(e) for e in elements]
    for props in properties:
        columns += [key for key in props if key not in columns]
    rows = []
    for element, props in zip(elements, properties):
        ends = {"outV": element.outV.id, "inV": element.inV.id} if isinstance(element, Edge) else {}
        cells = {"id": element.id, "label": element.label, **ends, **props}
        rows.append([cells.get(column) for column in columns])
    return Table(columns, rows)


def _map_table(maps: list[dict[Any, Any]]) -> Table:
    columns: list[str] = []
    named_rows = []
    for entry in maps:
        named = {column_name(key): value for key, value in entry.items()}
        columns += [name for name in named if name not in columns]
        named_rows.append(named)
    return Table(columns, [[named.get(column) for column in columns] for named in named_rows])


def tabulate(values: list[Any], *, scalar_cells_only: bool = False) -> Table | None:
    """The results as a table, or None when they are not tabular (scalars, paths, mixed kinds, nothing).

    With ``scalar_cells_only`` a table whose cells hold lists, maps or elements is refused too.

    >>> tabulate([{"name": "orders", "rows": 3}, {"name": "users"}])
    Table(columns=['name', 'rows'], rows=[['orders', 3], ['users', None]])
    """
    if not values:
        return None
    if all(isinstance(value, Vertex | Edge) for value in values):
        table = _element_table(values)
    elif all(isinstance(value, dict) for value in values):
        table = _map_table(values)
    else:
        return None
    if scalar_cells_only and not all(isinstance(cell, SCALAR_TYPES) for row in table.rows for cell in row):
        return None
    return table
