"""The PySpark ingest job writes the same partitions the Arrow path would, and queries over them stay exact."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lineage_platform.graph import connect
from lineage_platform.netflow.blocks import load_index
from lineage_platform.netflow.catalog import all_partitions, load_layout
from lineage_platform.netflow.generate import FlowProfile, generate
from lineage_platform.netflow.maintenance import LayoutRequest
from lineage_platform.netflow.query import engine_sql, run_query
from lineage_platform.netflow.spark_job import spark_ingest


@pytest.mark.slow
@pytest.mark.spark
def test_spark_job_partitions_catalogues_and_answers_like_the_baseline(spark, tmp_path: Path) -> None:
    records = pa.Table.from_batches(list(generate(30_000, profile=FlowProfile(hours=2, hosts=2_000))))
    pq.write_table(records, tmp_path / "raw.parquet")
    g = connect("memory:")
    files = spark_ingest(
        g,
        spark,
        "netflow.flows",
        tmp_path / "parts",
        [tmp_path / "raw.parquet"],
        request=LayoutRequest(("src_ip", "dst_ip"), cells=4, bucket_ms=3_600_000),
    )
    layout = load_layout(g, "netflow.flows")
    assert sum(item.records for item in files) == records.num_rows
    assert {(item.bucket_ms, item.cell) for item in files} <= {
        (bucket, cell) for bucket in (1_767_225_600_000, 1_767_229_200_000) for cell in range(layout.cells)
    }
    for item in files:
        table = pq.read_table(item.path)
        buckets, cells = layout.assign(
            table.cast(pa.schema([(f.name, records.schema.field(f.name).type) for f in table.schema]))
        )
        assert set(buckets) == {item.bucket_ms} and set(cells) == {item.cell}
        assert load_index(item.path).blocks[0].time_min == item.time_min
    assert len(all_partitions(g, "netflow.flows")) == len(files)
    sql = (
        "SELECT protocol, count(*), sum(bytes) FROM flows WHERE src_ip < '128.0.0.0' "
        "AND first_ts < '2026-01-01 01:30:00' GROUP BY 1 ORDER BY 1"
    )
    _, text = engine_sql(sql, f"read_parquet('{tmp_path / 'raw.parquet'}')")
    result = run_query(g, "netflow.flows", sql)
    assert [tuple(row.values()) for row in result.table.to_pylist()] == duckdb.sql(text).fetchall()
    assert result.plan.partitions_read < result.plan.partitions_total
