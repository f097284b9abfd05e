"""k-d tree layout, the pipelined Arrow ingest, and the block index."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lineage_platform.errors import IngestError
from lineage_platform.netflow.blocks import load_index, sidecar
from lineage_platform.netflow.generate import FlowProfile, generate
from lineage_platform.netflow.ingest import ingest_batches
from lineage_platform.netflow.layout import MIN_CELLS, PartitionLayout, size_for_volume
from lineage_platform.netflow.records import TIME_COLUMN


@pytest.fixture(scope="module")
def records() -> pa.Table:
    return pa.Table.from_batches(
        list(generate(40_000, profile=FlowProfile(hours=2, hosts=3_000), batch_rows=5_000))
    )


def test_kd_cells_hold_near_equal_counts_despite_skew(records: pa.Table) -> None:
    layout = PartitionLayout.from_sample(records.slice(0, 10_000), ("src_ip", "dst_ip"), cells=16)
    assert layout.cells == 16
    _, cells = layout.assign(records)
    counts = np.bincount(cells, minlength=16)
    assert counts.max() / counts.min() < 1.5
    # whereas equal-width ranges over the address space are badly unbalanced on the same data
    quarters = (1 << 30, 2 << 30, 3 << 30)
    equal_width = PartitionLayout.grid(("src_ip", "dst_ip"), {"src_ip": quarters, "dst_ip": quarters})
    _, cells = equal_width.assign(records)
    assert np.bincount(cells, minlength=16).max() > 2 * counts.max()


def test_every_attribute_gets_its_share_of_the_cuts(records: pa.Table) -> None:
    layout = PartitionLayout.from_sample(records, ("src_ip", "dst_ip"), cells=16, bucket_ms=3_600_000)
    for name in ("src_ip", "dst_ip"):
        value = int(records.column(name)[123].as_py())
        holding = [cell for cell in range(16) if _within(layout.cell_box(cell).get(name), value)]
        assert len(holding) == 4  # a query on one attribute reads a quarter of the cells, not half or all


def _within(bounds: tuple[int, int] | None, value: int) -> bool:
    return bounds is None or bounds[0] <= value <= bounds[1]


def test_a_heavy_hitter_is_split_on_the_other_attribute() -> None:
    rng = np.random.default_rng(3)
    count = 40_000
    src = rng.integers(0, 1 << 32, count, dtype=np.uint32)
    src[: count // 4] = 123_456  # one source with a quarter of the traffic: no cut on src_ip can split it
    records = pa.table(
        {
            "first_ts": pa.array(np.arange(count), pa.timestamp("ms")),
            "src_ip": pa.array(src),
            "dst_ip": pa.array(rng.integers(0, 1 << 32, count, dtype=np.uint32)),
        }
    )
    layout = PartitionLayout.from_sample(records, ("src_ip", "dst_ip"), cells=8, bucket_ms=3_600_000)
    _, cells = layout.assign(records)
    counts = np.bincount(cells, minlength=8)
    assert counts.max() / counts.min() < 1.1
    heavy = set(cells[: count // 4].tolist())
    assert len(heavy) >= 2  # the heavy source's quarter is spread over cells told apart by dst_ip
    for cell in heavy:
        assert layout.cell_box(cell)["src_ip"][0] <= 123_456 <= layout.cell_box(cell)["src_ip"][1]
        assert "dst_ip" in layout.cell_box(cell)


def test_a_conversation_heavier_than_a_cell_is_split_on_its_ports() -> None:
    rng = np.random.default_rng(4)
    count = 40_000
    src = rng.integers(0, 1 << 32, count, dtype=np.uint32)
    dst = rng.integers(0, 1 << 32, count, dtype=np.uint32)
    src[: count // 5], dst[: count // 5] = 123_456, 654_321  # one conversation: a fifth of the records
    records = pa.table(
        {
            "first_ts": pa.array(np.arange(count), pa.timestamp("ms")),
            "src_ip": pa.array(src),
            "dst_ip": pa.array(dst),
            "src_port": pa.array(rng.integers(32_768, 61_000, count, dtype=np.uint16)),
            "dst_port": pa.array(np.full(count, 443, np.uint16)),
        }
    )
    layout = PartitionLayout.from_sample(records, ("src_ip", "dst_ip"), cells=10, bucket_ms=3_600_000)
    _, cells = layout.assign(records)
    counts = np.bincount(cells, minlength=10)
    assert counts.max() / counts.min() < 1.2
    heavy = set(cells[: count // 5].tolist())
    assert len(heavy) == 2 and all("src_port" in layout.cell_box(cell) for cell in heavy)
    assert "src_port" not in layout.attributes  # a tie-breaker: queries do not prune on it


def test_cells_and_bucket_follow_the_data_rate() -> None:
    def sample(records: int, hours: float) -> pa.Table:
        times = np.linspace(0, hours * 3_600_000, records).astype(np.int64)
        return pa.table({"first_ts": pa.array(times, pa.timestamp("ms"))})

    assert size_for_volume(sample(200_000, 0.16)) == (10, 3_600_000)  # 1.25 M records/h: 1 h buckets
    assert size_for_volume(sample(200_000, 0.8)) == (11, 6 * 3_600_000)  # 250 k/h: 6 h holds 8 cells
    assert size_for_volume(sample(200_000, 0.8), 3_600_000) == (MIN_CELLS, 3_600_000)  # a given width stays
    assert size_for_volume(sample(200_000, 0)) == (1024, 3_600_000)  # a burst in one millisecond: capped
    assert size_for_volume(sample(500, 0.8))[0] == 5  # no more cells than a small sample can fill


def test_grid_cells_are_numbered_in_mixed_radix(records: pa.Table) -> None:
    boundaries = {"src_ip": (1 << 31,), "dst_port": (80, 443)}
    layout = PartitionLayout.grid(("src_ip", "dst_port"), boundaries)
    _, cells = layout.assign(records)
    src = records.column("src_ip").to_numpy()
    port = records.column("dst_port").to_numpy()
    expected = (src >= 1 << 31) * 3 + (port >= 80) + (port >= 443)
    assert np.array_equal(cells, expected)
    # a catalog written before the tree keeps its cell numbers
    old = json.dumps({"attributes": ["src_ip", "dst_port"], "boundaries": boundaries, "bucket_ms": 3_600_000})
    assert PartitionLayout.from_json(old) == layout


def test_layout_round_trips_and_checks_attributes(records: pa.Table) -> None:
    layout = PartitionLayout.from_sample(records, ("dst_port", "src_ip"), cells=5, bucket_ms=600_000)
    assert PartitionLayout.from_json(layout.to_json()) == layout
    assert layout.cells == 5
    assert PartitionLayout.grid(("dst_port",), {"dst_port": (80, 443)}).cell_box(2) == {
        "dst_port": (443, (1 << 63) - 1)
    }
    with pytest.raises(IngestError, match="cannot cluster on bytes"):
        PartitionLayout(("bytes",))


def test_ingest_writes_every_record_once_into_the_partition_that_bounds_it(
    records: pa.Table, tmp_path: Path
) -> None:
    layout = PartitionLayout.from_sample(records, ("src_ip", "dst_port"), cells=9, bucket_ms=1_800_000)
    summary = ingest_batches(
        records.to_batches(max_chunksize=3_000), layout, tmp_path, workers=2, block_rows=1_000
    )
    assert summary.records == records.num_rows
    assert sum(item.records for item in summary.files) == records.num_rows
    written = []
    for item in summary.files:
        table = pq.read_table(item.path)
        buckets, cells = layout.assign(table)
        assert set(buckets) == {item.bucket_ms} and set(cells) == {item.cell}
        times = table.column(TIME_COLUMN).cast(pa.int64()).to_numpy()
        assert (item.time_min, item.time_max) == (times.min(), times.max())
        for name, (low, high) in item.bounds.items():
            assert (low, high) == (table.column(name).to_numpy().min(), table.column(name).to_numpy().max())
        written.append(table)
    assert (
        pa.concat_tables(written)
        .sort_by([(name, "ascending") for name in records.column_names])
        .equals(records.sort_by([(name, "ascending") for name in records.column_names]))
    )
    ratio, empty = summary.cell_imbalance(layout.cells)  # recomputed here from the files' own counts
    buckets = {item.bucket_ms for item in summary.files}
    worst = max(
        max(counts) / min(counts)
        for counts in (
            [pq.read_metadata(item.path).num_rows for item in summary.files if item.bucket_ms == bucket]
            for bucket in buckets
        )
    )
    assert ratio == pytest.approx(worst) and ratio >= 1.0
    assert empty == len(buckets) * layout.cells - len(summary.files)


def test_blocks_are_ordered_by_attribute_then_time_and_indexed_even_from_an_unordered_stream(
    records: pa.Table, tmp_path: Path
) -> None:
    shuffled = records.take(np.random.default_rng(1).permutation(records.num_rows))
    layout = PartitionLayout.from_sample(records, ("dst_ip",), cells=2, bucket_ms=3_600_000)
    summary = ingest_batches(shuffled.to_batches(max_chunksize=4_000), layout, tmp_path, block_rows=2_000)
    for item in summary.files:
        parquet = pq.ParquetFile(item.path)
        index = load_index(item.path)
        blocks = index.blocks
        assert len(blocks) == parquet.num_row_groups > 1
        assert json.loads(sidecar(item.path).read_text())["blocks"][0]["row_group"] == 0
        for block in blocks:
            table = parquet.read_row_group(block.row_group, columns=["dst_ip", TIME_COLUMN])
            addresses = table.column("dst_ip").to_numpy().astype(np.int64)
            times = table.column(TIME_COLUMN).cast(pa.int64()).to_numpy()
            assert np.all(np.diff(addresses) >= 0)  # by the clustering attribute, then by time within a value
            assert np.all(np.diff(times)[np.diff(addresses) == 0] >= 0)
            assert not np.all(np.diff(times) >= 0)  # the stream's time order is not what orders a block
            assert (block.time_min, block.time_max, block.rows) == (times.min(), times.max(), len(times))
        sidecar(item.path).unlink()
        assert load_index(item.path) == index  # rebuilt from the footer


def test_files_are_compact(records: pa.Table, tmp_path: Path) -> None:
    layout = PartitionLayout.from_sample(records, ("src_ip", "dst_ip"), cells=16, bucket_ms=3_600_000)
    summary = ingest_batches(records.to_batches(), layout, tmp_path)
    assert (
        summary.bytes / summary.records < 24
    )  # half the 48 B raw record even on this small, scattered sample
