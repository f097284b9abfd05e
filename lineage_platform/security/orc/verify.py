"""Checking decoded stripes against the writer's stripe statistics: ORC has no checksum and AES-CTR no MAC,
so a damaged data stream that still decompresses and decodes would otherwise give wrong values silently.

For each top-level column of a whole stripe: the number of non-null values and, for columns whose
statistics carry them (integers, floating point, strings, decimals, dates), the minimum and maximum must
be those the writer recorded (clear statistics for unlocked columns, masked ones for masked columns).
Timestamps (millisecond statistics) and compound columns are checked by count only; union columns not at
all (Arrow's union arrays carry no nulls of their own). ``check_stripes`` takes the values decoded into
Arrow; ``check_stripe_presence`` counts the non-null values from a column's PRESENT stream (ORC's bit
stream, byte-RLE encoded, from which ORC C++ takes the nulls), for the Python-rows path, where only ranged
columns are decoded into Arrow.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate, pairwise
from typing import Any

import numpy as np
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


def check_stripes(
    tail: OrcTail,
    stripes: Sequence[int],
    table: pa.Table,
    names: Sequence[str],
    statistics: Sequence[Mapping[int, ColumnStats]],
) -> None:
    """Raise SecurityError naming the stripe and column when ``table`` (the decoded rows of the whole
    ``stripes``, one after another) disagrees with a stripe's statistics (``statistics[stripe]``: column id ->
    statistics; missing ones are not checked). The minimum and maximum of an integer column without nulls come
    from one numpy pass over every stripe, the others' per stripe."""
    rows = [tail.stripes[n].rows for n in stripes]
    starts = list(accumulate(rows, initial=0))
    for name in names:
        values = table.column(name)
        integers = _integer_bounds(values, starts) if pa.types.is_integer(values.type) else None
        for k, number in enumerate(stripes):
            if number >= len(statistics):
                continue
            part = values.slice(starts[k], rows[k])
            bounds = (
                (lambda k=k, found=integers: found[k])
                if integers
                else (lambda part=part: _arrow_bounds(part))
            )
            _check(tail, number, name, statistics[number], len(part) - part.null_count, bounds)


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
    """``check_stripes``' count of non-null values for ``names`` of one whole stripe, read from the columns'
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


def _integer_bounds(values: pa.ChunkedArray, starts: list[int]) -> list[tuple[int, int]] | None:
    """(minimum, maximum) of each run of rows from ``starts[i]`` to ``starts[i + 1]`` of an integer column, in
    one numpy pass; None when the column has nulls or an empty run (those are checked per stripe)."""
    if values.null_count or len(starts) < 2 or any(a == b for a, b in pairwise(starts)):
        return None
    array = values.to_numpy()
    lows, highs = np.minimum.reduceat(array, starts[:-1]), np.maximum.reduceat(array, starts[:-1])
    return list(zip(lows.tolist(), highs.tolist(), strict=True))


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
