"""`--engine spark` queries: the driver plans, Spark reads only the chosen files, and answers equal the local path."""

from __future__ import annotations

import random
from datetime import datetime
from decimal import Decimal

import pytest

from lineage_platform.errors import SqlError
from lineage_platform.netflow.catalog import all_partitions
from lineage_platform.netflow.query import format_streamed, plan_query, run_query
from lineage_platform.netflow.records import int_to_ip
from lineage_platform.netflow.spark_query import _records, spark_batches

from .conftest import DATASET, Clustered

pytestmark = [pytest.mark.slow, pytest.mark.spark]


def plain(value: object) -> object:
    """Spark's widened types (decimal sums, signed integers) compared by value."""
    return int(value) if isinstance(value, Decimal) else value


def spark_rows(spark, clustered: Clustered, sql: str) -> list[tuple]:
    with spark_batches(spark, plan_query(clustered.g, DATASET, sql)) as reader:
        table = reader.read_all()
    return [tuple(plain(value) for value in row.values()) for row in table.to_pylist()]


def local_rows(clustered: Clustered, sql: str) -> list[tuple]:
    return [tuple(row.values()) for row in run_query(clustered.g, DATASET, sql).table.to_pylist()]


def test_spark_answers_equal_the_local_path(spark, clustered: Clustered) -> None:
    rng = random.Random(5)
    pick = clustered.records.slice(rng.randrange(clustered.records.num_rows), 1).to_pylist()[0]
    src, dst = int_to_ip(pick["src_ip"]), int_to_ip(pick["dst_ip"])
    queries = [
        f"SELECT * FROM flows WHERE src_ip = '{src}' AND dst_ip = '{dst}' ORDER BY first_ts, src_port, dst_port",
        f"SELECT count(*) AS n, sum(bytes) AS b FROM flows WHERE dst_ip = '{dst}'",
        "SELECT count(*), sum(bytes) FROM flows WHERE first_ts >= '2026-01-01 01:10:00' "
        "AND first_ts < '2026-01-01 01:20:00'",
        f"SELECT dst_port, count(*) AS n, sum(bytes) AS b FROM flows WHERE in_cidr(dst_ip, '{dst}/8') "
        "GROUP BY 1 ORDER BY n DESC, 1 LIMIT 10",
        "SELECT protocol, count(*) AS n FROM flows WHERE src_ip < '64.0.0.0' GROUP BY 1 ORDER BY 1",
        "SELECT count(*) FROM flows WHERE src_ip = '0.0.0.1' AND dst_ip = '0.0.0.2'",  # no candidate file
    ]
    for sql in queries:
        expected = local_rows(clustered, sql)
        assert spark_rows(spark, clustered, sql) == expected, sql
    assert isinstance(local_rows(clustered, queries[0])[0][0], datetime)  # the point query found its record


def test_spark_reads_only_the_planned_files(spark, clustered: Clustered) -> None:
    sql = "SELECT count(*) FROM flows WHERE src_ip < '64.0.0.0' AND first_ts < '2026-01-01 01:00:00'"
    plan = plan_query(clustered.g, DATASET, sql)
    read = {path.removeprefix("file://") for path in _records(spark, plan.slices).inputFiles()}
    assert read == {str(item.path) for item in plan.slices}
    assert 0 < len(read) < len(all_partitions(clustered.g, DATASET)) / 4
    text = format_streamed(plan, batches=spark_batches(spark, plan))
    assert text.splitlines()[1].strip() == str(local_rows(clustered, sql)[0][0])


def test_a_bad_statement_is_one_clear_error(spark, clustered: Clustered) -> None:
    plan = plan_query(clustered.g, DATASET, "SELECT no_such_column FROM flows")
    with pytest.raises(SqlError, match="the query failed on Spark"), spark_batches(spark, plan) as reader:
        reader.read_all()
