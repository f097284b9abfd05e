"""TTL advice from the partition filters of downstream readers."""

from __future__ import annotations

import pytest

from lineage_platform.graph import connect
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.model import RunInfo
from lineage_platform.sql import extract_lineage
from lineage_platform.ttl import advise, lookback_days

SCHEMA = {"ods": {"events": {"uid": "bigint", "app": "string", "payload": "string", "dt": "string"}}}
READERS = [
    ("daily_users", "INSERT OVERWRITE TABLE dwd.users SELECT uid FROM ods.events WHERE dt = '${bizdate}'"),
    (
        "app_20d",
        "INSERT OVERWRITE TABLE dws.apps SELECT app, count(1) AS n FROM ods.events "
        "WHERE dt >= date_sub('${bizdate}', 20) GROUP BY app",
    ),
]


def _graph(extra: list[tuple[str, str]] = ()):
    g = connect("memory:")
    writer = LineageWriter(g)
    for job, sql in [*READERS, *extra]:
        writer.write(
            extract_lineage(sql, schema=SCHEMA), RunInfo(status="SUCCESS", job=job, start_time="2024-06-01")
        )
    return g


@pytest.mark.parametrize(
    ("op", "value", "days"),
    [
        ("=", "${bizdate}", 1),
        ("IN", ["2024-01-01", "2024-01-02"], 1),
        (">=", "date_sub('${bizdate}', 20)", 20),
        (">", "date_add('${hivevar:bizdate}', -7)", 7),
        ("BETWEEN", ["date_sub('${bizdate}', 30)", "date_sub('${bizdate}', 1)"], 30),
        (">=", "add_months('${bizdate}', -2)", 62),
        (">=", "date_sub(current_date, 3)", 3),
        (">=", "'2024-01-01'", None),
        ("<=", "${bizdate}", None),
    ],
)
def test_lookback_of_partition_filters(op: str, value, days) -> None:
    assert lookback_days(op, value) == days


def test_each_column_gets_the_longest_range_of_its_readers_plus_margin() -> None:
    advice = advise(_graph(), "ods.events", margin_days=2)
    by_column = {c.column: c for c in advice.columns}
    assert by_column["ods.events.uid"].reads_back_days == 1
    assert by_column["ods.events.uid"].recommended_ttl_days == 3
    assert by_column["ods.events.app"].reads_back_days == 20
    assert by_column["ods.events.app"].uses[0].jobs == ["app_20d"]
    assert "date_sub('${bizdate}', 20)" in by_column["ods.events.app"].uses[0].predicate
    assert advice.recommended_ttl_days == 22


def test_a_reader_without_partition_filter_makes_its_columns_unbounded() -> None:
    g = _graph([("full_scan", "INSERT OVERWRITE TABLE ads.all_uids SELECT DISTINCT uid FROM ods.events")])
    by_column = {c.column: c for c in advise(g, "ods.events").columns}
    assert by_column["ods.events.uid"].reads_back_days is None
    assert any(use.predicate == "no partition filter" for use in by_column["ods.events.uid"].uses)
    assert by_column["ods.events.app"].reads_back_days == 20  # the full scan does not read app


def test_a_process_without_column_lineage_reads_every_column() -> None:
    g = _graph([("export", "EXPORT TABLE ods.events TO 'hdfs:///backup/events'")])
    advice = advise(g, "ods.events")
    assert all(c.reads_back_days is None for c in advice.columns)
    assert advice.recommended_ttl_days is None


def test_storage_that_could_be_saved_where_sizes_are_known() -> None:
    g = _graph()
    g.V().has("table", "qualifiedName", "ods.events").property("partitionBytes", 10_000).property(
        "retentionDays", 90
    ).iterate()
    advice = advise(g, "ods.events", margin_days=1)
    assert advice.recommended_ttl_days == 21
    assert advice.savable_bytes == (90 - 21) * 10_000


def test_plain_select_reads_count_as_read_windows() -> None:
    report = (
        "weekly_report",
        "SELECT uid, count(1) AS n FROM ods.events WHERE dt >= date_sub('${bizdate}', 45) GROUP BY uid",
    )
    advice = advise(_graph([report]), "ods.events", margin_days=1)
    by_column = {c.column: c for c in advice.columns}
    select_use = [u for u in by_column["ods.events.uid"].uses if u.operation == "SELECT"]
    assert [(u.jobs, u.days) for u in select_use] == [(["weekly_report"], 45)]
    assert by_column["ods.events.uid"].reads_back_days == 45
    assert by_column["ods.events.payload"].unused  # the report reads uid (and dt) only
    assert advice.recommended_ttl_days == 46
