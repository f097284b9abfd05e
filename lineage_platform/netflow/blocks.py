"""Partition files and their block index.

A partition file is Parquet (zstd; delta-encoded timestamps, dictionary-encoded small-domain columns) whose row
groups ("blocks") are each sorted by time. The block index — per block its time range, row count, byte offset and
compressed size — comes from the Parquet footer's statistics and is kept in a small JSON sidecar next to the file, so
a query can choose blocks without opening files it will not read.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow.parquet as pq

from lineage_platform.errors import StoreCorruptError
from lineage_platform.netflow.records import SCHEMA, TIME_COLUMN

SIDECAR_SUFFIX = ".blocks.json"
WRITER_OPTIONS = {
    "compression": "zstd",
    "compression_level": 3,
    "use_dictionary": ["src_port", "dst_port", "protocol", "tcp_flags", "router"],
    "column_encoding": {"first_ts": "DELTA_BINARY_PACKED", "last_ts": "DELTA_BINARY_PACKED"},
    "write_statistics": True,
}


@dataclass(frozen=True)
class Block:
    """One row group of a partition file."""

    row_group: int
    time_min: int
    time_max: int
    rows: int
    offset: int
    compressed_bytes: int


def open_writer(path: Path) -> pq.ParquetWriter:
    """A Parquet writer with the partition-file encodings."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return pq.ParquetWriter(path, SCHEMA, **WRITER_OPTIONS)


def index_blocks(path: Path) -> list[Block]:
    """Read the footer of a partition file and write its block index sidecar."""
    metadata = pq.read_metadata(path)
    time_index = metadata.schema.to_arrow_schema().get_field_index(TIME_COLUMN)
    blocks = []
    for number in range(metadata.num_row_groups):
        group = metadata.row_group(number)
        chunk = group.column(time_index)
        stats = chunk.statistics
        if stats is None or not stats.has_min_max:
            raise StoreCorruptError(f"{path}: block {number} has no time statistics", hint="re-ingest the file")
        offset = min(group.column(i).file_offset for i in range(group.num_columns))
        blocks.append(
            Block(number, _ms(stats.min), _ms(stats.max), group.num_rows, offset, group.total_compressed_size)
        )
    sidecar(path).write_text(json.dumps([asdict(block) for block in blocks]))
    return blocks


def load_blocks(path: Path) -> list[Block]:
    """The block index of a partition file (from its sidecar; rebuilt from the footer when the sidecar is gone)."""
    try:
        return [Block(**entry) for entry in json.loads(sidecar(path).read_text())]
    except FileNotFoundError:
        return index_blocks(path)


def sidecar(path: Path) -> Path:
    """Where the block index of a partition file lives."""
    return path.with_name(path.name + SIDECAR_SUFFIX)


def _ms(value: object) -> int:
    """A footer timestamp statistic (datetime, or raw int of the file's unit) as epoch milliseconds."""
    if isinstance(value, datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        return int(round(aware.timestamp() * 1000))
    return int(value)  # type: ignore[call-overload]
