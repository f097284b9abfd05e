"""Rebuilding an encrypted ORC file as a plain one that any ORC reader (ORC C++ via pyorc/pyarrow) decodes.

For every selected stripe, columns whose variant is unlocked take the variant's streams, decrypted (they stay
compressed: ORC compresses first, then encrypts), and the variant's column encodings; every other column keeps
its unencrypted (masked) streams. Bloom filters of encrypted columns are dropped: ORC 2.3.0 writes one built
from the plaintext into the unencrypted area. The new tail has no encryption section and no statistics
(stale masked statistics must not describe clear values). A ``StripePart`` rebuilds only a stripe's first
rows, decrypting only byte windows of its encrypted streams (see ``seek``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from lineage_platform.errors import SecurityError
from lineage_platform.security.orc.compression import decompress, store_original
from lineage_platform.security.orc.crypto import CtrCipher, stream_counter
from lineage_platform.security.orc.keys import VariantKeys
from lineage_platform.security.orc.protowire import (
    BYTES,
    Message,
    bytes_field,
    decode,
    encode,
    read_varint,
    varints,
)
from lineage_platform.security.orc.read_stats import ReadStats
from lineage_platform.security.orc.tail import OrcTail, StripeInfo

PRESENT, ROW_INDEX, BLOOM_FILTER, BLOOM_FILTER_UTF8, DICTIONARY_COUNT = 0, 6, 7, 8, 4
ENCRYPTED_INDEX, ENCRYPTED_DATA = 9, 10
INDEX_KINDS = {ROW_INDEX, BLOOM_FILTER, BLOOM_FILTER_UTF8, DICTIONARY_COUNT}
STREAM_KIND_NAMES = {
    0: "PRESENT", 1: "DATA", 2: "LENGTH", 3: "DICTIONARY_DATA", 4: "DICTIONARY_COUNT", 5: "SECONDARY",
    6: "ROW_INDEX", 7: "BLOOM_FILTER", 8: "BLOOM_FILTER_UTF8", 9: "ENCRYPTED_INDEX", 10: "ENCRYPTED_DATA",
}  # fmt: skip

# A footer's ``Stream`` entry as ORC writers store it: key of field 1, size, then kind, column (absent from
# the ENCRYPTED_INDEX/DATA placeholders) and length
_ENTRY = rb"\x0a([\x00-\x7f])\x08([\x00-\x7f])(?:\x10([\x80-\xff]{0,4}[\x00-\x7f]))?\x18([\x80-\xff]{0,9}[\x00-\x7f])"
_STREAM_ENTRY = re.compile(_ENTRY)
_STREAM_RUN = re.compile(b"(?:%s)*" % _ENTRY)


class StreamLocation(NamedTuple):
    """One stream of a stripe: column, kind, where its bytes start in the stripe, length, owning variant and
    its footer entry as stored (field key, size, ``Stream`` message: a rebuilt footer copies it; a tuple: a
    stripe footer lists about a hundred, and a frozen dataclass costs ~1 µs each to build)."""

    column: int
    kind: int
    start: int
    length: int
    variant: int | None  # None: unencrypted area
    field: bytes


@dataclass
class StripeLayout:
    """A stripe footer, parsed, with every stream located."""

    footer: Message  # the top-level fields but the streams (variants still as stored bytes)
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
        plain, footer = stream_entries(decompress(raw_footer, tail.codec, tail.block_size, what))
        variants = [stream_entries(v) for v in footer.all(4) if isinstance(v, bytes)]
        variant_streams = [streams for streams, _ in variants]
    except SecurityError as error:
        if error.message.startswith(what):
            raise
        raise SecurityError(f"{what}: {error.message}", hint=error.hint) from error
    located: list[StreamLocation] = []
    offset = 0
    for index_area in (True, False):
        for column, kind, length, entry in plain:
            if kind in (ENCRYPTED_INDEX, ENCRYPTED_DATA) or (kind in INDEX_KINDS) != index_area:
                continue
            located.append(StreamLocation(column, kind, offset, length, None, entry))
            offset += length
        for variant_index, streams in enumerate(variant_streams):
            for column, kind, length, entry in streams:
                if (kind in INDEX_KINDS) == index_area:
                    located.append(StreamLocation(column, kind, offset, length, variant_index, entry))
                    offset += length
    if offset != stripe.index_length + stripe.data_length:
        raise SecurityError(
            f"stripe {stripe.index}: streams cover {offset} bytes, the stripe holds {stripe.index_length + stripe.data_length}",
            hint="the file is corrupted",
        )
    encodings = [v for v in footer.all(2) if isinstance(v, bytes)]
    variant_encodings = {
        i: [v for v in m.all(2) if isinstance(v, bytes)] for i, (_, m) in enumerate(variants)
    }
    return StripeLayout(footer, located, encodings, variant_encodings)


def stream_entries(data: bytes) -> tuple[list[tuple[int, int, int, bytes]], Message]:
    """The ``Stream`` entries (field 1) of a stripe footer or of one of its variants, as (column, kind,
    length, the field as stored), and the message's other fields. The leading entries of the shape ORC writers
    store (kind, column, length in field order) are matched in C by a regular expression, each checked
    against its size; any other field goes through the protobuf decoder."""
    end = _STREAM_RUN.match(data).end()  # type: ignore[union-attr]  # matches at least the empty string
    out: list[tuple[int, int, int, bytes]] = []
    for match in _STREAM_ENTRY.finditer(data, 0, end):
        size, kind, column, length = match.groups()
        if size[0] != 3 + (1 + len(column) if column else 0) + len(length):  # not that shape after all
            end = match.start()  # the decoder takes it from here
            break
        out.append((_varint(column) if column else 0, kind[0], _varint(length), match.group()))
    rest = decode(data[end:])
    for entry in rest.all(1):
        if not isinstance(entry, bytes):
            raise SecurityError("a stream entry is not a message", hint="the file is corrupted")
        fields = varints(entry)
        out.append((fields.get(2, 0), fields.get(1, 0), fields.get(3, 0), bytes_field(1, entry)))
    return out, rest.without(1)


def _varint(data: bytes) -> int:
    return data[0] if len(data) == 1 else read_varint(data, 0)[0]


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
    secrets = _Secrets(stats if stats is not None else ReadStats())
    plans = []
    for stripe in selected:
        part = (parts or {}).get(stripe.index)
        raw = read_stripe_bytes(tail, stripe)
        plans.append(_plain_streams(tail, stripe, raw, owner, encrypted, part, secrets))
    secrets.decipher()
    out = bytearray(b"ORC")
    stripe_infos: list[Message] = []
    total_rows = 0
    for stripe, (layout, encodings, streams, datas) in zip(selected, plans, strict=True):
        if present is not None:
            present[stripe.index] = {s.column: d for s, d in zip(streams, datas) if s.kind == PRESENT}
        index_length = sum(s.length for s in streams if s.kind in INDEX_KINDS)
        body = b"".join(datas)
        footer = _plain_footer(tail, layout, encodings, streams)
        part = (parts or {}).get(stripe.index)
        rows = stripe.rows if part is None else part.rows
        stripe_infos.append(
            Message().with_fields(
                [(1, len(out)), (2, index_length), (3, len(body) - index_length), (4, len(footer)), (5, rows)]
            )
        )
        out += body + footer
        total_rows += rows
    return bytes(out + _plain_tail(tail, stripe_infos, len(out), total_rows))


class _Secrets:
    """The variant streams of a rebuild, deciphered together once every stripe has been planned: one AES
    context and one call per local key, whatever the number of stripes and streams."""

    def __init__(self, stats: ReadStats) -> None:
        self.stats = stats
        # per local key: the encrypted pieces, their (counter, offset, length), and where each clear one goes
        self._data: dict[bytes, list[bytes]] = {}
        self._pieces: dict[bytes, list[tuple[int, int, int]]] = {}
        self._sinks: dict[bytes, list[tuple[list[bytes | bytearray] | bytearray, int]]] = {}

    def add(
        self,
        key: bytes,
        datas: list[bytes | bytearray],
        raw: bytes,
        stream: StreamLocation,
        stripe: StripeInfo,
        windows: list[tuple[int, int]] | None,
    ) -> None:
        """Append ``stream`` (a variant stream of ``stripe``, whose bytes are ``raw``) to ``datas`` in clear
        once deciphered: whole, or only its ``windows`` (the rest zero)."""
        counter = stream_counter(stream.column, stream.kind, stripe.encrypt_stripe_id)
        data = self._data.setdefault(key, [])
        pieces = self._pieces.setdefault(key, [])
        sinks = self._sinks.setdefault(key, [])
        if windows is None:
            sinks.append((datas, len(datas)))
            datas.append(b"")
            data.append(raw[stream.start : stream.start + stream.length])
            pieces.append((counter, 0, stream.length))
            return
        buffer = bytearray(stream.length)
        datas.append(buffer)
        for start, stop in windows:
            end = min(stop, stream.length)
            sinks.append((buffer, start))
            data.append(raw[stream.start + start : stream.start + end])
            pieces.append((counter, start, end - start))

    def decipher(self) -> None:
        """Put every stream added in clear (still compressed) into its place."""
        for key, data in self._data.items():
            joined = b"".join(data)
            clear = CtrCipher(key).decrypt(joined, self._pieces[key])
            self.stats.bytes_decrypted += len(joined)
            position = 0
            for (sink, at), (_, _, length) in zip(self._sinks[key], self._pieces[key], strict=True):
                if isinstance(sink, bytearray):
                    sink[at : at + length] = clear[position : position + length]
                else:
                    sink[at] = clear[position : position + length]
                position += length
        self._data, self._pieces, self._sinks = {}, {}, {}


def _plain_streams(
    tail: OrcTail,
    stripe: StripeInfo,
    raw: bytes,
    owner: dict[int, VariantKeys],
    encrypted: frozenset[int],
    part: StripePart | None,
    secrets: _Secrets,
) -> tuple[StripeLayout, list[bytes], list[StreamLocation], list[bytes | bytearray]]:
    """(footer parsed, column encodings, streams kept in stripe order, their bytes) of one stripe in plain
    form; ``owner``: unlocked keys by column id, ``encrypted``: the ids of every encrypted column. Variant
    streams are handed to ``secrets``, which puts their clear bytes in place."""
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
    streams: list[StreamLocation] = []  # kept, in stripe order: index area first
    datas: list[bytes | bytearray] = []
    for stream in layout.streams:
        keys = owner.get(stream.column)
        if stream.column in encrypted and stream.kind in (BLOOM_FILTER, BLOOM_FILTER_UTF8):
            continue  # possibly built from the plaintext (ORC 2.3.0): never read it
        if keys is None and stream.variant is None:
            streams.append(stream)
            datas.append(raw[stream.start : stream.start + stream.length])
        elif keys is not None and stream.variant == keys.variant.index:
            streams.append(stream)
            windows = part.windows.get((stream.column, stream.kind)) if part else None
            secrets.add(keys.stripe_keys[stripe.index], datas, raw, stream, stripe, windows)
    return layout, encodings, streams, datas


def _plain_footer(
    tail: OrcTail, layout: StripeLayout, encodings: list[bytes], streams: list[StreamLocation]
) -> bytes:
    """The stripe footer of the plain stripe: the kept ``streams``' entries as stored, ``encodings``, the rest
    of the original footer but its encryption; stored uncompressed."""
    rest = [(2, BYTES, e) for e in encodings] + [f for f in layout.footer.fields if f[0] not in (2, 4)]
    rest.sort(key=lambda f: f[0])  # stable; the streams (field 1) come first
    return store_original(b"".join(s.field for s in streams) + encode(Message(rest)), tail.codec)


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
