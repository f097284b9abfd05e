"""Checking decoded stripes against the writer's stripe statistics: ORC has no checksum and AES-CTR no MAC,
so a damaged data stream that still decompresses and decodes would otherwise give wrong values silently.

For each top-level column of a whole stripe: the number of non-null values and, for columns whose
statistics carry them (integers, floating point, strings, decimals, dates), the minimum and maximum must
be those the writer recorded (clear statistics for unlocked columns, masked ones for masked columns).
Timestamps (millisecond statistics) and compound columns are checked by count only; union columns not at
all (Arrow's union arrays carry no nulls of their own).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import countOf, itemgetter
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from lineage_platform.errors import SecurityError
from lineage_platform.security.orc.statistics import ColumnStats
from lineage_platform.security.orc.tail import OrcTail

_RANGED = frozenset(
    {
        "tinyint",
        "smallint",
        "int",
        "bigint",
        "float",
        "double",
        "string",
        "varchar",
        "char",
        "decimal",
        "date",
    }
)


def check_stripe(
    tail: OrcTail, stripe: int, table: pa.Table, names: Sequence[str], stats: Mapping[int, ColumnStats]
) -> None:
    """Raise SecurityError naming the stripe and column when ``table`` (the decoded rows of one whole stripe)
    disagrees with the stripe's statistics ``stats`` (column id -> statistics; missing ones are not checked)."""
    for name in names:
        values = table.column(name)
        _check(tail, stripe, name, stats, len(values) - values.null_count, lambda v=values: _arrow_bounds(v))


def check_stripe_rows(
    tail: OrcTail,
    stripe: int,
    rows: Sequence[Mapping[str, Any]],
    names: Sequence[str],
    stats: Mapping[int, ColumnStats],
) -> None:
    """``check_stripe`` for one whole stripe decoded as Python rows (dicts by column name)."""
    for name in names:
        found = len(rows) - countOf(map(itemgetter(name), rows), None)
        _check(tail, stripe, name, stats, found, lambda n=name: _bounds(map(itemgetter(n), rows)))


def _arrow_bounds(values: pa.ChunkedArray) -> tuple[Any, Any]:
    low, high = pc.min_max(values).values()
    return low.as_py(), high.as_py()


def _bounds(values: Iterable[Any]) -> tuple[Any, Any]:
    present = [v for v in values if v is not None]
    return min(present), max(present)


def _check(
    tail: OrcTail,
    stripe: int,
    name: str,
    stats: Mapping[int, ColumnStats],
    found: int,
    bounds: Callable[[], tuple[Any, Any]],
) -> None:
    """Raise SecurityError when ``found`` non-null values (and, for ranged types, ``bounds()``: their minimum
    and maximum) disagree with the column's statistics."""
    column = tail.column_named(name)
    expected = stats.get(column.id)
    if expected is None or column.kind == "uniontype":
        return
    problem = None
    if found != expected.values:
        problem = f"{found} values where the statistics count {expected.values}"
    elif (
        column.kind in _RANGED
        and found
        and None not in (expected.minimum, expected.maximum)
        and bounds() != (expected.minimum, expected.maximum)
    ):
        problem = "a minimum or maximum other than its statistics record"
    if problem:
        raise SecurityError(
            f"stripe {stripe}, column {name}: the decoded data does not match the file ({problem})",
            hint="the file is corrupted; restore it from a good copy",
        )
