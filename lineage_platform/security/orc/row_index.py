"""Row indexes: per row group (``rowIndexStride`` rows, 10,000 by default), each column's statistics and
the positions where each of its streams resumes.

A column's ``ROW_INDEX`` stream sits in the stripe's index area: the unencrypted one (masked values for an
encrypted column), or, for an unlocked encrypted column, the variant's copy, encrypted with the stripe's
local key under IV kind ``ROW_INDEX``. Positions of one entry are the streams' positions concatenated in
ORC's order (PRESENT first, then the type's streams); each is ``[compressed chunk offset (not for codec
none), offset in the uncompressed chunk, decoder positions...]``.
"""

from __future__ import annotations

from dataclasses import dataclass

from lineage_platform.errors import SecurityError
from lineage_platform.security.orc.compression import decompress
from lineage_platform.security.orc.crypto import ctr_decrypt, stream_iv
from lineage_platform.security.orc.keys import VariantKeys
from lineage_platform.security.orc.plain import (
    ROW_INDEX,
    StreamLocation,
    read_stripe_bytes,
    read_stripe_footer,
)
from lineage_platform.security.orc.protowire import Message, decode
from lineage_platform.security.orc.read_stats import ReadStats
from lineage_platform.security.orc.statistics import ColumnStats, parse_column_statistics
from lineage_platform.security.orc.tail import Column, OrcTail, StripeInfo

PRESENT, DATA, LENGTH, SECONDARY = 0, 1, 2, 5


@dataclass(frozen=True)
class StreamShape:
    """How a stream is positioned: entries per position (with a chunk offset), and the most bytes a decoder
    reads past a position for the values before it (a run-length run straddling it)."""

    positions: int
    run_bytes: int


_BITS = StreamShape(4, 130)  # byte runs of bits: at most 128 literal bytes + header
_BYTE_RUNS = StreamShape(3, 130)
_INT_RUNS = StreamShape(3, 4608)  # RLE v2: 512 values of 64 bits, headers, base and patch list
_BYTES = StreamShape(2, 0)  # values stored one after the other: a position is where the next one starts
_INTEGERS = ("smallint", "int", "bigint", "date")
_TEXT = ("string", "varchar", "char")


@dataclass(frozen=True)
class StreamPosition:
    """Where one stream resumes: ``chunk`` (byte offset of the compression chunk, or of the value for codec
    none) and ``offset`` (in the uncompressed chunk; 0 for codec none)."""

    chunk: int
    offset: int
    run_bytes: int  # see StreamShape


@dataclass(frozen=True)
class RowGroupEntry:
    """One column in one row group: its statistics and where each positioned stream resumes, by kind."""

    stats: ColumnStats | None  # None when the writer recorded none: never used to skip
    positions: dict[int, StreamPosition]


def positioned_streams(column: Column, dictionary: bool, has_present: bool) -> list[tuple[int, StreamShape]]:
    """``(stream kind, shape)`` in the order ORC writes positions into a row index entry; streams not listed
    (dictionaries) are read whole."""
    kind = column.kind
    if kind == "boolean":
        own = [(DATA, _BITS)]
    elif kind in ("tinyint", "uniontype"):
        own = [(DATA, _BYTE_RUNS)]
    elif kind in _INTEGERS or (kind in _TEXT and dictionary):
        own = [(DATA, _INT_RUNS)]
    elif kind in ("float", "double"):
        own = [(DATA, _BYTES)]
    elif kind in (*_TEXT, "binary"):
        own = [(DATA, _BYTES), (LENGTH, _INT_RUNS)]
    elif kind in ("timestamp", "timestamp_instant"):
        own = [(DATA, _INT_RUNS), (SECONDARY, _INT_RUNS)]
    elif kind == "decimal":
        own = [(DATA, _BYTES), (SECONDARY, _INT_RUNS)]
    elif kind in ("array", "map"):
        own = [(LENGTH, _INT_RUNS)]
    else:  # struct
        own = []
    return [(PRESENT, _BITS), *own] if has_present else own


class StripeRowIndex:
    """One stripe's bytes, footer and row indexes (each read, decrypted and parsed once, on demand)."""

    def __init__(self, tail: OrcTail, stripe: StripeInfo, stats: ReadStats) -> None:
        self.tail, self.stripe, self.stats = tail, stripe, stats
        self.raw = read_stripe_bytes(tail, stripe)
        self.layout = read_stripe_footer(tail, stripe, self.raw[stripe.index_length + stripe.data_length :])
        self.stride = tail.row_index_stride
        self._entries: dict[int, list[RowGroupEntry]] = {}

    @property
    def groups(self) -> int:
        """Row groups in the stripe."""
        return -(-self.stripe.rows // self.stride)

    def streams(self, column: int, keys: VariantKeys | None) -> dict[int, StreamLocation]:
        """The streams of ``column`` by kind: the variant's when ``keys`` unlock it, else the unencrypted ones."""
        variant = keys.variant.index if keys else None
        return {s.kind: s for s in self.layout.streams if s.column == column and s.variant == variant}

    def entries(self, column: int, keys: VariantKeys | None) -> list[RowGroupEntry]:
        """The row index of ``column``; SecurityError naming the column when it is missing or corrupted."""
        if column not in self._entries:
            self._entries[column] = self._read(self.tail.columns[column], keys)
        return self._entries[column]

    def _read(self, column: Column, keys: VariantKeys | None) -> list[RowGroupEntry]:
        streams = self.streams(column.id, keys)
        what = f"column {column.name}: the row index of stripe {self.stripe.index}"
        if ROW_INDEX not in streams:
            raise SecurityError(f"{what} is missing", hint="the file was written without row indexes")
        index = streams[ROW_INDEX]
        data = self.raw[index.start : index.start + index.length]
        if keys is not None:
            iv = stream_iv(column.id, ROW_INDEX, self.stripe.encrypt_stripe_id)
            data = ctr_decrypt(keys.stripe_keys[self.stripe.index], iv, data)
            self.stats.bytes_decrypted += len(data)
        encodings = self.layout.variant_encodings[keys.variant.index] if keys else self.layout.encodings
        encoding = decode(encodings[column.id - (keys.variant.root if keys else 0)]).int(1)
        positioned = positioned_streams(column, encoding in (1, 3), PRESENT in streams)
        try:
            messages = decode(decompress(data, self.tail.codec, self.tail.block_size, what)).messages(1)
            parsed = [_entry(m, positioned, self.tail.codec != 0) for m in messages]
        except (SecurityError, ValueError, IndexError, UnicodeDecodeError) as error:
            raise SecurityError(f"{what} is corrupted ({error})", hint="the file is corrupted") from error
        if len(parsed) != self.groups:
            raise SecurityError(
                f"{what} is corrupted: {len(parsed)} row groups for {self.stripe.rows} rows",
                hint="the file is corrupted",
            )
        return parsed


def _entry(entry: Message, streams: list[tuple[int, StreamShape]], compressed: bool) -> RowGroupEntry:
    """One ``RowIndexEntry``: statistics and the start of each positioned stream."""
    positions = entry.packed(1)
    per_stream = [shape.positions - (not compressed) for _, shape in streams]
    if len(positions) != sum(per_stream):
        raise ValueError(f"{len(positions)} positions where the column's streams have {sum(per_stream)}")
    out: dict[int, StreamPosition] = {}
    at = 0
    for (kind, shape), count in zip(streams, per_stream, strict=True):
        chunk, offset = (positions[at], positions[at + 1]) if compressed else (positions[at], 0)
        out[kind] = StreamPosition(chunk, offset, shape.run_bytes)
        at += count
    statistics = entry.message(2)
    return RowGroupEntry(None if statistics is None else parse_column_statistics(statistics), out)


def check_stripe_keys(tail: OrcTail, keys: VariantKeys) -> None:
    """Verify every stripe key of a variant before it decrypts anything: a stripe key equal to the footer key
    (checked on the file statistics) passes; any other must decrypt the stripe's encrypted row index of the
    variant's root column into one well-formed entry per row group. A corrupted stripe copy of the wrapped
    key would otherwise hand garbage streams to ORC C++."""
    column = tail.columns[keys.variant.root]
    for stripe, key in zip(tail.stripes, keys.stripe_keys, strict=True):
        if key == keys.footer_key:
            continue
        try:
            StripeRowIndex(tail, stripe, ReadStats()).entries(column.id, keys)
        except SecurityError as error:
            raise SecurityError(
                f"column {column.name}, stripe {stripe.index}: the stripe's local key differs from the file's "
                f"and does not decrypt the stripe ({error.message})",
                hint="the file is corrupted (its stripe copy of the wrapped key); restore it from a good copy",
            ) from error
