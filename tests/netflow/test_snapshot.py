"""The in-process catalog snapshot: reused while the catalog is unchanged, reloaded after every kind of change."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
from gremlin_python.process.graph_traversal import GraphTraversalSource

from lineage_platform.graph import connect
from lineage_platform.netflow.catalog import VERSION_KEY, all_partitions, drop_partitions
from lineage_platform.netflow.generate import FlowProfile, generate
from lineage_platform.netflow.maintenance import LayoutRequest, ingest
from lineage_platform.netflow.query import engine_sql, plan_query, run_query
from lineage_platform.netflow.snapshot import catalog_snapshot

DATASET = "netflow.flows"
COUNT = "SELECT count(*) AS n FROM flows"


def flows(count: int, seed: int) -> list[pa.RecordBatch]:
    return list(generate(count, profile=FlowProfile(hours=2, hosts=1_000), seed=seed, batch_rows=2_000))


def count_all(g: GraphTraversalSource) -> int:
    return run_query(g, DATASET, COUNT).table.column("n")[0].as_py()


def test_snapshot_is_reused_until_the_catalog_changes(tmp_path: Path) -> None:
    g = connect("memory:")
    request = LayoutRequest(("src_ip",), cells=4)
    ingest(g, DATASET, tmp_path / "parts", flows(8_000, 1), request=request)
    first = catalog_snapshot(g, DATASET)
    assert catalog_snapshot(g, DATASET) is first
    assert count_all(g) == 8_000

    ingest(g, DATASET, tmp_path / "parts", flows(3_000, 2), request=request)  # more partitions
    second = catalog_snapshot(g, DATASET)
    assert second is not first and len(second.partitions) > len(first.partitions)
    assert count_all(g) == 11_000

    dropped = all_partitions(g, DATASET)[:3]
    drop_partitions(g, dropped)
    assert count_all(g) == 11_000 - sum(item.records for item in dropped)
    assert catalog_snapshot(g, DATASET) is not second


def test_catalog_without_a_version_is_read_fresh_every_time(tmp_path: Path) -> None:
    g = connect("memory:")
    ingest(g, DATASET, tmp_path / "parts", flows(5_000, 3), request=LayoutRequest(("dst_ip",), cells=2))
    g.V().has("table", "qualifiedName", DATASET).properties(VERSION_KEY).drop().iterate()  # an older catalog
    assert catalog_snapshot(g, DATASET) is not catalog_snapshot(g, DATASET)
    assert count_all(g) == 5_000


def test_pruning_from_the_snapshot_matches_duckdb(tmp_path: Path) -> None:
    g = connect("memory:")
    batches = flows(20_000, 4)
    ingest(g, DATASET, tmp_path / "parts", batches, request=LayoutRequest(("src_ip", "dst_ip"), cells=16))
    records = pa.Table.from_batches(batches)
    pick = records.slice(777, 1).to_pylist()[0]
    sql = f"SELECT count(*) AS n, sum(bytes) AS b FROM flows WHERE src_ip = {pick['src_ip']} OR dst_ip < 100000000"
    plan = plan_query(g, DATASET, sql)
    assert 0 < plan.partitions_read < plan.partitions_total  # the snapshot pruned, and kept some
    _, text = engine_sql(sql, "records")
    connection = duckdb.connect()
    connection.register("records", records)
    assert [tuple(row.values()) for row in run_query(g, DATASET, sql).table.to_pylist()] == connection.sql(
        text
    ).fetchall()
