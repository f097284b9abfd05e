"""Pruned queries over the catalog return exactly what DuckDB returns over the unclustered records."""

from __future__ import annotations

import json
import random
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from lineage_platform.errors import SqlError
from lineage_platform.netflow import query
from lineage_platform.netflow.blocks import index_blocks
from lineage_platform.netflow.catalog import CatalogError, all_partitions
from lineage_platform.netflow.query import (
    _over,
    _parquet_relation,
    analyse,
    engine_sql,
    format_result,
    format_streamed,
    plan_query,
    run_query,
)
from lineage_platform.netflow.records import int_to_ip

from .conftest import DATASET, Clustered, make_clustered
from .test_rectangles import random_where


def baseline(clustered: Clustered, sql: str) -> list[tuple]:
    _, text = engine_sql(sql, f"read_parquet('{clustered.raw}')")
    return duckdb.sql(text).fetchall()


def pruned(clustered: Clustered, sql: str, engine: str = "duckdb") -> list[tuple]:
    result = run_query(clustered.g, DATASET, sql, engine=engine)
    return [tuple(row.values()) for row in result.table.to_pylist()]


def sample_addresses(clustered: Clustered, rng: random.Random, column: str) -> str:
    return int_to_ip(clustered.records.column(column)[rng.randrange(clustered.records.num_rows)].as_py())


def random_query(clustered: Clustered, rng: random.Random) -> str:
    src, dst = sample_addresses(clustered, rng, "src_ip"), sample_addresses(clustered, rng, "dst_ip")
    hour = rng.randrange(3)
    shapes = [
        f"SELECT * FROM flows WHERE src_ip = '{src}' AND dst_ip = '{dst}' ORDER BY ALL",
        f"SELECT dst_port, count(*), sum(bytes) FROM flows WHERE dst_ip = '{dst}' GROUP BY 1 ORDER BY 1",
        f"SELECT count(*) FROM flows WHERE in_cidr(src_ip, '{src}/{rng.choice([4, 8, 12, 16])}')",
        f"SELECT protocol, min(first_ts), max(packets) FROM flows WHERE dst_ip IN ('{dst}', '{src}', '1.2.3.4') "
        f"OR src_ip BETWEEN '{src}' AND '{dst}' GROUP BY 1 ORDER BY 1",
        f"SELECT count(*), sum(packets) FROM flows WHERE NOT (src_ip >= '{src}') AND first_ts >= "
        f"'2026-01-01 0{hour}:15:00' AND first_ts < '2026-01-01 0{hour}:45:00'",
        f"SELECT src_ip, dst_ip, bytes FROM flows WHERE {random_where(rng)} ORDER BY bytes DESC, src_ip, dst_ip LIMIT 7",
        f"SELECT router, count(DISTINCT dst_ip) FROM flows WHERE dst_port = 443 AND src_ip <> '{src}' GROUP BY 1 ORDER BY 1",
    ]
    return rng.choice(shapes)


@pytest.mark.parametrize("engine", ["duckdb", "arrow"])
@pytest.mark.parametrize(
    "one_pass_rows", [query.ONE_PASS_ROWS, 0]
)  # small scans in one pass, and all streamed
def test_many_random_queries_equal_the_unclustered_baseline(
    clustered: Clustered, engine: str, one_pass_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(query, "ONE_PASS_ROWS", one_pass_rows)
    rng = random.Random(11)
    for _ in range(60):
        sql = random_query(clustered, rng)
        assert pruned(clustered, sql, engine) == baseline(clustered, sql), sql


def test_one_row_answers_are_recognised_and_scans_count_their_records(clustered: Clustered) -> None:
    one_row = [
        "SELECT count(*), sum(bytes) FROM flows WHERE dst_port = 53",
        "SELECT max(bytes) - min(bytes) FROM flows",
    ]
    more = [
        "SELECT dst_port, count(*) FROM flows GROUP BY 1",
        "SELECT bytes FROM flows",
        "SELECT unnest(list(dst_port)) FROM flows",
        "SELECT count(*) OVER () FROM flows",
    ]
    assert [analyse(sql).one_row for sql in one_row + more] == [True] * len(one_row) + [False] * len(more)
    plan = plan_query(clustered.g, DATASET, "SELECT count(*) FROM flows")
    assert sum(item.rows for item in plan.slices) == clustered.records.num_rows


def test_point_queries_read_a_small_fraction(clustered: Clustered) -> None:
    row = clustered.records.slice(1234, 1).to_pylist()[0]
    sql = (
        f"SELECT count(*) FROM flows WHERE src_ip = '{int_to_ip(row['src_ip'])}' "
        f"AND dst_ip = '{int_to_ip(row['dst_ip'])}'"
    )
    plan = plan_query(clustered.g, DATASET, sql)
    assert plan.partitions_read <= plan.partitions_total // 8
    assert pruned(clustered, sql) == baseline(clustered, sql) and baseline(clustered, sql)[0][0] >= 1


def test_time_windows_prune_blocks_inside_partitions(clustered: Clustered) -> None:
    sql = "SELECT count(*) FROM flows WHERE first_ts BETWEEN '2026-01-01 01:10:00' AND '2026-01-01 01:12:00'"
    plan = plan_query(clustered.g, DATASET, sql)
    assert plan.partitions_read < plan.partitions_total
    assert plan.blocks_read < sum(1 for _ in plan.slices) * 3  # a two-minute window needs few blocks per file
    assert pruned(clustered, sql) == baseline(clustered, sql) == pruned(clustered, sql, "arrow")


def test_non_clustering_attributes_answer_correctly_and_say_so(clustered: Clustered) -> None:
    sql = "SELECT count(*) FROM flows WHERE packets > 50 AND bytes % 7 = 0"
    result = run_query(clustered.g, DATASET, sql)
    assert [tuple(row.values()) for row in result.table.to_pylist()] == baseline(clustered, sql)
    assert result.plan.partitions_read == result.plan.partitions_total
    assert any("bytes, packets are not clustering attributes" in note for note in result.plan.notes)
    text = format_result(result, explain=True)
    assert "partitions" in text and "note: bytes, packets" in text and "DuckDB: SELECT" in text


def test_addresses_print_dotted(clustered: Clustered) -> None:
    text = format_result(run_query(clustered.g, DATASET, "SELECT src_ip FROM flows ORDER BY src_ip LIMIT 1"))
    assert text.splitlines()[1].strip() == int_to_ip(min(clustered.records.column("src_ip").to_pylist()))


@pytest.mark.parametrize("engine", ["duckdb", "arrow"])
def test_streamed_output_keeps_the_first_rows_and_counts_the_rest(clustered: Clustered, engine: str) -> None:
    sql = "SELECT src_ip, dst_port, first_ts FROM flows WHERE dst_port < 1024 ORDER BY first_ts, src_ip, dst_port"
    collected = format_result(run_query(clustered.g, DATASET, sql, engine=engine), max_rows=7).splitlines()
    streamed = format_streamed(plan_query(clustered.g, DATASET, sql), engine=engine, max_rows=7).splitlines()
    expected = sum(1 for port in clustered.records.column("dst_port").to_pylist() if port < 1024)
    assert expected > 7  # more rows than shown
    assert streamed[:9] == collected[:9]  # header, the same 7 rows, "... N more rows"
    assert streamed[8] == f"... {expected - 7} more rows"
    assert streamed[9].startswith(f"{expected} rows;")
    with pytest.raises(SqlError, match="the query failed"):
        format_streamed(plan_query(clustered.g, DATASET, "SELECT nonsense FROM flows"), engine=engine)


def test_empty_answers_and_bad_queries(clustered: Clustered) -> None:
    for engine in ("duckdb", "arrow"):
        assert pruned(
            clustered, "SELECT count(*) FROM flows WHERE src_port = 1 AND src_port = 2", engine
        ) == [(0,)]
    with pytest.raises(SqlError, match="unknown query engine"):
        run_query(clustered.g, DATASET, "SELECT 1 FROM flows", engine="spark")
    with pytest.raises(SqlError, match="one SELECT over one table"):
        run_query(clustered.g, DATASET, "SELECT * FROM flows a JOIN flows b ON a.src_ip = b.dst_ip")
    with pytest.raises(SqlError, match="in_cidr needs a column and a constant block"):
        run_query(clustered.g, DATASET, "SELECT count(*) FROM flows WHERE in_cidr(src_ip)")
    with pytest.raises(SqlError, match="cannot parse"):
        run_query(clustered.g, DATASET, "SELECT FROM WHERE (")
    with pytest.raises(SqlError, match="the query failed"):
        run_query(clustered.g, DATASET, "SELECT nonsense FROM flows")
    with pytest.raises(CatalogError, match="ingest records first"):
        run_query(clustered.g, "no.such", "SELECT 1 FROM flows")


def test_files_written_with_other_physical_types_still_answer_exactly(tmp_path: Path) -> None:
    """Like a dataset with partitions from the Arrow path and from another writer (other types and column order)."""
    data = make_clustered(tmp_path, count=20_000)
    foreign = all_partitions(data.g, DATASET)[::2]
    for partition in foreign:
        table = pq.read_table(partition.path)
        wider = pa.schema(
            [
                (f.name, pa.int64() if pa.types.is_integer(f.type) else pa.timestamp("us"))
                for f in table.schema
            ]
        )
        reordered = table.cast(wider).select(table.column_names[::-1])  # and another column order
        pq.write_table(reordered, partition.path, row_group_size=1_000)
        index_blocks(partition.path)
    rng = random.Random(5)
    for _ in range(15):
        sql = random_query(data, rng)
        for engine in ("duckdb", "arrow"):
            assert pruned(data, sql, engine) == baseline(data, sql), (engine, sql)


def test_a_repeated_statement_is_analysed_once_and_bad_ones_every_time(clustered: Clustered) -> None:
    sql = "SELECT count(*) FROM flows WHERE dst_port = 53 AND first_ts < '2026-01-01 01:00:00'"
    first = plan_query(clustered.g, DATASET, sql)
    hits = analyse.cache_info().hits
    second = plan_query(clustered.g, DATASET, sql)
    assert analyse.cache_info().hits == hits + 1
    assert (second.sql, second.boxes, second.slices, second.notes) == (
        first.sql,
        first.boxes,
        first.slices,
        first.notes,
    )
    assert pruned(clustered, sql) == baseline(clustered, sql)
    for _ in range(2):  # an error is raised again, not remembered as an analysis
        with pytest.raises(SqlError, match="cannot parse"):
            plan_query(clustered.g, DATASET, "SELECT FROM WHERE (")


def test_blocks_without_the_address_are_skipped_by_their_bloom_filter(
    clustered: Clustered, tmp_path: Path
) -> None:
    """Each block carries a Bloom filter on the clustering attributes, so DuckDB scans only the blocks that may hold a
    point query's address, fewer than the candidate files' blocks, and the answer is unchanged."""
    counts = pc.value_counts(clustered.records.column("dst_ip"))
    rare = counts.filter(pc.equal(counts.field("counts"), 1)).field("values")[0].as_py()  # in one block only
    sql = f"SELECT count(*), sum(bytes) FROM flows WHERE dst_ip = '{int_to_ip(rare)}'"
    plan = plan_query(clustered.g, DATASET, sql)
    assert all(
        column.bloom_filter_length > 0
        for item in plan.slices
        for column in (pq.read_metadata(item.path).row_group(0).column(i) for i in (2, 3))  # src_ip, dst_ip
    )
    profile = tmp_path / "profile.json"
    connection = duckdb.connect()
    connection.execute("PRAGMA enable_profiling = 'json'")
    connection.execute(f"PRAGMA profiling_output = '{profile}'")
    rows = connection.sql(_over(plan.template, _parquet_relation(plan.slices))).fetchall()
    connection.execute("PRAGMA disable_profiling")
    scanned = json.loads(profile.read_text())["query"]["total_row_groups_scanned"]
    assert rows == baseline(clustered, sql) and rows[0][0] == 1
    assert plan.blocks_read >= 8 and 1 <= scanned <= plan.blocks_read // 4
