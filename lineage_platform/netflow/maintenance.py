"""Life cycle of a partitioned NetFlow dataset: ingest into the catalog, retention, re-partitioning.

Each operation keeps the files and the catalog in step: new files are written and catalogued before old ones are
dropped from the catalog and deleted, so a query running meanwhile sees either the old or the new partitions.
"""

from __future__ import annotations

import itertools
import shutil
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
from gremlin_python.process.graph_traversal import GraphTraversalSource

from lineage_platform.config import load_settings
from lineage_platform.errors import IngestError
from lineage_platform.netflow.blocks import sidecar
from lineage_platform.netflow.catalog import (
    Partition,
    add_partitions,
    all_partitions,
    drop_partitions,
    find_dataset,
    load_layout,
    register_dataset,
)
from lineage_platform.netflow.ingest import IngestSummary, ingest_batches
from lineage_platform.netflow.layout import PartitionLayout, size_for_volume
from lineage_platform.netflow.readers import Rejects, read_parquet, read_records
from lineage_platform.netflow.records import epoch_ms
from lineage_platform.netflow.workload import choose_attributes

DEFAULT_ATTRIBUTES = ("src_ip", "dst_ip")


@dataclass(frozen=True)
class LayoutRequest:
    """How to partition a dataset that has no layout yet."""

    attributes: tuple[str, ...] = DEFAULT_ATTRIBUTES
    cells: int | None = None  # per time bucket; None: from the data volume (layout.size_for_volume)
    bucket_ms: int | None = None  # None: from the data volume
    sample_rows: int = 200_000
    # a query log: when given, the attributes are chosen from it for the cell count the volume gets
    workload: str | None = None

    def layout(self, sample: pa.Table) -> PartitionLayout:
        """The layout for a new dataset whose first records are ``sample``."""
        attributes = self.attributes
        if self.workload is not None:
            cells = self.cells or size_for_volume(sample, self.bucket_ms)[0]
            attributes = choose_attributes(self.workload, cells=cells).chosen
        return PartitionLayout.from_sample(sample, attributes, self.cells, self.bucket_ms)


DEFAULT_REQUEST = LayoutRequest()


def ingest(
    g: GraphTraversalSource,
    dataset: str,
    root: Path,
    batches: Iterable[pa.RecordBatch],
    *,
    request: LayoutRequest = DEFAULT_REQUEST,
    workers: int = 2,
    block_rows: int = 1 << 14,
) -> IngestSummary:
    """Append records to a dataset (creating it, with a layout sized from the first records, when new)."""
    stream = iter(batches)
    known = find_dataset(g, dataset)
    if known is None:
        head = list(_head(stream, request.sample_rows))
        if not head:
            raise IngestError(
                "no records to ingest", hint="check the input files and the rejected-record report"
            )
        layout = request.layout(pa.Table.from_batches(head))
        register_dataset(g, dataset, layout, root)
        stream = itertools.chain(head, stream)
    else:
        layout, root = known
    summary = ingest_batches(stream, layout, root, workers=workers, block_rows=block_rows)
    add_partitions(g, dataset, root, summary.files)
    return summary


def ingest_files(
    g: GraphTraversalSource,
    dataset: str,
    root: Path,
    paths: Iterable[Path],
    *,
    request: LayoutRequest = DEFAULT_REQUEST,
) -> tuple[IngestSummary, Rejects]:
    """Ingest CSV (platform or nfdump) and Parquet files; malformed records are counted in the returned Rejects."""
    rejects = Rejects()
    summary = ingest(g, dataset, root, read_records(paths, rejects), request=request)
    summary.rejected = rejects.count
    return summary, rejects


@dataclass(frozen=True)
class IngestReport:
    """What `lineage netflow ingest` prints, and the rejected count it may fail on."""

    text: str
    rejected: int


def ingest_command(
    g: GraphTraversalSource,
    dataset: str,
    paths: list[Path],
    *,
    root: Path | None,
    attributes: str | None,
    workload: Path | None,
    cells: int | None,
    bucket_minutes: int | None,
    engine: str,
    spark_master: str,
    rejects_path: Path | None,
) -> IngestReport:
    """The `ingest` command: choose attributes, run the Arrow or Spark path, keep rejects, summarise.

    The rate shown first is the wall time of the whole command (reading, sizing the layout, writing, cataloguing);
    the writer pipeline's own rate follows it.
    """
    started = time.perf_counter()
    lines = []
    log = workload.read_text() if workload is not None else None
    chosen = parse_attributes(attributes) if attributes else DEFAULT_ATTRIBUTES
    request = LayoutRequest(chosen, cells, bucket_minutes and bucket_minutes * 60_000, workload=log)
    root = root or load_settings().work_dir / "netflow" / dataset
    if engine == "spark":
        from lineage_platform.ingest.spark import session
        from lineage_platform.netflow.spark_job import spark_ingest

        files = spark_ingest(g, session(spark_master), dataset, root, paths, request=request)
        records, size, rejected = sum(item.records for item in files), sum(item.bytes for item in files), 0
        lines.append(
            f"Spark wrote {records} records into {len(files)} partition files ({size / max(records, 1):.1f} B/record)"
        )
    else:
        summary, rejects = ingest_files(g, dataset, root, paths, request=request)
        rejected = rejects.count
        if rejects_path is not None and rejects.count:
            rejects.write(rejects_path)
        wall = time.perf_counter() - started
        lines.append(
            f"{summary.records} records into {len(summary.files)} partition files in {wall:.2f} s "
            f"({summary.records / wall if wall else 0.0:,.0f} records/s wall; writer pipeline {summary.seconds:.2f} s, "
            f"{summary.records_per_second:,.0f} records/s; {summary.bytes / max(summary.records, 1):.1f} B/record); "
            f"{rejected} malformed records set aside"
            + (f" in {rejects_path}" if rejects_path and rejected else "")
        )
        ratio, empty = summary.cell_imbalance(load_layout(g, dataset).cells)
        lines.append(
            f"cell balance: up to {ratio:.2f}x more records in the fullest than in the emptiest cell of a time"
            f" bucket; {empty} empty cells"
        )
    layout = load_layout(g, dataset)
    if log is not None:  # the choice the layout was made with (the same cells per bucket)
        lines.insert(0, choose_attributes(log, cells=layout.cells).explain())
    lines.append(f"layout: {layout.describe()}; files under {root}")
    return IngestReport("\n".join(lines), rejected)


def parse_attributes(text: str) -> tuple[str, ...]:
    """``"src_ip, dst_ip"`` -> ``("src_ip", "dst_ip")`` (validated when the layout is built)."""
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    if not names:
        raise IngestError("no clustering attributes given", hint="e.g. --attributes src_ip,dst_ip")
    return names


def parse_time(text: str) -> int:
    """'YYYY-MM-DD[ HH:MM:SS]' (UTC unless an offset is given) -> epoch milliseconds."""
    try:
        return epoch_ms(text)
    except ValueError as exc:
        raise IngestError(f"not a time: {text!r}", hint="write 'YYYY-MM-DD HH:MM:SS' (UTC)") from exc


def apply_retention(g: GraphTraversalSource, dataset: str, keep_from_ms: int) -> list[Partition]:
    """Drop (from the catalog, then from disk) every partition whose records all start before ``keep_from_ms``."""
    expired = [item for item in all_partitions(g, dataset) if item.time_end < keep_from_ms]
    drop_partitions(g, expired)
    _delete_files(expired)
    return expired


def repartition(
    g: GraphTraversalSource, dataset: str, request: LayoutRequest, *, workers: int = 2
) -> IngestSummary:
    """Re-write a dataset with a new layout (e.g. when the workload's attributes changed)."""
    known = find_dataset(g, dataset)
    if known is None:
        raise IngestError(f"no NetFlow dataset {dataset!r} to re-partition", hint="ingest it first")
    _, root = known
    old = all_partitions(g, dataset)
    sample = pa.Table.from_batches(list(_head(_records_of(old), request.sample_rows)))
    layout = request.layout(sample)
    summary = ingest_batches(_records_of(old), layout, root, workers=workers)
    drop_partitions(g, old)
    register_dataset(g, dataset, layout, root)
    add_partitions(g, dataset, root, summary.files)
    _delete_files(old)
    return summary


def _records_of(partitions: list[Partition]) -> Iterator[pa.RecordBatch]:
    rejects = Rejects()
    for partition in partitions:
        yield from read_parquet(partition.path, rejects)


def _head(stream: Iterator[pa.RecordBatch], rows: int) -> Iterator[pa.RecordBatch]:
    """Batches from the stream until at least ``rows`` records were taken."""
    taken = 0
    for batch in stream:
        yield batch
        taken += batch.num_rows
        if taken >= rows:
            return


def _delete_files(partitions: list[Partition]) -> None:
    for partition in partitions:
        partition.path.unlink(missing_ok=True)
        sidecar(partition.path).unlink(missing_ok=True)
        directory = partition.path.parent
        if directory.exists() and not any(directory.iterdir()):
            shutil.rmtree(directory, ignore_errors=True)
