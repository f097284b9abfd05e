"""Checking decoded stripes against the writer's stripe statistics: ORC has no checksum and AES-CTR no MAC,
so a damaged data stream that still decompresses and decodes would otherwise give wrong values silently.

For each top-level column of a whole stripe: the number of non-null values and, for columns whose
statistics carry them (integers, floating point, strings, decimals, dates), the minimum and maximum must
be those the writer recorded (clear statistics for unlocked columns, masked ones for masked columns).
Timestamps (millisecond statistics) and compound columns are checked by count only; union columns not at
all (Arrow's union arrays carry no nulls of their own). ``check_stripe`` takes the values decoded into
Arrow; ``check_stripe_presence`` counts the non-null values from a column's PRESENT stream (ORC's bit
stream, byte-RLE encoded, from which ORC C++ takes the nulls), for the Python-rows path, where only ranged
columns are decoded into Arrow.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from lineage_platform.errors import SecurityError
from lineage_platform.security.orc.compression import decompress
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


def ranged(tail: OrcTail, names: Sequence[str]) -> list[str]:
    """The columns among ``names`` whose statistics carry a minimum and maximum."""
    return [n for n in names if tail.column_named(n).kind in _RANGED]


def check_stripe_presence(
    tail: OrcTail,
    stripe: int,
    names: Sequence[str],
    stats: Mapping[int, ColumnStats],
    present: Mapping[int, bytes],
) -> None:
    """``check_stripe``'s count of non-null values for ``names`` of one whole stripe, read from the columns'
    PRESENT streams (clear, still compressed, by column id; no stream: no nulls) where ORC C++ takes them
    from, without decoding the values."""
    rows = tail.stripes[stripe].rows
    for name in names:
        column = tail.column_named(name).id
        stream = present.get(column)
        what = f"stripe {stripe}, column {name}: PRESENT stream"
        found = (
            rows
            if stream is None
            else set_bits(decompress(stream, tail.codec, tail.block_size, what), rows, what)
        )
        _check(tail, stripe, name, stats, found, None)


def set_bits(data: bytes, bits: int, what: str) -> int:
    """How many of the first ``bits`` bits (most significant first) of ORC's byte-RLE ``data`` are set."""
    out = bytearray()
    position = 0
    while position < len(data) and len(out) * 8 < bits:
        header = data[position]
        if header < 128:  # a run of header + 3 copies of the next byte
            out += data[position + 1 : position + 2] * (header + 3)
            position += 2
        else:  # 256 - header literal bytes
            out += data[position + 1 : position + 1 + 256 - header]
            position += 1 + 256 - header
    needed = -(-bits // 8)
    if len(out) < needed:
        raise SecurityError(
            f"{what} holds {len(out) * 8} bits for {bits} rows",
            hint="the file is corrupted; restore it from a good copy",
        )
    return (int.from_bytes(out[:needed], "big") >> (needed * 8 - bits)).bit_count()


def _arrow_bounds(values: pa.ChunkedArray) -> tuple[Any, Any]:
    low, high = pc.min_max(values).values()
    return low.as_py(), high.as_py()


def _check(
    tail: OrcTail,
    stripe: int,
    name: str,
    stats: Mapping[int, ColumnStats],
    found: int,
    bounds: Callable[[], tuple[Any, Any]] | None,
) -> None:
    """Raise SecurityError when ``found`` non-null values (and, for ranged types unless ``bounds`` is None,
    ``bounds()``: their minimum and maximum) disagree with the column's statistics."""
    column = tail.column_named(name)
    expected = stats.get(column.id)
    if expected is None or column.kind == "uniontype":
        return
    problem = None
    if found != expected.values:
        problem = f"{found} values where the statistics count {expected.values}"
    elif (
        bounds is not None
        and column.kind in _RANGED
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
