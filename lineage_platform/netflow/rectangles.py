"""A WHERE clause as a union of hyper-rectangles (disjunctive normal form over integer intervals).

Every NetFlow attribute is an integer (addresses as uint32, times as epoch ms), so each comparison, ``BETWEEN``,
``IN`` list or CIDR block (``in_cidr(col, 'a.b.c.d/n')``) on one column is a set of closed intervals. ``NOT`` is
pushed down to the comparisons (De Morgan), ``AND`` intersects boxes pairwise and ``OR`` concatenates them, which
gives the DNF directly as boxes. A condition that is not such a comparison (a function of several columns, LIKE,
...) is read as "anything": the result may keep more partitions than needed, never fewer. When the product of an
``AND`` would exceed :data:`MAX_BOXES`, the boxes are merged into their bounding box, again erring on the side of
keeping data.

>>> import sqlglot
>>> boxes = where_boxes(sqlglot.parse_one("SELECT 1 FROM f WHERE src_port = 80 OR NOT src_port >= 10"))
>>> sorted(box["src_port"] for box in boxes.boxes)
[(0, 9), (80, 80)]
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from lineage_platform.errors import SqlError
from lineage_platform.netflow.records import (
    COLUMNS,
    IP_COLUMNS,
    TIME_COLUMNS,
    cidr_range,
    domain,
    epoch_ms,
    ip_to_int,
)

Interval = tuple[int, int]
Number = int | float
Box = dict[str, Interval]
MAX_BOXES = 1024
CIDR_FUNCTION = "IN_CIDR"


@dataclass
class Rectangles:
    """The boxes of a WHERE clause and the columns whose conditions could not be used for pruning."""

    boxes: list[Box]
    unused: set[str] = field(default_factory=set)


def where_boxes(select: exp.Expression) -> Rectangles:
    """The union of boxes that contains every row the statement's WHERE clause can accept."""
    where = select.args.get("where")
    unused: set[str] = set()
    if where is None:
        return Rectangles([{}], unused)
    return Rectangles(_boxes(where.this, False, unused), unused)


def literal_value(column: str, node: exp.Expression) -> int | float:
    """A SQL literal compared with ``column`` in the integer form the column stores (IPs, times as epoch ms).

    A fractional number stays a float: bounds round it inwards and equality with it matches nothing.
    """
    if isinstance(node, exp.Cast | exp.TryCast):
        node = node.this
    if isinstance(node, exp.Neg):
        return -literal_value(column, node.this)
    if not isinstance(node, exp.Literal):
        raise _NotALiteral
    if column in IP_COLUMNS and node.is_string:
        return ip_to_int(node.this)
    if column in TIME_COLUMNS and node.is_string:
        try:
            return epoch_ms(node.this)
        except ValueError as exc:
            raise SqlError(
                f"not a timestamp: {node.this!r}", hint="write times as 'YYYY-MM-DD HH:MM:SS'"
            ) from exc
    if node.is_string:
        raise _NotALiteral
    number = float(node.this)
    return int(number) if number.is_integer() else number


class _NotALiteral(Exception):
    """The other side of a comparison is not a constant."""


def _boxes(node: exp.Expression, negated: bool, unused: set[str]) -> list[Box]:
    if isinstance(node, exp.Paren):
        return _boxes(node.this, negated, unused)
    if isinstance(node, exp.Not):
        return _boxes(node.this, not negated, unused)
    if isinstance(node, exp.And | exp.Or):
        left, right = _boxes(node.left, negated, unused), _boxes(node.right, negated, unused)
        conjunction = isinstance(node, exp.And) != negated
        return _intersect(left, right) if conjunction else _bounded(left + right)
    if isinstance(node, exp.Boolean):
        return [{}] if node.this != negated else []
    leaf = _leaf_intervals(node)
    if leaf is None:
        unused.update(column.name for column in node.find_all(exp.Column))
        return [{}]
    column, intervals = leaf
    if negated:
        intervals = _complement(intervals, domain(column))
    return _bounded([{column: interval} for interval in intervals])


def _leaf_intervals(node: exp.Expression) -> tuple[str, list[Interval]] | None:
    """(column, intervals) of a one-column condition, or None when it is not one."""
    try:
        if isinstance(node, exp.Between) and _column(node.this):
            column = _column(node.this)
            low, high = literal_value(column, node.args["low"]), literal_value(column, node.args["high"])
            return column, _clip([(_ceil(low), _floor(high))], column)
        if isinstance(node, exp.In) and _column(node.this) and not node.args.get("query"):
            column = _column(node.this)
            values = sorted({literal_value(column, item) for item in node.expressions})
            return column, _clip([(value, value) for value in values if float(value).is_integer()], column)
        if isinstance(node, exp.Anonymous) and node.name.upper() == CIDR_FUNCTION:
            if len(node.expressions) == 2 and _column(node.expressions[0]) in IP_COLUMNS:
                return _column(node.expressions[0]), [cidr_range(node.expressions[1].name)]
            return None
        if isinstance(node, exp.EQ | exp.NEQ | exp.LT | exp.LTE | exp.GT | exp.GTE):
            return _comparison(node)
    except _NotALiteral:
        return None
    return None


def _comparison(node: exp.Binary) -> tuple[str, list[Interval]] | None:
    flipped = {exp.LT: exp.GT, exp.LTE: exp.GTE, exp.GT: exp.LT, exp.GTE: exp.LTE}
    kind, left, right = type(node), node.left, node.right
    if not _column(left) and _column(right):
        kind, left, right = flipped.get(kind, kind), right, left
    column = _column(left)
    if not column:
        return None
    value = literal_value(column, right)
    low, high = domain(column)
    if kind is exp.EQ:
        intervals = [(value, value)] if float(value).is_integer() else []
    elif kind is exp.NEQ:
        intervals = _complement([(value, value)], (low, high)) if float(value).is_integer() else [(low, high)]
    elif kind is exp.LT:
        intervals = [(low, _ceil(value) - 1)]
    elif kind is exp.LTE:
        intervals = [(low, _floor(value))]
    elif kind is exp.GT:
        intervals = [(_floor(value) + 1, high)]
    else:
        intervals = [(_ceil(value), high)]
    return column, _clip(intervals, column)


def _column(node: exp.Expression) -> str | None:
    return node.name if isinstance(node, exp.Column) and node.name in COLUMNS else None


def _floor(value: Number) -> int:
    return int(value // 1)


def _ceil(value: Number) -> int:
    return -int(-value // 1)


def _clip(intervals: list[Interval], column: str) -> list[Interval]:
    low, high = domain(column)
    clipped = [(max(a, low), min(b, high)) for a, b in intervals]
    return [(a, b) for a, b in clipped if a <= b]


def _complement(intervals: list[Interval], whole: Interval) -> list[Interval]:
    result, start = [], whole[0]
    for low, high in sorted(intervals):
        if low > start:
            result.append((start, low - 1))
        start = max(start, high + 1)
    if start <= whole[1]:
        result.append((start, whole[1]))
    return result


def _intersect(left: list[Box], right: list[Box]) -> list[Box]:
    boxes = []
    for a in left:
        for b in right:
            merged = dict(a)
            for column, (low, high) in b.items():
                if column in merged:
                    low, high = max(low, merged[column][0]), min(high, merged[column][1])
                merged[column] = (low, high)
            if all(low <= high for low, high in merged.values()):
                boxes.append(merged)
    return _bounded(boxes)


def _bounded(boxes: list[Box]) -> list[Box]:
    """The boxes, or their bounding box when there are more than MAX_BOXES."""
    return boxes if len(boxes) <= MAX_BOXES else [_bounding_box(boxes)]


def _bounding_box(boxes: list[Box]) -> Box:
    """The smallest box containing all of them (a column unconstrained in one box is unconstrained in it)."""
    shared = set.intersection(*(set(box) for box in boxes))
    return {
        column: (min(box[column][0] for box in boxes), max(box[column][1] for box in boxes))
        for column in shared
    }
