"""Rebuilding an encrypted ORC file as a plain one that any ORC reader (ORC C++ via pyorc/pyarrow) decodes.

For every selected stripe, columns whose variant is unlocked take the variant's streams, decrypted (they stay
compressed: ORC compresses first, then encrypts), and the variant's column encodings; every other column keeps
its unencrypted (masked) streams. Bloom filters of encrypted columns are dropped: ORC 2.3.0 writes one built
from the plaintext into the unencrypted area. The new tail has no encryption section and no statistics
(stale masked statistics must not describe clear values). A ``StripePart`` rebuilds only a stripe's first
rows, decrypting only byte windows of its encrypted streams (see ``seek``).

Per stripe the work is the footer's own: its ~100 ``Stream`` entries are matched in C by a regular expression
(the shape ORC writers store; other shapes go through the protobuf decoder) and copied into the new footer as
stored. What a plain stripe keeps is decided once per footer shape (``_plan``) and replayed with each stripe's
stream lengths (``_replay``): kept streams that lie back to back under one key (or none) are copied or
deciphered as one run. The encrypted runs of every stripe are deciphered once all stripes are planned: one AES
context and one call per local key (``crypto.CtrCipher``), not one per stream.
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
# the ENCRYPTED_INDEX/DATA placeholders) and length; groups: the whole entry, size, kind, column, length
_STREAM_ENTRY = re.compile(
    rb"(\x0a([\x00-\x7f])\x08([\x00-\x7f])(?:\x10([\x80-\xff]{0,4}[\x00-\x7f]))?\x18([\x80-\xff]{0,9}[\x00-\x7f]))"
)
# A run of such entries, without groups (faster): where the leading entries of a message end
_STREAM_RUN = re.compile(
    rb"(?:\x0a[\x00-\x7f]\x08[\x00-\x7f](?:\x10[\x80-\xff]{0,4}[\x00-\x7f])?\x18[\x80-\xff]{0,9}[\x00-\x7f])*"
)


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
    entries = _footer_entries(tail, stripe, raw_footer)
    order = _stripe_order(entries.lists)
    streams = [entries.lists[list_][i] for list_, i in order]
    starts = _starts(stripe, [length for _, _, length, _ in streams])
    located = [
        StreamLocation(column, kind, start, length, list_ - 1 if list_ else None, field)
        for (column, kind, length, field), start, (list_, _) in zip(streams, starts, order, strict=False)
    ]
    encodings = [v for v in entries.footer.all(2) if isinstance(v, bytes)]
    variant_encodings = {
        i: [v for v in m.all(2) if isinstance(v, bytes)] for i, m in enumerate(entries.variants)
    }
    return StripeLayout(entries.footer, located, encodings, variant_encodings)


class _FooterEntries(NamedTuple):
    """A stripe footer's ``Stream`` entries as (column, kind, length, field as stored), in footer order: the
    unencrypted list first, then each variant's; and the other fields of the footer and of each variant."""

    lists: list[list[tuple[int, int, int, bytes]]]
    footer: Message
    variants: list[Message]


def _footer_entries(tail: OrcTail, stripe: StripeInfo, raw_footer: bytes) -> _FooterEntries:
    what = f"stripe {stripe.index} footer"
    try:
        plain, footer = stream_entries(decompress(raw_footer, tail.codec, tail.block_size, what))
        variants = [stream_entries(v) for v in footer.all(4) if isinstance(v, bytes)]
    except SecurityError as error:
        if error.message.startswith(what):
            raise
        raise SecurityError(f"{what}: {error.message}", hint=error.hint) from error
    return _FooterEntries([plain, *(streams for streams, _ in variants)], footer, [m for _, m in variants])


def _stripe_order(lists: list[list[tuple[int, int, int, bytes]]]) -> list[tuple[int, int]]:
    """(list, index in it) of every stream in stripe order: the index area, then the data area; in each the
    unencrypted streams (list 0, placeholders left out), then each variant's (list 1 onwards)."""
    plain, variants = lists[0], list(enumerate(lists[1:], 1))
    return [
        *[(0, i) for i, e in enumerate(plain) if e[1] in INDEX_KINDS],
        *[(v, i) for v, streams in variants for i, e in enumerate(streams) if e[1] in INDEX_KINDS],
        *[(0, i) for i, e in enumerate(plain) if e[1] not in INDEX_KINDS and e[1] not in _PLACEHOLDERS],
        *[(v, i) for v, streams in variants for i, e in enumerate(streams) if e[1] not in INDEX_KINDS],
    ]


def _starts(stripe: StripeInfo, lengths: list[int]) -> list[int]:
    """Where each stream of ``lengths`` (in stripe order) starts, and where the last ends; SecurityError when
    they do not cover the stripe's index and data."""
    starts = list(accumulate(lengths, initial=0))
    if starts[-1] != stripe.index_length + stripe.data_length:
        raise SecurityError(
            f"stripe {stripe.index}: streams cover {starts[-1]} bytes, the stripe holds {stripe.index_length + stripe.data_length}",
            hint="the file is corrupted",
        )
    return starts


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
    plans: dict[tuple[tuple[tuple[int, int], ...], ...], _Plan] = {}  # by footer shape, for whole stripes
    rebuilt = []
    with open(tail.path, "rb") as handle:
        for stripe in selected:
            raw = read_stripe_bytes(tail, stripe, handle)
            entries = _footer_entries(tail, stripe, raw[stripe.index_length + stripe.data_length :])
            part = (parts or {}).get(stripe.index)
            shape = tuple(tuple(e[:2] for e in streams) for streams in entries.lists)
            plan = plans.get(shape) if part is None else None
            if plan is None:
                plan = _plan(entries.lists, owner, encrypted, part)
                if part is None:
                    plans[shape] = plan
            rebuilt.append(_replay(tail, plan, entries, stripe, raw, owner, secrets))
    secrets.decipher()
    out = bytearray(b"ORC")
    stripe_infos: list[Message] = []
    total_rows = 0
    for stripe, (chunks, footer, index_length, present_at) in zip(selected, rebuilt, strict=True):
        start = len(out)
        for chunk in chunks:
            out += chunk
        if present is not None:
            present[stripe.index] = {column: bytes(out[start + a : start + b]) for column, a, b in present_at}
        part = (parts or {}).get(stripe.index)
        rows = stripe.rows if part is None else part.rows
        body_length = len(out) - start
        stripe_infos.append(
            Message().with_fields(
                [(1, start), (2, index_length), (3, body_length - index_length), (4, len(footer)), (5, rows)]
            )
        )
        out += footer
        total_rows += rows
    out += _plain_tail(tail, stripe_infos, len(out), total_rows)
    return bytes(out)


class _Plan(NamedTuple):
    """How the stripes of one footer shape (the columns and kinds of its streams, list by list) are rebuilt:
    decided once, replayed with each stripe's stream lengths. Positions count streams in stripe order."""

    order: list[tuple[int, int]]  # (list, index in it) of each position
    kept: list[int]  # positions kept, in order
    kept_entries: list[tuple[int, int]]  # (list, index in it) of each kept position
    index_kept: list[int]  # the kept positions in the index area
    present_kept: list[tuple[int, int]]  # (rank among the kept, column) of each kept PRESENT stream
    runs: list[tuple[int, int, int | None, list[tuple[int, int]] | None]]  # first, end, variant root, windows
    counters: dict[int, int]  # position -> first counter block of an encrypted stream, but the stripe id
    replaced: list[tuple[int, int, int]]  # (column, variant, index among its encodings): unlocked encodings


def _plan(
    lists: list[list[tuple[int, int, int, bytes]]],
    owner: dict[int, VariantKeys],
    encrypted: frozenset[int],
    part: StripePart | None,
) -> _Plan:
    """Which streams a plain stripe keeps, and in which runs (back to back, under one key or none, or one
    stream of which only ``part``'s windows are deciphered); ``owner``: unlocked keys by column id,
    ``encrypted``: the ids of every encrypted column. Unlocked columns take their variant's streams and
    encodings, every other column its unencrypted (masked) ones; bloom filters of encrypted columns go."""
    order = _stripe_order(lists)
    kept: list[int] = []
    runs: list[tuple[int, int, int | None, list[tuple[int, int]] | None]] = []
    counters: dict[int, int] = {}
    for position, (list_, i) in enumerate(order):
        column, kind = lists[list_][i][:2]
        keys = owner.get(column)
        if column in encrypted and kind in (BLOOM_FILTER, BLOOM_FILTER_UTF8):
            continue  # possibly built from the plaintext (ORC 2.3.0): never read it
        if keys is None and list_ == 0:
            root = None
        elif keys is not None and list_ - 1 == keys.variant.index:
            root = keys.variant.root
            counters[position] = stream_counter(column, kind, 0)
        else:
            continue
        kept.append(position)
        windows = part.windows.get((column, kind)) if part and root is not None else None
        if (
            windows is None
            and runs
            and runs[-1][1] == position
            and runs[-1][2] == root
            and runs[-1][3] is None
        ):
            runs[-1] = (runs[-1][0], position + 1, root, None)
        else:
            runs.append((position, position + 1, root, windows))
    replaced = [(c, keys.variant.index, c - keys.variant.root) for c, keys in owner.items()]
    kept_entries = [order[p] for p in kept]
    kinds = [lists[list_][i][1] for list_, i in kept_entries]
    index_kept = [p for p, kind in zip(kept, kinds, strict=True) if kind in INDEX_KINDS]
    present_kept = [
        (k, lists[list_][i][0]) for k, (list_, i) in enumerate(kept_entries) if kinds[k] == PRESENT
    ]
    return _Plan(order, kept, kept_entries, index_kept, present_kept, runs, counters, replaced)


def _replay(
    tail: OrcTail,
    plan: _Plan,
    entries: _FooterEntries,
    stripe: StripeInfo,
    raw: bytes,
    owner: dict[int, VariantKeys],
    secrets: _Secrets,
) -> tuple[list[bytes | bytearray], bytes, int, list[tuple[int, int, int]]]:
    """(chunks of the plain stripe's index and data, its footer, the index length, where each kept PRESENT
    stream lies in the chunks joined: column, start, end) of ``stripe`` (its bytes ``raw``) by ``plan``;
    encrypted chunks are handed to ``secrets``, which puts them in clear in place."""
    lengths = [entries.lists[list_][i][2] for list_, i in plan.order]
    starts = _starts(stripe, lengths)
    stripe_id = stream_counter(0, 0, stripe.encrypt_stripe_id)
    keys_by_root = {keys.variant.root: keys for keys in owner.values()}
    chunks: list[bytes | bytearray] = []
    for first, end, root, windows in plan.runs:
        data = raw[starts[first] : starts[end]]
        if root is None:
            chunks.append(data)
            continue
        key = keys_by_root[root].stripe_keys[stripe.index]
        if windows is None:
            chunks.append(b"")
            pieces = [(plan.counters[p] | stripe_id, 0, lengths[p]) for p in range(first, end)]
            secrets.add(key, chunks, len(chunks) - 1, data, pieces)
            continue
        buffer = bytearray(len(data))  # only the windows deciphered, the rest zero
        chunks.append(buffer)
        for start, stop in windows:
            stop = min(stop, len(data))
            secrets.add(
                key,
                buffer,
                start,
                data[start:stop],
                [(plan.counters[first] | stripe_id, start, stop - start)],
            )
    index_length = sum(lengths[p] for p in plan.index_kept)
    present_at = []
    if plan.present_kept:
        at = list(accumulate((lengths[p] for p in plan.kept), initial=0))
        present_at = [(column, at[k], at[k + 1]) for k, column in plan.present_kept]
    fields = [entries.lists[list_][i][3] for list_, i in plan.kept_entries]
    return chunks, _plain_footer(tail, stripe, entries, plan, fields), index_length, present_at


def _plain_footer(
    tail: OrcTail, stripe: StripeInfo, entries: _FooterEntries, plan: _Plan, fields: list[bytes]
) -> bytes:
    """The stripe footer of the plain stripe: the kept streams' ``fields`` as stored, the column encodings
    (the variant's for unlocked columns), the rest of the original footer but its encryption; stored
    uncompressed."""
    encodings = [v for v in entries.footer.all(2) if isinstance(v, bytes)]
    for column, variant, i in plan.replaced:
        variant_encodings = entries.variants[variant].all(2) if variant < len(entries.variants) else []
        if (
            i >= len(variant_encodings)
            or column >= len(encodings)
            or not isinstance(variant_encodings[i], bytes)
        ):
            raise SecurityError(
                f"stripe {stripe.index}: no encoding for column {tail.columns[column].name}",
                hint="the file is corrupted",
            )
        encodings[column] = variant_encodings[i]  # type: ignore[assignment]
    rest = [(2, BYTES, e) for e in encodings] + [f for f in entries.footer.fields if f[0] not in (2, 4)]
    rest.sort(key=lambda f: f[0])  # stable; the streams (field 1) come first
    return store_original(b"".join(fields) + encode(Message(rest)), tail.codec)


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
