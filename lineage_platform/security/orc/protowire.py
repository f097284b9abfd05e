"""A small protobuf wire-format codec: enough to read and rewrite ORC's footer messages.

A message decodes to :class:`Message`, an ordered list of ``(field number, wire type, value)``; varints stay
integers, length-delimited fields stay bytes (decode them again for sub-messages), fixed fields stay raw.
Unknown fields survive a decode/encode round trip, so rewriting a footer keeps what we do not understand.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

from lineage_platform.errors import SecurityError

VARINT, FIXED64, BYTES, FIXED32 = 0, 1, 2, 5
_ONE_BYTE = [bytes([value]) for value in range(0x80)]


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """The unsigned varint at ``pos`` and the position after it."""
    if pos < len(data) and data[pos] < 0x80:  # most keys, lengths and small values: one byte
        return data[pos], pos + 1
    result = shift = 0
    while True:
        if pos >= len(data):
            raise SecurityError("truncated protobuf varint", hint="the ORC file is truncated or corrupted")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def encode_varint(value: int) -> bytes:
    """``value`` (non-negative) as a protobuf varint."""
    if value <= 0x7F:
        return _ONE_BYTE[value]
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def zigzag(value: int) -> int:
    """Decode a zigzag-encoded (sint32/sint64) varint."""
    return (value >> 1) ^ -(value & 1)


@dataclass
class Message:
    """One decoded protobuf message: its fields in wire order."""

    fields: list[tuple[int, int, int | bytes]] = field(default_factory=list)

    def all(self, number: int) -> list[int | bytes]:
        """Every value of field ``number`` (repeated fields), in order."""
        return [value for num, _, value in self.fields if num == number]

    def get(self, number: int, default: int | bytes | None = None) -> int | bytes | None:
        """The last value of field ``number`` (protobuf semantics for optional fields)."""
        for num, _, value in reversed(self.fields):
            if num == number:
                return value
        return default

    def int(self, number: int, default: int = 0) -> int:
        """An integer field."""
        value = self.get(number)
        return default if value is None else int(value)  # type: ignore[arg-type]

    def sint(self, number: int) -> int | None:
        """A zigzag-encoded (sint32/sint64) field, or None when absent."""
        value = self.get(number)
        return zigzag(value) if isinstance(value, int) else None

    def optional_text(self, number: int) -> str | None:
        """A string field, or None when absent."""
        return self.text(number) if self.get(number) is not None else None

    def bytes(self, number: int) -> bytes:
        """A bytes/string field (empty when absent)."""
        value = self.get(number)
        return value if isinstance(value, bytes) else b""

    def text(self, number: int) -> str:
        """A string field."""
        return self.bytes(number).decode("utf-8", "replace")

    def double(self, number: int) -> float | None:
        """A ``double`` field, or None."""
        value = self.get(number)
        return struct.unpack("<d", value)[0] if isinstance(value, bytes) else None

    def messages(self, number: int) -> list[Message]:
        """Every sub-message in field ``number``."""
        return [decode(value) for value in self.all(number) if isinstance(value, bytes)]

    def message(self, number: int) -> Message | None:
        """The sub-message in field ``number``, or None."""
        value = self.get(number)
        return decode(value) if isinstance(value, bytes) else None

    def packed(self, number: int) -> list[int]:
        """A repeated varint field, packed or not."""
        out: list[int] = []
        for value in self.all(number):
            if isinstance(value, int):
                out.append(value)
                continue
            pos = 0
            while pos < len(value):
                item, pos = read_varint(value, pos)
                out.append(item)
        return out

    def without(self, *numbers: int) -> Message:
        """A copy without the given fields."""
        return Message([f for f in self.fields if f[0] not in numbers])

    def with_fields(self, items: Iterable[tuple[int, int | bytes]]) -> Message:
        """A copy with extra fields appended (ints as varints, bytes as length-delimited)."""
        extra = [(num, VARINT if isinstance(value, int) else BYTES, value) for num, value in items]
        return Message(self.fields + extra)


def decode(data: bytes) -> Message:
    """Parse one message; raises SecurityError on malformed input."""
    fields: list[tuple[int, int, int | bytes]] = []
    pos, end = 0, len(data)
    while pos < end:
        key = data[pos]
        if key < 0x80:  # fields 1-15: one-byte keys, inline
            pos += 1
        else:
            key, pos = read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == VARINT:
            if pos < end and data[pos] < 0x80:  # one-byte value, inline: most fields of ORC's footers
                fields.append((number, wire, data[pos]))
                pos += 1
                continue
            value, pos = read_varint(data, pos)
            fields.append((number, wire, value))
            continue
        if wire == BYTES:
            length, pos = read_varint(data, pos)
            size = length
        elif wire in (FIXED64, FIXED32):
            size = 8 if wire == FIXED64 else 4
        else:
            raise SecurityError(
                f"unsupported protobuf wire type {wire}", hint="the ORC metadata is corrupted"
            )
        if pos + size > end:
            raise SecurityError("truncated protobuf field", hint="the ORC file is truncated or corrupted")
        fields.append((number, wire, bytes(data[pos : pos + size])))
        pos += size
    return Message(fields)


def varints(data: bytes) -> dict[int, int]:
    """The fields of a message made of varints only (ORC's ``Stream``): field number -> value, the last value
    winning as in protobuf; no ``Message`` is built. SecurityError on another wire type or a truncated field."""
    fields: dict[int, int] = {}
    pos, end = 0, len(data)
    while pos < end:
        key = data[pos]
        if key < 0x80:  # fields 1-15: one-byte keys, inline
            pos += 1
        else:
            key, pos = read_varint(data, pos)
        if key & 7 != VARINT:
            raise SecurityError(
                f"field {key >> 3} has wire type {key & 7} where a varint belongs",
                hint="the ORC metadata is corrupted",
            )
        if pos < end and data[pos] < 0x80:  # one-byte value, inline
            fields[key >> 3] = data[pos]
            pos += 1
        else:
            fields[key >> 3], pos = read_varint(data, pos)
    return fields


def bytes_field(number: int, value: bytes) -> bytes:
    """One length-delimited field (key, length, ``value``) as stored."""
    return encode_varint(number << 3 | BYTES) + encode_varint(len(value)) + value


def encode(message: Message) -> bytes:
    """Serialise ``message`` (fields in their current order)."""
    out = bytearray()
    for number, wire, value in message.fields:
        if wire == BYTES:
            out += bytes_field(number, value)  # type: ignore[arg-type]
            continue
        out += encode_varint(number << 3 | wire)
        if wire == VARINT:
            out += encode_varint(int(value))  # type: ignore[arg-type]
        else:
            out += value  # type: ignore[operator]
    return bytes(out)
