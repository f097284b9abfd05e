"""The ORC file tail: PostScript, Footer, Metadata and the column-encryption description.

Field numbers are those of ``orc_proto.proto`` (apache/orc-format). Only what the reader needs is named;
the raw messages stay available for rewriting.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import BinaryIO

from lineage_platform.errors import SecurityError
from lineage_platform.security.orc.compression import CODEC_NAMES, decompress
from lineage_platform.security.orc.protowire import Message, decode

TYPE_KINDS = [
    "boolean",
    "tinyint",
    "smallint",
    "int",
    "bigint",
    "float",
    "double",
    "string",
    "binary",
    "timestamp",
    "array",
    "map",
    "struct",
    "uniontype",
    "decimal",
    "date",
    "varchar",
    "char",
    "timestamp_instant",
    "geometry",
]
COMPOUND = {"array", "map", "struct", "uniontype"}


@dataclass(frozen=True)
class Column:
    """One node of the ORC type tree (column ids are pre-order, 0 = the root struct)."""

    id: int
    name: str  # dotted path from the root; list/map children are ``_elem``, ``_key``, ``_value``
    kind: str
    children: tuple[int, ...]
    last_id: int  # the largest id in this column's subtree
    precision: int = 0
    scale: int = 0
    length: int = 0

    def type_text(self, columns: list[Column]) -> str:
        """Hive-style type text (``struct<a:int>``, ``decimal(10,2)``...)."""
        if self.kind == "decimal":
            return f"decimal({self.precision},{self.scale})"
        if self.kind in ("varchar", "char"):
            return f"{self.kind}({self.length})"
        if self.kind == "struct":
            inner = ",".join(
                f"{columns[c].name.rpartition('.')[2]}:{columns[c].type_text(columns)}" for c in self.children
            )
            return f"struct<{inner}>"
        if self.kind in COMPOUND:
            return f"{self.kind}<{','.join(columns[c].type_text(columns) for c in self.children)}>"
        return self.kind


@dataclass(frozen=True)
class StripeInfo:
    """Where a stripe sits, how many rows it holds and its encryption stripe id (1-based, inherited)."""

    index: int
    offset: int
    index_length: int
    data_length: int
    footer_length: int
    rows: int
    first_row: int
    encrypt_stripe_id: int
    encrypted_local_keys: tuple[bytes, ...]  # per variant; inherited from the previous stripe when absent

    @property
    def end(self) -> int:
        """File offset after the stripe footer."""
        return self.offset + self.index_length + self.data_length + self.footer_length


@dataclass(frozen=True)
class Variant:
    """One encrypted column subtree (root..last_id) under one master key."""

    index: int
    root: int
    last_id: int
    key_name: str
    key_version: int
    algorithm: int
    encrypted_key: bytes
    stripe_statistics: tuple[tuple[int, int], ...]  # (column, length) of each encrypted stripe-stats stream
    file_statistics: bytes

    def covers(self, column: int) -> bool:
        """Whether ``column`` lies in this variant's subtree."""
        return self.root <= column <= self.last_id


@dataclass(frozen=True)
class Mask:
    """A data mask as the writer recorded it."""

    name: str
    parameters: tuple[str, ...]
    columns: tuple[int, ...]


@dataclass
class OrcTail:
    """Everything in the file tail, parsed."""

    path: Path
    file_length: int
    postscript: Message
    footer: Message
    metadata: bytes  # the Metadata message, decompressed
    codec: int
    block_size: int
    columns: list[Column]
    stripes: list[StripeInfo]
    variants: list[Variant] = field(default_factory=list)
    masks: list[Mask] = field(default_factory=list)
    stripe_statistics_offset: int = 0

    @property
    def codec_name(self) -> str:
        """The compression codec's name."""
        return CODEC_NAMES.get(self.codec, str(self.codec))

    @property
    def rows(self) -> int:
        """Rows in the file."""
        return self.footer.int(6)

    @property
    def row_index_stride(self) -> int:
        """Rows per row group (ORC's default 10,000 when the footer does not say)."""
        return self.footer.int(8) or 10_000

    @cached_property
    def _by_name(self) -> dict[str, Column]:
        """Columns by dotted path (the root struct, which has no name of its own, left out)."""
        return {c.name: c for c in reversed(self.columns) if c.id}  # the first of equal names wins

    def variant_of(self, column: int) -> Variant | None:
        """The encryption variant holding ``column``, if any."""
        return next((v for v in self.variants if v.covers(column)), None)

    def column_named(self, name: str) -> Column:
        """The column with dotted path ``name``; SecurityError naming the known columns otherwise."""
        column = self._by_name.get(name)
        if column is not None:
            return column
        known = ", ".join(c.name for c in self.columns if c.id and "." not in c.name)
        raise SecurityError(f"{self.path}: no column {name!r}", hint=f"columns: {known}")


def read_tail(path: str | Path) -> OrcTail:
    """Parse the tail of the ORC file at ``path``; SecurityError for anything that is not a sound ORC file."""
    path = Path(path)
    with open(path, "rb") as handle:
        handle.seek(0, 2)
        length = handle.tell()
        if length < 4:
            raise SecurityError(f"{path}: too short to be an ORC file", hint="the file is truncated")
        handle.seek(max(0, length - 16 * 1024))
        tail = handle.read()
        try:
            return _parse(path, length, handle, tail)
        except SecurityError as error:
            raise SecurityError(
                f"{path}: {error.message}", hint=error.hint or "the file is truncated or corrupted"
            ) from error


def _parse(path: Path, length: int, handle: BinaryIO, tail: bytes) -> OrcTail:
    ps_len = tail[-1]
    postscript = decode(tail[-1 - ps_len : -1])
    if postscript.bytes(8000) != b"ORC":
        raise SecurityError(
            "not an ORC file (no ORC magic in the PostScript)", hint="the file is truncated or not ORC"
        )
    codec, block_size = postscript.int(2), postscript.int(3, 256 * 1024)
    footer_len, metadata_len = postscript.int(1), postscript.int(5)
    stats_len = postscript.int(7)
    need = 1 + ps_len + footer_len + metadata_len
    if need > length:
        raise SecurityError("the tail lengths exceed the file", hint="the file is truncated")
    if need > len(tail):
        handle.seek(length - need)
        tail = handle.read(need)
    footer_end = len(tail) - 1 - ps_len
    footer = decode(decompress(tail[footer_end - footer_len : footer_end], codec, block_size, "file footer"))
    metadata_raw = tail[footer_end - footer_len - metadata_len : footer_end - footer_len]
    metadata = decompress(metadata_raw, codec, block_size, "metadata")
    columns = _columns(footer.messages(4))
    tail_obj = OrcTail(
        path=path,
        file_length=length,
        postscript=postscript,
        footer=footer,
        metadata=metadata,
        codec=codec,
        block_size=block_size,
        columns=columns,
        stripes=[],
        stripe_statistics_offset=length - need - stats_len,
    )
    encryption = footer.message(10)
    variants_count = len(encryption.all(3)) if encryption else 0
    tail_obj.stripes = _stripes(footer.messages(3), variants_count, length)
    if encryption is not None:
        tail_obj.variants, tail_obj.masks = _encryption(encryption, columns)
    return tail_obj


def _columns(types: list[Message]) -> list[Column]:
    if not types:
        raise SecurityError("the footer lists no types", hint="the file is corrupted")
    names: dict[int, str] = {0: ""}
    out: list[Column] = []
    for column_id, message in enumerate(types):
        kind_no = message.int(1)
        kind = TYPE_KINDS[kind_no] if kind_no < len(TYPE_KINDS) else f"kind{kind_no}"
        children = tuple(message.packed(2))
        field_names = [v.decode() for v in message.all(3) if isinstance(v, bytes)]
        prefix = names.get(column_id, f"_col{column_id}")
        labels = (
            field_names if kind == "struct" else {"array": ["_elem"], "map": ["_key", "_value"]}.get(kind, [])
        )
        for position, child in enumerate(children):
            label = labels[position] if position < len(labels) else f"_{position}"
            names[child] = f"{prefix}.{label}" if prefix else label
        out.append(
            Column(
                column_id, prefix, kind, children, column_id, message.int(5), message.int(6), message.int(4)
            )
        )
    return [_with_last_id(column, out) for column in out]


def _with_last_id(column: Column, columns: list[Column]) -> Column:
    last = column.id
    while columns[last].children:
        last = columns[last].children[-1]
    return Column(
        column.id,
        column.name,
        column.kind,
        column.children,
        last,
        column.precision,
        column.scale,
        column.length,
    )


def _stripes(messages: list[Message], variants: int, file_length: int) -> list[StripeInfo]:
    out: list[StripeInfo] = []
    stripe_id, keys, first_row = 0, (), 0
    for index, message in enumerate(messages):
        stripe_id = message.int(6) or stripe_id + 1
        local = tuple(v for v in message.all(7) if isinstance(v, bytes))
        keys = local or keys
        if variants and len(keys) != variants:
            raise SecurityError(
                f"stripe {index} lists {len(keys)} local keys for {variants} encryption variants"
            )
        info = StripeInfo(
            index,
            message.int(1),
            message.int(2),
            message.int(3),
            message.int(4),
            message.int(5),
            first_row,
            stripe_id,
            keys,
        )
        if info.end > file_length:
            raise SecurityError(
                f"stripe {index} ends beyond the end of the file", hint="the file is truncated"
            )
        first_row += info.rows
        out.append(info)
    return out


def _encryption(encryption: Message, columns: list[Column]) -> tuple[list[Variant], list[Mask]]:
    keys = [(k.text(1), k.int(2), k.int(3)) for k in encryption.messages(2)]
    variants = []
    for index, message in enumerate(encryption.messages(3)):
        root, key_index = message.int(1), message.int(2)
        if root >= len(columns) or key_index >= len(keys):
            raise SecurityError(f"encryption variant {index} points at a missing column or key")
        name, version, algorithm = keys[key_index]
        streams = tuple((s.int(2), s.int(3)) for s in message.messages(4))
        variants.append(
            Variant(
                index,
                root,
                columns[root].last_id,
                name,
                version,
                algorithm,
                message.bytes(3),
                streams,
                message.bytes(5),
            )
        )
    masks = [
        Mask(m.text(1), tuple(p.decode() for p in m.all(2) if isinstance(p, bytes)), tuple(m.packed(3)))
        for m in encryption.messages(1)
    ]
    return variants, masks
