"""Partition files and their block index.

A partition file is Parquet (zstd; delta-encoded timestamps, dictionary-encoded addresses, counts and small-domain
columns; Bloom filters on the clustering attributes) whose row groups ("blocks") each hold one stretch of arrival
time, sorted inside by the clustering attributes, then time (Arrow path; Spark's files are time-sorted throughout).
The block index — per block its time range, row count, byte offset and compressed size — comes from the Parquet
footer's statistics (handed over by the writer that just closed the file, or read back) and is kept in a small JSON
sidecar next to the file, so a query can choose blocks without opening files it will not read.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from lineage_platform.errors import StoreCorruptError
from lineage_platform.netflow.records import SCHEMA, TIME_COLUMN

SIDECAR_SUFFIX = ".blocks.json"
# Chosen by measurement on generated backbone traffic (benchmarks/bench_netflow.py --ingest-only): dictionaries pay
# on addresses (hosts repeat within an hour and a cell), packet and byte counts and the small-domain columns, not on
# ports (ephemeral ports overflow the dictionary and fall back to plain); zstd level 1 costs +0.05 B/record against
# level 3. Together: 15.4 -> 13.1 B/record and a ~1.3x faster writer than zstd 3 with dictionaries on the ports.
WRITER_OPTIONS = {
    "compression": "zstd",
    "compression_level": 1,
    "use_dictionary": ["src_ip", "dst_ip", "packets", "bytes", "protocol", "tcp_flags", "router"],
    "column_encoding": {"first_ts": "DELTA_BINARY_PACKED", "last_ts": "DELTA_BINARY_PACKED"},
    "write_statistics": True,
}
# A Bloom filter per block on each clustering attribute: a block holding none of a point query's addresses is skipped
# without decoding it (DuckDB checks them for equality and IN filters; its own writer adds them too). Sized for the
# distinct values of a ~16-30 k record block: +3.5 % bytes at 1M records, 15-35 % less CPU for point and single-address
# queries (benchmarks/bench_netflow.py data, 2026-11-25).
BLOOM_FILTER = {"ndv": 8192, "fpp": 0.05}


@dataclass(frozen=True)
class Block:
    """One row group of a partition file: time range, rows, where it starts, compressed bytes per column."""

    row_group: int
    time_min: int
    time_max: int
    rows: int
    offset: int
    column_bytes: dict[str, int]

    def bytes_of(self, columns: list[str]) -> int:
        """Compressed bytes a reader of these columns fetches from this block."""
        return sum(self.column_bytes.get(name, 0) for name in columns)


@dataclass
class PartitionFile:
    """What one run wrote into one partition: its file and the statistics the catalog keeps."""

    bucket_ms: int
    cell: int
    path: Path
    records: int = 0
    bytes: int = 0
    time_min: int = np.iinfo(np.int64).max
    time_max: int = np.iinfo(np.int64).min
    bounds: dict[str, tuple[int, int]] = field(default_factory=dict)

    def observe(self, block: pa.Table, attributes: tuple[str, ...]) -> None:
        """Widen the statistics by one block."""
        self.records += block.num_rows
        times = pc.min_max(block.column(TIME_COLUMN).cast(pa.int64()))
        self.time_min = min(self.time_min, times["min"].as_py())
        self.time_max = max(self.time_max, times["max"].as_py())
        for name in attributes:
            values = pc.min_max(block.column(name))
            low, high = self.bounds.get(name, (values["min"].as_py(), values["max"].as_py()))
            self.bounds[name] = (min(low, values["min"].as_py()), max(high, values["max"].as_py()))


def describe_file(path: Path, bucket_ms: int, cell: int, attributes: tuple[str, ...]) -> PartitionFile:
    """Statistics of a partition file written elsewhere (e.g. by Spark), from its footer alone."""
    metadata = pq.read_metadata(path)
    names = metadata.schema.to_arrow_schema().names
    item = PartitionFile(bucket_ms, cell, path, records=metadata.num_rows, bytes=path.stat().st_size)
    for number in range(metadata.num_row_groups):
        group = metadata.row_group(number)
        for name in (TIME_COLUMN, *attributes):
            stats = group.column(names.index(name)).statistics
            low, high = (
                (_ms(stats.min), _ms(stats.max)) if name == TIME_COLUMN else (int(stats.min), int(stats.max))
            )
            if name == TIME_COLUMN:
                item.time_min, item.time_max = min(item.time_min, low), max(item.time_max, high)
            else:
                old = item.bounds.get(name, (low, high))
                item.bounds[name] = (min(old[0], low), max(old[1], high))
    return item


def open_writer(path: Path, attributes: tuple[str, ...] = ()) -> pq.ParquetWriter:
    """A Parquet writer with the partition-file encodings and Bloom filters on the clustering ``attributes``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    blooms = {name: BLOOM_FILTER for name in attributes}
    return pq.ParquetWriter(path, SCHEMA, **WRITER_OPTIONS, bloom_filter_options=blooms or None)


@dataclass(frozen=True)
class BlockIndex:
    """The blocks of a partition file, and a signature of its physical schema (files written by different engines
    differ, e.g. Spark has no unsigned types, and a reader of several files must then unify them)."""

    schema: str
    blocks: list[Block]


def index_blocks(path: Path, metadata: pq.FileMetaData | None = None) -> BlockIndex:
    """Write the block index sidecar of a partition file from its footer (read from the file unless given)."""
    metadata = pq.read_metadata(path) if metadata is None else metadata
    arrow_schema = metadata.schema.to_arrow_schema()
    time_index = arrow_schema.get_field_index(TIME_COLUMN)
    blocks = []
    for number in range(metadata.num_row_groups):
        group = metadata.row_group(number)
        stats = group.column(time_index).statistics
        if stats is None or not stats.has_min_max:
            raise StoreCorruptError(
                f"{path}: block {number} has no time statistics", hint="re-ingest the file"
            )
        columns = [group.column(i) for i in range(group.num_columns)]
        offset = min(column.dictionary_page_offset or column.data_page_offset for column in columns)
        sizes = {column.path_in_schema: column.total_compressed_size for column in columns}
        blocks.append(Block(number, _ms(stats.min), _ms(stats.max), group.num_rows, offset, sizes))
    signature = schema_signature(arrow_schema)
    sidecar(path).write_text(json.dumps({"schema": signature, "blocks": [asdict(block) for block in blocks]}))
    return BlockIndex(signature, blocks)


def schema_signature(schema: pa.Schema) -> str:
    """Column names and types in file order: equal signatures mean a reader needs no unification."""
    return ",".join(f"{field.name}:{field.type}" for field in schema)


def load_index(path: Path) -> BlockIndex:
    """The block index of a partition file (from its sidecar; rebuilt from the footer when the sidecar is gone)."""
    try:
        data = json.loads(sidecar(path).read_text())
    except FileNotFoundError:
        return index_blocks(path)
    return BlockIndex(data["schema"], [Block(**entry) for entry in data["blocks"]])


def sidecar(path: Path) -> Path:
    """Where the block index of a partition file lives."""
    return path.with_name(path.name + SIDECAR_SUFFIX)


def _ms(value: object) -> int:
    """A footer timestamp statistic (datetime, or raw int of the file's unit) as epoch milliseconds."""
    if isinstance(value, datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=UTC)
        return round(aware.timestamp() * 1000)
    return int(value)  # type: ignore[call-overload]
