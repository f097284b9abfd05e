"""Single-machine ingest: a pipelined, parallel Arrow path from a record stream to partition files.

    source batches ─► partition (vectorised assign + stable sort) ─► per-partition buffers
        ─► bounded queue per writer thread ─► sort block by the clustering attributes, then time
        ─► compress (zstd, in Arrow's C++ without the GIL) ─► append row group
        ─► on close: block index sidecar from the footer the writer just wrote

Each partition of a run is written by exactly one writer thread (chosen by hashing the partition), so files need no
locks; queues are bounded, so a fast source waits for the writers instead of filling memory. A block holds the records
of one stretch of arrival time, so its time range (in the block index) lets a query skip it; inside, records are
sorted by the clustering attributes, then time, so that a filter on those attributes finds its rows in a few runs
(a point query on one cell took 1.7x less CPU in DuckDB than from a time-sorted block, at 1M records).
"""

from __future__ import annotations

import queue
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from lineage_platform.errors import IngestError
from lineage_platform.netflow.blocks import PartitionFile, index_blocks, open_writer
from lineage_platform.netflow.layout import PartitionLayout
from lineage_platform.netflow.records import TIME_COLUMN

PartitionKey = tuple[int, int]  # (time bucket start in ms, cell number)


@dataclass
class IngestSummary:
    """Counts and timing of one ingest run."""

    records: int = 0
    rejected: int = 0
    seconds: float = 0.0
    files: list[PartitionFile] = field(default_factory=list)

    @property
    def bytes(self) -> int:
        """Bytes written to partition files."""
        return sum(item.bytes for item in self.files)

    @property
    def records_per_second(self) -> float:
        """Ingest throughput."""
        return self.records / self.seconds if self.seconds else 0.0

    def cell_imbalance(self, cells: int) -> tuple[float, int]:
        """How unequal the cells of the layout came out: the largest ratio of records in the fullest to the emptiest
        non-empty cell of one time bucket (partial first/last buckets do not skew it), and how many of the
        buckets' ``cells`` cells got no record at all."""
        per_bucket: dict[int, list[int]] = defaultdict(list)
        for item in self.files:
            per_bucket[item.bucket_ms].append(item.records)
        ratio = max((max(counts) / min(counts) for counts in per_bucket.values()), default=1.0)
        empty = sum(cells - len(counts) for counts in per_bucket.values())
        return ratio, empty


def partition_directory(root: Path, bucket_ms: int, cell: int) -> Path:
    """Where files of one partition live: ``root/t=YYYYmmddTHHMM/c=N``."""
    stamp = datetime.fromtimestamp(bucket_ms / 1000, tz=UTC).strftime("%Y%m%dT%H%M")
    return root / f"t={stamp}" / f"c={cell}"


class _Writer(threading.Thread):
    """Appends blocks to the partition files it owns; fed by a bounded queue."""

    def __init__(self, root: Path, run_id: str, attributes: tuple[str, ...], depth: int) -> None:
        super().__init__(daemon=True)
        self.root, self.run_id, self.attributes = root, run_id, attributes
        self.inbox: queue.Queue[tuple[PartitionKey, list[pa.RecordBatch]] | None] = queue.Queue(maxsize=depth)
        self.files: dict[PartitionKey, tuple[PartitionFile, pq.ParquetWriter]] = {}
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while (item := self.inbox.get()) is not None:
                key, pieces = item
                block = _block_order(pa.Table.from_batches(pieces), self.attributes)
                if key not in self.files:
                    path = partition_directory(self.root, *key) / f"{self.run_id}.parquet"
                    self.files[key] = (
                        PartitionFile(key[0], key[1], path),
                        open_writer(path, self.attributes),
                    )
                stats, writer = self.files[key]
                writer.write_table(block, row_group_size=block.num_rows)
                stats.observe(block, self.attributes)
            self._close_files()
        except BaseException as exc:  # handed to the producer, which re-raises it
            self.error = exc
            while self.inbox.get() is not None:
                pass

    def _close_files(self) -> None:
        """Close every file and index its blocks (in this thread, in parallel with the other writers)."""
        for stats, writer in self.files.values():
            writer.close()
            stats.bytes = stats.path.stat().st_size
            # the footer the writer just wrote (pyarrow's own metadata_collector reads it the same way)
            index_blocks(stats.path, writer.writer.metadata)

    @property
    def written(self) -> list[PartitionFile]:
        """Statistics of the files this writer wrote (complete once the thread has ended)."""
        return [stats for stats, _ in self.files.values()]


def ingest_batches(
    batches: Iterable[pa.RecordBatch],
    layout: PartitionLayout,
    root: Path,
    *,
    workers: int = 2,
    block_rows: int = 1 << 14,
    queue_depth: int = 4,
) -> IngestSummary:
    """Partition, compress and append a stream of records under ``root``; returns what was written."""
    started = time.perf_counter()
    run = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
    writers = [_Writer(root, run, layout.attributes, queue_depth) for _ in range(max(1, workers))]
    for writer in writers:
        writer.start()
    buffers: dict[PartitionKey, list[pa.RecordBatch]] = defaultdict(list)
    buffered: dict[PartitionKey, int] = defaultdict(int)
    summary = IngestSummary()

    def emit(key: PartitionKey) -> None:
        pieces = buffers.pop(key)
        buffered.pop(key)
        writer = writers[hash(key) % len(writers)]
        while True:  # a bounded put that notices a failed writer instead of waiting forever
            if writer.error is not None or not writer.is_alive():
                raise writer.error or IngestError("a partition writer stopped", hint="see the log above")
            try:
                writer.inbox.put((key, pieces), timeout=0.5)
                return
            except queue.Full:
                continue

    try:
        for batch in batches:
            summary.records += batch.num_rows
            for key, piece in _split(batch, layout):
                buffers[key].append(piece)
                buffered[key] += piece.num_rows
                if buffered[key] >= block_rows:
                    emit(key)
        for key in list(buffers):
            emit(key)
    finally:
        for writer in writers:
            writer.inbox.put(None)
        for writer in writers:
            writer.join()
    for writer in writers:
        if writer.error is not None:
            raise writer.error
        summary.files.extend(writer.written)
    summary.seconds = time.perf_counter() - started
    return summary


def _split(batch: pa.RecordBatch, layout: PartitionLayout) -> list[tuple[PartitionKey, pa.RecordBatch]]:
    """Records of a batch grouped by partition; a stable sort keeps each group in arrival order."""
    if batch.num_rows == 0:
        return []
    buckets, cells = layout.assign(batch)
    first_bucket = int(buckets.min())
    partition = (buckets - first_bucket) // layout.bucket_ms * layout.cells + cells
    if partition.max() < 1 << 16:
        partition = partition.astype(np.uint16)  # numpy's stable sort is a radix sort on 16-bit keys
    order = np.argsort(partition, kind="stable")
    ordered = pc.take(batch, pa.array(order), boundscheck=False)  # a permutation: always in bounds
    counts = np.bincount(partition)
    numbers = np.flatnonzero(counts)
    ends = np.cumsum(counts[numbers])
    pieces = []
    for number, start, end in zip(numbers.tolist(), (ends - counts[numbers]).tolist(), ends.tolist()):
        key = (first_bucket + (number // layout.cells) * layout.bucket_ms, number % layout.cells)
        pieces.append((key, ordered.slice(start, end - start)))
    return pieces


def _block_order(block: pa.Table, attributes: tuple[str, ...]) -> pa.Table:
    """The block sorted by the clustering attributes, then time (a no-op check for an already ordered block)."""
    keys = [block.column(name).to_numpy() for name in attributes]
    keys.append(block.column(TIME_COLUMN).cast(pa.int64()).to_numpy())
    if len(keys[0]) < 2:
        return block.combine_chunks()
    order = np.lexsort(keys[::-1])  # the last key is lexsort's primary one
    if bool(np.all(order[1:] > order[:-1])):
        return block.combine_chunks()
    return block.take(pa.array(order)).combine_chunks()
