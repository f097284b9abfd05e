"""Corrupted copies of an encrypted ORC file: the regions of the file, byte flips, truncations, key damage.

``regions(path)`` maps a file written by ORC Java into named byte ranges (header, each stripe's unencrypted
and encrypted index, unencrypted and encrypted data, stripe footer, encrypted stripe statistics, metadata,
footer, PostScript); ``mutate(data, tail, spec)`` applies one mutant: ``{"kind": "flip", "at": N, "xor": X}``,
``{"kind": "truncate", "at": N}`` or ``{"kind": "key", "stripe": S | None, "variant": V, "byte": B}`` (a
flipped byte in a wrapped local key: the footer's when ``stripe`` is None, else that stripe's copy).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lineage_platform.security.orc.compression import store_original
from lineage_platform.security.orc.plain import read_stripe_bytes, read_stripe_footer
from lineage_platform.security.orc.protowire import BYTES, Message, decode, encode
from lineage_platform.security.orc.tail import OrcTail, read_tail


@dataclass(frozen=True)
class Region:
    """A named byte range ``[start, end)`` of the file; ``stripe`` when it lies in one."""

    name: str
    start: int
    end: int
    stripe: int | None = None


def regions(path: Path) -> tuple[OrcTail, list[Region]]:
    """The file's tail and its regions, in file order (empty ones left out)."""
    tail = read_tail(path)
    found = [Region("header", 0, 3)]
    for stripe in tail.stripes:
        raw = read_stripe_bytes(tail, stripe)
        layout = read_stripe_footer(tail, stripe, raw[stripe.index_length + stripe.data_length :])
        for stream in layout.streams:
            area = "index" if stream.start < stripe.index_length else "data"
            name = f"stripe {stripe.index} {'encrypted ' if stream.variant is not None else ''}{area}"
            start = stripe.offset + stream.start
            if found[-1].name == name and found[-1].end == start:
                found[-1] = Region(name, found[-1].start, start + stream.length, stripe.index)
            elif stream.length:
                found.append(Region(name, start, start + stream.length, stripe.index))
        footer_at = stripe.offset + stripe.index_length + stripe.data_length
        found.append(Region(f"stripe {stripe.index} footer", footer_at, stripe.end, stripe.index))
    ps_len = tail.file_length - 1 - _postscript_start(tail)
    footer_len, metadata_len = tail.postscript.int(1), tail.postscript.int(5)
    metadata_at = tail.file_length - 1 - ps_len - footer_len - metadata_len
    found += [
        Region("encrypted stripe statistics", tail.stripe_statistics_offset, metadata_at),
        Region("metadata", metadata_at, metadata_at + metadata_len),
        Region("footer", metadata_at + metadata_len, metadata_at + metadata_len + footer_len),
        Region("postscript", tail.file_length - 1 - ps_len, tail.file_length - 1),
        Region("postscript length", tail.file_length - 1, tail.file_length),
    ]
    return tail, [r for r in found if r.end > r.start]


def _postscript_start(tail: OrcTail) -> int:
    with open(tail.path, "rb") as handle:
        handle.seek(-1, 2)
        return tail.file_length - 1 - handle.read(1)[0]


def mutate(data: bytes, tail: OrcTail, spec: dict[str, Any]) -> bytes:
    """``data`` (the file's bytes) with the mutant ``spec`` applied."""
    if spec["kind"] == "flip":
        out = bytearray(data)
        out[spec["at"]] ^= spec["xor"]
        return bytes(out)
    if spec["kind"] == "truncate":
        return data[: spec["at"]]
    return _with_footer(data, tail, _damaged_key(tail.footer, spec))


def _damaged_key(footer: Message, spec: dict[str, Any]) -> Message:
    """The footer with one byte of a wrapped key flipped."""

    def flip(key: bytes) -> bytes:
        return key[: spec["byte"]] + bytes([key[spec["byte"]] ^ 0x01]) + key[spec["byte"] + 1 :]

    fields = list(footer.fields)
    if spec["stripe"] is None:  # EncryptionVariant.encrypted_key (Encryption = footer field 10, variants = 3)
        at = next(i for i, f in enumerate(fields) if f[0] == 10)
        encryption = decode(fields[at][2])
        variants = [i for i, f in enumerate(encryption.fields) if f[0] == 3]
        position = variants[spec["variant"]]
        variant = decode(encryption.fields[position][2])
        variant = _replace_bytes(variant, 3, 0, flip)
        encryption.fields[position] = (3, BYTES, encode(variant))
        fields[at] = (10, BYTES, encode(encryption))
    else:  # StripeInformation.encrypted_local_keys (stripes = footer field 3, keys = 7)
        stripes = [i for i, f in enumerate(fields) if f[0] == 3]
        at = stripes[spec["stripe"]]
        stripe = _replace_bytes(decode(fields[at][2]), 7, spec["variant"], flip)
        fields[at] = (3, BYTES, encode(stripe))
    return Message(fields)


def _replace_bytes(message: Message, number: int, occurrence: int, change: Any) -> Message:
    positions = [i for i, f in enumerate(message.fields) if f[0] == number]
    fields = list(message.fields)
    index = positions[occurrence]
    fields[index] = (number, BYTES, change(fields[index][2]))
    return Message(fields)


def _with_footer(data: bytes, tail: OrcTail, footer: Message) -> bytes:
    """``data`` with its footer replaced (stored as ORC "original" chunks) and the PostScript updated."""
    ps_start = _postscript_start(tail)
    footer_start = ps_start - tail.postscript.int(1)
    footer_bytes = store_original(encode(footer), tail.codec)
    postscript = Message([(1, 0, len(footer_bytes)), *(f for f in tail.postscript.fields if f[0] != 1)])
    postscript_bytes = encode(postscript)
    return data[:footer_start] + footer_bytes + postscript_bytes + bytes([len(postscript_bytes)])
