"""Reading some row groups of a stripe: which bytes of each encrypted stream they need, and decoding them.

For a run of row groups ``[first, stop)`` each positioned stream of an unlocked column is decrypted from the
compression chunk where the first group resumes (the CTR counter computed from that byte offset) to where
the group after the run resumes, plus the chunks holding a run-length run that straddles that position.
Bytes outside those windows stay zero and are never decoded: ORC C++ (pyorc) seeks with the row index
positions, decompresses from the chunk, starts its decoders at the offset inside it and skips the values
before the first wanted row. The rebuilt stripe ends at the last wanted row group.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pyarrow as pa
import pyorc
from pyorc.converters import ORCConverter

from lineage_platform.errors import SecurityError
from lineage_platform.security.orc.crypto import ctr_decrypt, stream_iv
from lineage_platform.security.orc.keys import VariantKeys
from lineage_platform.security.orc.plain import StreamLocation, StripePart
from lineage_platform.security.orc.row_index import StreamPosition, StripeRowIndex
from lineage_platform.security.orc.tail import OrcTail

DECODE_ERRORS: tuple[type[Exception], ...] = (
    pa.ArrowException,
    pyorc.ParseError,
    OSError,
    RuntimeError,
    ValueError,
    OverflowError,
    TypeError,
)
"""What ORC C++ (through pyarrow or pyorc) and the conversion to Arrow raise on data they cannot decode."""


def group_runs(groups: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted row-group numbers as ``[first, stop)`` runs of consecutive groups."""
    runs: list[tuple[int, int]] = []
    for group in sorted(groups):
        if runs and runs[-1][1] == group:
            runs[-1] = (runs[-1][0], group + 1)
        else:
            runs.append((group, group + 1))
    return runs


def stripe_part(
    tail: OrcTail,
    index: StripeRowIndex,
    columns: Iterable[int],
    owner: dict[int, VariantKeys],
    runs: Sequence[tuple[int, int]],
) -> StripePart:
    """What to decrypt of the stripe behind ``index`` to decode the row-group ``runs`` of ``columns``."""
    stride = index.stride
    windows: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for column in columns:
        keys = owner.get(column)
        if keys is None:
            continue  # unencrypted (or masked) streams are copied, not decrypted
        entries = index.entries(column, keys)
        streams = index.streams(column, keys)
        for kind in entries[0].positions:
            stream = streams[kind]
            peek = _header_reader(index, stream, keys)
            spans = [
                (
                    entries[first].positions[kind].chunk,
                    _end(entries[stop].positions[kind], stream.length, tail, peek)
                    if stop < len(entries)
                    else stream.length,
                )
                for first, stop in runs
            ]
            windows[(column, kind)] = _merged(spans)
    return StripePart(min(runs[-1][1] * stride, index.stripe.rows), windows)


def _header_reader(
    index: StripeRowIndex, stream: StreamLocation, keys: VariantKeys
) -> Callable[[int], bytes]:
    """Reads (decrypting, and counting) the 3-byte chunk header at an offset of an encrypted stream."""
    iv = stream_iv(stream.column, stream.kind, index.stripe.encrypt_stripe_id)
    key = keys.stripe_keys[index.stripe.index]

    def peek(offset: int) -> bytes:
        start = stream.start + offset
        index.stats.bytes_decrypted += 3
        return ctr_decrypt(key, iv, index.raw[start : start + 3], offset)

    return peek


def _end(resume: StreamPosition, length: int, tail: OrcTail, peek: Callable[[int], bytes]) -> int:
    """Where the bytes for the rows before ``resume`` end: a run that straddles it fits in the ``run_bytes``
    after it (chunks of ORC Java's writer hold ``block_size`` plain bytes, the last fewer)."""
    if tail.codec == 0:
        return min(length, resume.chunk + resume.run_bytes)
    position, covered, needed = resume.chunk, 0, resume.offset + resume.run_bytes
    while covered < needed and position + 3 <= length:
        header = int.from_bytes(peek(position), "little")
        covered += header >> 1 if header & 1 else tail.block_size
        position += 3 + (header >> 1)
    return min(position, length)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Byte ranges, overlapping ones joined."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


class _Nanoseconds(ORCConverter):
    """Timestamps as integer nanoseconds since the epoch, so none of their precision is lost."""

    @staticmethod
    def from_orc(seconds: int, nanoseconds: int, timezone: Any) -> int:
        return seconds * 1_000_000_000 + nanoseconds

    @staticmethod
    def to_orc(*args: Any) -> Any:
        raise NotImplementedError


_CONVERTERS: dict[pyorc.TypeKind, type[ORCConverter]] = {
    pyorc.TypeKind.TIMESTAMP: _Nanoseconds,
    pyorc.TypeKind.TIMESTAMP_INSTANT: _Nanoseconds,
}


def decode_rows(plain: bytes, schema: pa.Schema, rows: Sequence[tuple[int, int]]) -> pa.Table:
    """Rows ``[start, stop)`` of the plain ORC file ``plain`` (one stripe) as an Arrow table of ``schema``'s
    columns: ORC C++ seeks to each start through the row index and decodes from there. Undecodable data is
    a SecurityError naming the first column that fails alone."""
    try:
        return _decode_rows(plain, schema, rows)
    except DECODE_ERRORS as error:
        failing = next((n for n in schema.names if _fails(plain, schema, n, rows)), ", ".join(schema.names))
        detail = " ".join(str(error).split())[:200]
        raise SecurityError(
            f"column {failing}: the data cannot be decoded ({type(error).__name__}: {detail})",
            hint="the file is corrupted; restore it from a good copy",
        ) from error


def _fails(plain: bytes, schema: pa.Schema, column: str, rows: Sequence[tuple[int, int]]) -> bool:
    try:
        _decode_rows(plain, pa.schema([schema.field(column)]), rows)
    except DECODE_ERRORS:
        return True
    return False


def _decode_rows(plain: bytes, schema: pa.Schema, rows: Sequence[tuple[int, int]]) -> pa.Table:
    reader = pyorc.Reader(
        io.BytesIO(plain),
        column_names=schema.names,
        struct_repr=pyorc.StructRepr.DICT,
        converters=_CONVERTERS,
    )
    decoded: list[dict[str, Any]] = []
    for start, stop in rows:
        reader.seek(start)
        decoded += reader.read(stop - start)
    return pa.Table.from_pylist(decoded, schema=schema)
