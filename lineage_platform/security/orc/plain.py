"""Rebuilding an encrypted ORC file as a plain one that any ORC reader (ORC C++ via pyorc/pyarrow) decodes.

For every selected stripe, columns whose variant is unlocked take the variant's streams, decrypted (they stay
compressed: ORC compresses first, then encrypts), and the variant's column encodings; every other column keeps
its unencrypted (masked) streams. Bloom filters of encrypted columns are dropped: ORC 2.3.0 writes one built
from the plaintext into the unencrypted area. The new tail has no encryption section and no statistics
(stale masked statistics must not describe clear values). A ``StripePart`` rebuilds only a stripe's first
rows, decrypting only byte windows of its encrypted streams (see ``seek``).

Per stripe the work is the footer's own: its ~100 ``Stream`` entries are matched in C by a regular expression
(the shape ORC writers store; other shapes go through the protobuf decoder) and copied into the new footer as
stored; kept streams that lie back to back under one key (or none) are copied or deciphered as one run. The
encrypted runs of every stripe are deciphered once all stripes are planned: one AES context and one call per
local key (``crypto.CtrCipher``), not one per stream.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, BinaryIO, NamedTuple

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
_PLACEHOLDERS = {ENCRYPTED_INDEX, ENCRYPTED_DATA}  # where the variants' streams sit in each area
STREAM_KIND_NAMES = {
    0: "PRESENT", 1: "DATA", 2: "LENGTH", 3: "DICTIONARY_DATA", 4: "DICTIONARY_COUNT", 5: "SECONDARY",
    6: "ROW_INDEX", 7: "BLOOM_FILTER", 8: "BLOOM_FILTER_UTF8", 9: "ENCRYPTED_INDEX", 10: "ENCRYPTED_DATA",
}  # fmt: skip

# A footer's ``Stream`` entry as ORC writers store it: key of field 1, size, then kind, column (absent from
# the ENCRYPTED_INDEX/DATA placeholders) and length
_ENTRY = rb"\x0a([\x00-\x7f])\x08([\x00-\x7f])(?:\x10([\x80-\xff]{0,4}[\x00-\x7f]))?\x18([\x80-\xff]{0,9}[\x00-\x7f])"
_STREAM_ENTRY = re.compile(b"(%s)" % _ENTRY)  # the whole entry, then its parts
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


def read_stripe_bytes(tail: OrcTail, stripe: StripeInfo, handle: BinaryIO | None = None) -> bytes:
    """The stripe's index, data and footer bytes, as stored (read through ``handle`` when given, an open
    handle on the file, else opening it)."""
    if handle is None:
        with open(tail.path, "rb") as opened:
            return read_stripe_bytes(tail, stripe, opened)
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
    ordered = [  # (entry, variant) in stripe order
        *[(e, None) for e in plain if e[1] in INDEX_KINDS],
        *[(e, v) for v, streams in enumerate(variant_streams) for e in streams if e[1] in INDEX_KINDS],
        *[(e, None) for e in plain if e[1] not in INDEX_KINDS and e[1] not in _PLACEHOLDERS],
        *[(e, v) for v, streams in enumerate(variant_streams) for e in streams if e[1] not in INDEX_KINDS],
    ]
    starts = list(accumulate((e[2] for e, _ in ordered), initial=0))
    located = [
        StreamLocation(column, kind, start, length, variant, field)
        for ((column, kind, length, field), variant), start in zip(ordered, starts, strict=False)
    ]
    offset = starts[-1]
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
    at = 0
    for entry, size, kind, column, length in _STREAM_ENTRY.findall(data, 0, end):
        if size[0] != len(entry) - 2:  # not that shape after all: the decoder takes it from here
            end = at
            break
        at += len(entry)
        out.append(
            (
                (column[0] if len(column) == 1 else _varint(column)) if column else 0,
                kind[0],
                length[0] if len(length) == 1 else _varint(length),
                entry,
            )
        )
    rest = decode(data[end:])
    for entry in rest.all(1):
        if not isinstance(entry, bytes):
            raise SecurityError("a stream entry is not a message", hint="the file is corrupted")
        fields = varints(entry)
        out.append((fields.get(2, 0), fields.get(1, 0), fields.get(3, 0), bytes_field(1, entry)))
    return out, rest.without(1)


def _varint(data: bytes) -> int:
    return read_varint(data, 0)[0]


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
    with open(tail.path, "rb") as handle:
        for stripe in selected:
            raw = read_stripe_bytes(tail, stripe, handle)
            part = (parts or {}).get(stripe.index)
            plans.append(_plain_streams(tail, stripe, raw, owner, encrypted, part, secrets))
    secrets.decipher()
    out = bytearray(b"ORC")
    stripe_infos: list[Message] = []
    total_rows = 0
    for stripe, (layout, encodings, streams, chunks) in zip(selected, plans, strict=True):
        body = b"".join(chunks)
        if present is not None:
            present[stripe.index] = _present_streams(streams, body)
        index_length = sum(s.length for s in streams if s.kind in INDEX_KINDS)
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


def _present_streams(streams: list[StreamLocation], body: bytes) -> dict[int, bytes]:
    """The PRESENT stream of each column that has one in ``body`` (the ``streams`` back to back)."""
    found = {}
    at = 0
    for stream in streams:
        if stream.kind == PRESENT:
            found[stream.column] = body[at : at + stream.length]
        at += stream.length
    return found


class _Secrets:
    """The variant streams of a rebuild, deciphered together once every stripe has been planned: one AES
    context and one call per local key, whatever the number of stripes and streams."""

    def __init__(self, stats: ReadStats) -> None:
        self.stats = stats
        # per local key: encrypted runs of bytes, their pieces, and where each run goes in clear
        self._runs: dict[
            bytes, tuple[list[bytes], list[tuple[int, int, int]], list[tuple[Any, int, int]]]
        ] = {}

    def add(
        self,
        key: bytes,
        target: list[bytes | bytearray] | bytearray,
        at: int,
        data: bytes,
        pieces: list[tuple[int, int, int]],
    ) -> None:
        """Put ``data`` (consecutive ``pieces`` of CTR streams under ``key``: counter, offset, length), once in
        clear, at ``target[at]`` (a list of chunks) or over ``target[at : at + len(data)]`` (a bytearray)."""
        runs, all_pieces, sinks = self._runs.setdefault(key, ([], [], []))
        runs.append(data)
        all_pieces.extend(pieces)
        sinks.append((target, at, len(data)))

    def decipher(self) -> None:
        """Put every run added in clear (still compressed) into its place."""
        for key, (runs, pieces, sinks) in self._runs.items():
            joined = b"".join(runs)
            clear = CtrCipher(key).decrypt(joined, pieces)
            self.stats.bytes_decrypted += len(joined)
            position = 0
            for target, at, length in sinks:
                if isinstance(target, bytearray):
                    target[at : at + length] = clear[position : position + length]
                else:
                    target[at] = clear[position : position + length]
                position += length
        self._runs = {}


def _plain_streams(
    tail: OrcTail,
    stripe: StripeInfo,
    raw: bytes,
    owner: dict[int, VariantKeys],
    encrypted: frozenset[int],
    part: StripePart | None,
    secrets: _Secrets,
) -> tuple[StripeLayout, list[bytes], list[StreamLocation], list[bytes | bytearray]]:
    """(footer parsed, column encodings, streams kept in stripe order, their bytes in chunks) of one stripe
    in plain form; ``owner``: unlocked keys by column id, ``encrypted``: the ids of every encrypted column.
    Kept streams lying back to back in the stripe under the same key (or none) make one chunk; encrypted
    ones are handed to ``secrets``, which puts them in clear in place."""
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
    chunks: list[bytes | bytearray] = []
    run: list[StreamLocation] = []
    run_key: bytes | None = None
    for stream in layout.streams:
        keys = owner.get(stream.column)
        if stream.column in encrypted and stream.kind in (BLOOM_FILTER, BLOOM_FILTER_UTF8):
            continue  # possibly built from the plaintext (ORC 2.3.0): never read it
        if keys is None and stream.variant is None:
            key = None
        elif keys is not None and stream.variant == keys.variant.index:
            key = keys.stripe_keys[stripe.index]
        else:
            continue
        streams.append(stream)
        if run and (key != run_key or run[-1].start + run[-1].length != stream.start):
            _add_run(run, run_key, chunks, raw, stripe, secrets)
            run = []
        windows = part.windows.get((stream.column, stream.kind)) if part and key is not None else None
        if windows is None:
            run.append(stream)
            run_key = key
            continue
        _add_run(run, run_key, chunks, raw, stripe, secrets)
        run = []
        buffer = bytearray(stream.length)  # only the windows deciphered, the rest zero
        chunks.append(buffer)
        counter = stream_counter(stream.column, stream.kind, stripe.encrypt_stripe_id)
        for start, stop in windows:
            end = min(stop, stream.length)
            data = raw[stream.start + start : stream.start + end]
            secrets.add(key, buffer, start, data, [(counter, start, end - start)])  # type: ignore[arg-type]
    _add_run(run, run_key, chunks, raw, stripe, secrets)
    return layout, encodings, streams, chunks


def _add_run(
    run: list[StreamLocation],
    key: bytes | None,
    chunks: list[bytes | bytearray],
    raw: bytes,
    stripe: StripeInfo,
    secrets: _Secrets,
) -> None:
    """Append the bytes of ``run`` (streams back to back in ``raw``) to ``chunks``: as stored without a
    ``key``, else handed to ``secrets`` to decipher (one CTR stream per stream)."""
    if not run:
        return
    data = raw[run[0].start : run[-1].start + run[-1].length]
    if key is None:
        chunks.append(data)
        return
    pieces = [(stream_counter(s.column, s.kind, stripe.encrypt_stripe_id), 0, s.length) for s in run]
    chunks.append(b"")
    secrets.add(key, chunks, len(chunks) - 1, data, pieces)


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
