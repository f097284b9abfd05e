"""The catalog in the graph: partition vertices, re-ingest, retention and re-partitioning keep files and graph in step."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from gremlin_python.process.graph_traversal import GraphTraversalSource

from lineage_platform.errors import IngestError
from lineage_platform.netflow.blocks import sidecar
from lineage_platform.netflow.catalog import (
    PARTITIONS_PER_TRAVERSAL,
    add_partitions,
    all_partitions,
    bound_keys,
    format_partitions,
    load_layout,
)
from lineage_platform.netflow.generate import FlowProfile, generate
from lineage_platform.netflow.layout import HOUR_MS
from lineage_platform.netflow.maintenance import (
    LayoutRequest,
    apply_retention,
    ingest,
    parse_time,
    repartition,
)
from lineage_platform.netflow.query import run_query

DATASET = "netflow.flows"


def flows(count: int, seed: int = 0) -> list[pa.RecordBatch]:
    return list(generate(count, profile=FlowProfile(hours=2, hosts=1_000), seed=seed, batch_rows=2_000))


def count_all(g: GraphTraversalSource) -> int:
    return run_query(g, DATASET, "SELECT count(*) AS n FROM flows").table.column("n")[0].as_py()


def test_partition_vertices_carry_bounds_and_link_to_the_dataset(
    g: GraphTraversalSource, tmp_path: Path
) -> None:
    summary = ingest(
        g,
        DATASET,
        tmp_path,
        flows(6_000),
        request=LayoutRequest(("src_ip", "dst_port"), cells=4, bucket_ms=HOUR_MS),
    )
    vertices = g.V().has("table", "qualifiedName", DATASET).out("hasPartition").element_map().to_list()
    assert len(vertices) == len(summary.files) == 2 * 4  # 2 hours x 2 x 2 cells
    by_path = {str(item.path): item for item in summary.files}
    for vertex in vertices:
        item = by_path[vertex["path"]]
        assert (vertex["recordCount"], vertex["byteSize"]) == (item.records, item.bytes)
        assert (vertex["timeStart"], vertex["timeEnd"]) == (item.time_min, item.time_max)
        low_key, high_key = bound_keys("dst_port")
        assert (vertex[low_key], vertex[high_key]) == item.bounds["dst_port"]
        assert vertex["typeName"] == "netflow_partition"
    assert load_layout(g, DATASET).attributes == ("src_ip", "dst_port")
    assert f"{DATASET}: 60 min buckets x 4 cells on src_ip, dst_port" in format_partitions(g, DATASET)


def test_a_second_ingest_appends_with_the_same_layout(g: GraphTraversalSource, tmp_path: Path) -> None:
    ingest(g, DATASET, tmp_path, flows(3_000))
    layout = load_layout(g, DATASET)
    ingest(g, DATASET, tmp_path / "ignored", flows(2_000, seed=1), request=LayoutRequest(("protocol",)))
    assert load_layout(g, DATASET) == layout
    assert count_all(g) == 5_000
    assert all(
        str(item.path).startswith(str(tmp_path)) and "ignored" not in str(item.path)
        for item in all_partitions(g, DATASET)
    )


def test_retention_drops_old_partitions_from_graph_and_disk(g: GraphTraversalSource, tmp_path: Path) -> None:
    ingest(g, DATASET, tmp_path, flows(4_000), request=LayoutRequest(bucket_ms=HOUR_MS))
    before = all_partitions(g, DATASET)
    dropped = apply_retention(g, DATASET, parse_time("2026-01-01 01:00:00"))
    assert dropped and all(item.time_end < parse_time("2026-01-01 01:00:00") for item in dropped)
    assert len(all_partitions(g, DATASET)) == len(before) - len(dropped)
    assert not any(item.path.exists() or sidecar(item.path).exists() for item in dropped)
    assert count_all(g) == 4_000 - sum(item.records for item in dropped)


def test_repartition_replaces_layout_files_and_vertices(g: GraphTraversalSource, tmp_path: Path) -> None:
    ingest(g, DATASET, tmp_path, flows(4_000))
    old = all_partitions(g, DATASET)
    expected = run_query(g, DATASET, "SELECT dst_port, count(*) FROM flows GROUP BY 1 ORDER BY 1").table
    repartition(g, DATASET, LayoutRequest(("dst_port",), cells=3))
    assert load_layout(g, DATASET).attributes == ("dst_port",)
    assert not any(item.path.exists() for item in old)
    assert run_query(g, DATASET, "SELECT dst_port, count(*) FROM flows GROUP BY 1 ORDER BY 1").table.equals(
        expected
    )
    plan = run_query(g, DATASET, "SELECT count(*) FROM flows WHERE dst_port = 443").plan
    assert plan.partitions_read < plan.partitions_total


def test_errors_say_what_to_do(g: GraphTraversalSource, tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="no records to ingest"):
        ingest(g, DATASET, tmp_path, [])
    with pytest.raises(IngestError, match="ingest it first"):
        repartition(g, "no.such", LayoutRequest())
    with pytest.raises(IngestError, match="not a time"):
        parse_time("last week")


def test_catalogue_writes_are_batched_and_idempotent(g: GraphTraversalSource, tmp_path: Path) -> None:
    summary = ingest(g, DATASET, tmp_path, flows(8_000), request=LayoutRequest(cells=64, bucket_ms=HOUR_MS))
    assert len(summary.files) > 2 * PARTITIONS_PER_TRAVERSAL
    edges = g.V().has("table", "qualifiedName", DATASET).out_e("hasPartition").count().next()
    assert edges == len(summary.files) == len(all_partitions(g, DATASET))
    add_partitions(g, DATASET, tmp_path, summary.files)
    assert g.V().has("table", "qualifiedName", DATASET).out_e("hasPartition").count().next() == edges
    assert g.V().has_label("partition").count().next() == edges
