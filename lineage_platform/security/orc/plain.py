"""Rebuilding an encrypted ORC file as a plain one that any ORC reader (ORC C++ via pyorc/pyarrow) decodes.

For every selected stripe, columns whose variant is unlocked take the variant's streams, decrypted (they stay
compressed: ORC compresses first, then encrypts), and the variant's column encodings; every other column keeps
its unencrypted (masked) streams. Bloom filters of encrypted columns are dropped: ORC 2.3.0 writes one built
from the plaintext into the unencrypted area. The new tail has no encryption section and no statistics
(stale masked statistics must not describe clear values). A ``StripePart`` rebuilds only a stripe's first
rows, decrypting only byte windows of its encrypted streams (see ``seek``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from lineage_platform.errors import SecurityError
from lineage_platform.security.orc.compression import decompress, store_original
from lineage_platform.security.orc.crypto import ctr_decrypt, stream_iv
from lineage_platform.security.orc.keys import VariantKeys
from lineage_platform.security.orc.protowire import BYTES, Message, decode, encode
from lineage_platform.security.orc.read_stats import ReadStats
from lineage_platform.security.orc.tail import OrcTail, StripeInfo

PRESENT, ROW_INDEX, BLOOM_FILTER, BLOOM_FILTER_UTF8, DICTIONARY_COUNT = 0, 6, 7, 8, 4
ENCRYPTED_INDEX, ENCRYPTED_DATA = 9, 10
INDEX_KINDS = {ROW_INDEX, BLOOM_FILTER, BLOOM_FILTER_UTF8, DICTIONARY_COUNT}
STREAM_KIND_NAMES = {
    0: "PRESENT", 1: "DATA", 2: "LENGTH", 3: "DICTIONARY_DATA", 4: "DICTIONARY_COUNT", 5: "SECONDARY",
    6: "ROW_INDEX", 7: "BLOOM_FILTER", 8: "BLOOM_FILTER_UTF8", 9: "ENCRYPTED_INDEX", 10: "ENCRYPTED_DATA",
}  # fmt: skip


class StreamLocation(NamedTuple):
    """One stream of a stripe: column, kind, where its bytes start in the stripe, length, owning variant
    (a tuple: a stripe footer lists about a hundred, and a frozen dataclass costs ~1 µs each to build)."""

    column: int
    kind: int
    start: int
    length: int
    variant: int | None  # None: unencrypted area


@dataclass
class StripeLayout:
    """A stripe footer, parsed, with every stream located."""

    footer: Message
    streams: list[StreamLocation]
    encodings: list[bytes]  # ColumnEncoding messages by column id (unencrypted view)
    variant_encodings: dict[int, list[bytes]]  # variant index -> ColumnEncoding per column from its root


@dataclass(frozen=True)
class StripePart:
    """The part of a stripe to rebuild: its first ``rows`` rows, and for the encrypted streams listed only the
    byte ``windows`` decrypted (the rest left zero, never handed to the decoder); other streams whole."""

    rows: int
    windows: dict[tuple[int, int], list[tuple[int, int]]]  # (column, stream kind) -> [(start, end)]


def read_stripe_bytes(tail: OrcTail, stripe: StripeInfo) -> bytes:
    """The stripe's index, data and footer bytes, as stored."""
    with open(tail.path, "rb") as handle:
        handle.seek(stripe.offset)
        raw = handle.read(stripe.end - stripe.offset)
    if len(raw) != stripe.end - stripe.offset:
        raise SecurityError(f"{tail.path}: stripe {stripe.index} is truncated", hint="the file is truncated")
    return raw


def read_stripe_footer(tail: OrcTail, stripe: StripeInfo, raw_footer: bytes) -> StripeLayout:
    """Parse a stripe footer and locate its streams (index area then data area; unencrypted, then variants)."""
    what = f"stripe {stripe.index} footer"
    try:
        footer = decode(decompress(raw_footer, tail.codec, tail.block_size, what))
        plain = [(s.int(2), s.int(1), s.int(3)) for s in footer.messages(1)]
        variants = footer.messages(4)
        variant_streams = [[(s.int(2), s.int(1), s.int(3)) for s in v.messages(1)] for v in variants]
    except SecurityError as error:
        if error.message.startswith(what):
            raise
        raise SecurityError(f"{what}: {error.message}", hint=error.hint) from error
    located: list[StreamLocation] = []
    offset = 0
    for index_area in (True, False):
        for column, kind, length in plain:
            if kind in (ENCRYPTED_INDEX, ENCRYPTED_DATA) or (kind in INDEX_KINDS) != index_area:
                continue
            located.append(StreamLocation(column, kind, offset, length, None))
            offset += length
        for variant_index, streams in enumerate(variant_streams):
            for column, kind, length in streams:
                if (kind in INDEX_KINDS) == index_area:
                    located.append(StreamLocation(column, kind, offset, length, variant_index))
                    offset += length
    if offset != stripe.index_length + stripe.data_length:
        raise SecurityError(
            f"stripe {stripe.index}: streams cover {offset} bytes, the stripe holds {stripe.index_length + stripe.data_length}",
            hint="the file is corrupted",
        )
    encodings = [v for v in footer.all(2) if isinstance(v, bytes)]
    variant_encodings = {i: [v for v in m.all(2) if isinstance(v, bytes)] for i, m in enumerate(variants)}
    return StripeLayout(footer, located, encodings, variant_encodings)


def plain_orc(
    tail: OrcTail,
    keys: dict[int, VariantKeys],
    stripes: Iterable[int] | None = None,
    *,
    parts: dict[int, StripePart] | None = None,
    stats: ReadStats | None = None,
    present: dict[int, dict[int, bytes]] | None = None,
) -> bytes:
    """A complete plain ORC file (bytes) holding the selected stripes (default: all); a stripe in ``parts``
    holds only that part. ``stats`` counts the bytes decrypted; ``present`` receives, per stripe, the PRESENT
    stream of each column that has one (clear, still compressed), by column id."""
    selected = [tail.stripes[i] for i in (range(len(tail.stripes)) if stripes is None else stripes)]
    owner = {c.id: keys[v.root] for c in tail.columns if (v := tail.variant_of(c.id)) and v.root in keys}
    encrypted = frozenset(c.id for c in tail.columns if tail.variant_of(c.id))
    counters = stats if stats is not None else ReadStats()
    out = bytearray(b"ORC")
    stripe_infos: list[Message] = []
    total_rows = 0
    for stripe in selected:
        part = (parts or {}).get(stripe.index)
        raw = read_stripe_bytes(tail, stripe)
        body, index_length, footer, kept = _plain_stripe(tail, stripe, raw, owner, encrypted, part, counters)
        if present is not None:
            present[stripe.index] = {s.column: data for s, data in kept if s.kind == PRESENT}
        rows = stripe.rows if part is None else part.rows
        stripe_infos.append(
            Message().with_fields(
                [(1, len(out)), (2, index_length), (3, len(body) - index_length), (4, len(footer)), (5, rows)]
            )
        )
        out += body + footer
        total_rows += rows
    return bytes(out + _plain_tail(tail, stripe_infos, len(out), total_rows))


def _plain_stripe(
    tail: OrcTail,
    stripe: StripeInfo,
    raw: bytes,
    owner: dict[int, VariantKeys],
    encrypted: frozenset[int],
    part: StripePart | None,
    stats: ReadStats,
) -> tuple[bytes, int, bytes, list[tuple[StreamLocation, bytes]]]:
    """(index + data bytes, index length, compressed footer, the streams kept) of one stripe in plain form;
    ``owner``: unlocked keys by column id, ``encrypted``: the ids of every encrypted column."""
    data_end = stripe.index_length + stripe.data_length
    layout = read_stripe_footer(tail, stripe, raw[data_end:])
    encodings = list(layout.encodings)
    for column, keys in owner.items():
        variant_encodings = layout.variant_encodings.get(keys.variant.index, [])
        if column - keys.variant.root >= len(variant_encodings) or column >= len(encodings):
            raise SecurityError(
                f"stripe {stripe.index}: no encoding for column {tail.columns[column].name}",
                hint="the file is corrupted",
            )
        encodings[column] = variant_encodings[column - keys.variant.root]
    kept: list[tuple[StreamLocation, bytes]] = []
    for stream in layout.streams:
        keys = owner.get(stream.column)
        if stream.column in encrypted and stream.kind in (BLOOM_FILTER, BLOOM_FILTER_UTF8):
            continue  # possibly built from the plaintext (ORC 2.3.0): never read it
        if keys is None and stream.variant is None:
            kept.append((stream, raw[stream.start : stream.start + stream.length]))
        elif keys is not None and stream.variant == keys.variant.index:
            windows = part.windows.get((stream.column, stream.kind)) if part else None
            kept.append((stream, _decrypted(stream, stripe, keys, raw, windows, stats)))
    kept.sort(key=lambda item: item[0].kind not in INDEX_KINDS)  # stable: index area first
    index_length = sum(s.length for s, _ in kept if s.kind in INDEX_KINDS)
    footer = layout.footer.without(1, 2, 4).with_fields(
        [(1, encode(Message().with_fields([(1, s.kind), (2, s.column), (3, s.length)]))) for s, _ in kept]
        + [(2, e) for e in encodings]
    )
    footer.fields.sort(key=lambda f: f[0])
    return b"".join(b for _, b in kept), index_length, store_original(encode(footer), tail.codec), kept


def _decrypted(
    stream: StreamLocation,
    stripe: StripeInfo,
    keys: VariantKeys,
    raw: bytes,
    windows: list[tuple[int, int]] | None,
    stats: ReadStats,
) -> bytes:
    """One variant stream of a stripe in clear (still compressed): whole, or only its ``windows``."""
    iv = stream_iv(stream.column, stream.kind, stripe.encrypt_stripe_id)
    key = keys.stripe_keys[stripe.index]
    data = raw[stream.start : stream.start + stream.length]
    if windows is None:
        stats.bytes_decrypted += len(data)
        return ctr_decrypt(key, iv, data)
    out = bytearray(len(data))
    for start, end in windows:
        out[start:end] = ctr_decrypt(key, iv, data[start:end], start)
        stats.bytes_decrypted += end - start
    return bytes(out)


def _plain_tail(tail: OrcTail, stripes: list[Message], content_end: int, rows: int) -> bytes:
    """Metadata (empty), footer and PostScript of the plain file."""
    footer = tail.footer.without(1, 2, 3, 6, 7, 10)
    footer = Message(
        [(1, 0, 3), (2, 0, content_end)]
        + [(3, BYTES, encode(s)) for s in stripes]
        + [f for f in footer.fields if f[0] < 6]
        + [(6, 0, rows)]
        + [f for f in footer.fields if f[0] > 6]
    )
    footer_bytes = store_original(encode(footer), tail.codec)
    postscript = tail.postscript.without(1, 5, 7, 8000)
    postscript = Message([(1, 0, len(footer_bytes)), *postscript.fields, (5, 0, 0), (8000, BYTES, b"ORC")])
    postscript_bytes = encode(postscript)
    return footer_bytes + postscript_bytes + bytes([len(postscript_bytes)])
