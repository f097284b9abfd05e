"""TTL advice from the partition filters of downstream readers."""

from __future__ import annotations

import calendar
import json
import random
from datetime import date, timedelta

import pytest
from click.testing import CliRunner

from lineage_platform.cli import cli
from lineage_platform.graph import connect, disconnect
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.ingest.catalog_index import CatalogIndex
from lineage_platform.ingest.events import EventDecoder
from lineage_platform.ingest.events.native import query_event
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
        ("=", "date_sub('${bizdate}', 3)", 4),
        ("IN", ["2024-01-01", "2024-01-02"], None),  # fixed partitions are read forever
        ("IN", ["${bizdate}", "date_sub('${bizdate}', 7)"], 8),
        (">=", "date_sub('${bizdate}', 19)", 20),  # 20 partitions: bizdate-19 .. bizdate
        (">", "date_add('${hivevar:bizdate}', -7)", 7),
        ("BETWEEN", ["date_sub('${bizdate}', 30)", "date_sub('${bizdate}', 1)"], 31),
        (">=", "add_months('${bizdate}', -2)", 63),
        (">=", "date_sub(current_date, 3)", 4),
        (">=", "'2024-01-01'", None),
        (">=", "date_sub('2024-01-01', 3)", None),
        (">=", "concat(substr('${bizdate}', 1, 7), '-01')", None),  # a month start: not a window we can bound
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
    assert by_column["ods.events.app"].reads_back_days == 21
    assert by_column["ods.events.app"].uses[0].jobs == ["app_20d"]
    assert "date_sub('${bizdate}', 20)" in by_column["ods.events.app"].uses[0].predicate
    assert advice.recommended_ttl_days == 23


def test_a_reader_without_partition_filter_makes_its_columns_unbounded() -> None:
    g = _graph([("full_scan", "INSERT OVERWRITE TABLE ads.all_uids SELECT DISTINCT uid FROM ods.events")])
    by_column = {c.column: c for c in advise(g, "ods.events").columns}
    assert by_column["ods.events.uid"].reads_back_days is None
    assert any(use.predicate == "no partition filter" for use in by_column["ods.events.uid"].uses)
    assert by_column["ods.events.uid"].no_advice_reason == (
        "no advice: full_scan: no partition filter (reads every partition)"
    )
    assert by_column["ods.events.app"].reads_back_days == 21  # the full scan does not read app


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
    assert advice.recommended_ttl_days == 22
    assert advice.savable_bytes == (90 - 22) * 10_000


def test_plain_select_reads_count_as_read_windows() -> None:
    report = (
        "weekly_report",
        "SELECT uid, count(1) AS n FROM ods.events WHERE dt >= date_sub('${bizdate}', 45) GROUP BY uid",
    )
    advice = advise(_graph([report]), "ods.events", margin_days=1)
    by_column = {c.column: c for c in advice.columns}
    select_use = [u for u in by_column["ods.events.uid"].uses if u.operation == "SELECT"]
    assert [(u.jobs, u.days) for u in select_use] == [(["weekly_report"], 46)]
    assert by_column["ods.events.uid"].reads_back_days == 46
    assert by_column["ods.events.payload"].unused  # the report reads uid (and dt) only
    assert advice.recommended_ttl_days == 47


# ---- end to end: hook events through ingestion (statements, parser, writer) into a graph, then advise ----------

TABLE_COLUMNS = ("uid", "app", "payload")
FIXED_START = date(2025, 1, 1)


def _ingest(g, queries: list[tuple[str, str, str]]) -> None:
    """Ingest (job, sql, start_time) as the collector does: native query events decoded, then written."""
    decoder = EventDecoder(CatalogIndex(SCHEMA))
    writer = LineageWriter(g)
    for offset, (job, sql, start) in enumerate(queries):
        event = query_event(sql, status="SUCCEEDED", job=job, start_time=start, engine="hive")
        writer.write_runs(decoder.decode(json.dumps(event).encode(), ("hooks", 0, offset)).items)


def test_a_fixed_start_date_survives_ingestion_and_means_no_advice() -> None:
    """Failed before: ingestion turned '2025-01-01' into ${bizdate}, so a read since 2025 became a 1-day read."""
    g = connect("memory:")
    _ingest(
        g,
        [
            (
                "since_2025",
                "INSERT OVERWRITE TABLE dwd.users SELECT uid FROM ods.events WHERE dt >= '2025-01-01'",
                "2026-01-05T02:00:00.000Z",
            )
        ],
    )
    uid = next(c for c in advise(g, "ods.events", margin_days=2).columns if c.column == "ods.events.uid")
    assert uid.recommended_ttl_days is None
    assert uid.uses[0].predicate == "dt >= 2025-01-01"
    assert uid.no_advice_reason == "no advice: since_2025: fixed date 2025-01-01"
    assert advise(g, "ods.events").no_advice_reason == "no advice: since_2025: fixed date 2025-01-01"


def test_a_read_of_twenty_partitions_keeps_twenty_with_no_margin() -> None:
    """Failed before: dt >= date_sub(bizdate, 19) reads 20 partitions but counted as 19 days."""
    g = connect("memory:")
    sql = "INSERT OVERWRITE TABLE dws.apps SELECT app FROM ods.events WHERE dt >= date_sub('2026-01-05', 19)"
    _ingest(
        g,
        [
            ("app_20", sql, "2026-01-05T02:00:00.000Z"),
            ("app_20", sql.replace("01-05", "01-06"), "2026-01-06T02:00:00.000Z"),
        ],
    )
    app = next(c for c in advise(g, "ods.events", margin_days=0).columns if c.column == "ods.events.app")
    assert [u.predicate for u in app.uses] == ["dt >= date_sub('${bizdate}', 19)"]  # two runs, one process
    assert app.recommended_ttl_days == 20


def _months_back(day: date, months: int) -> date:
    month = day.month - 1 - months
    year, month = day.year + month // 12, month % 12 + 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def _random_reader(rng: random.Random, bizdate: date) -> tuple[str, int | None, bool]:
    """(WHERE clause with ${bizdate}, partitions it really reads back from bizdate (None: unbounded), whether the
    advice must equal that window exactly)."""
    n = rng.randrange(0, 40)
    kinds = "date_sub date_sub_gt date_add add_months between in equal literal_range fixed fixed_equal none"
    kind = rng.choice(kinds.split())
    if kind == "date_sub":
        return f"dt >= date_sub('${{bizdate}}', {n})", n + 1, True
    if kind == "date_sub_gt":
        return f"dt > date_sub('${{bizdate}}', {n + 1})", n + 1, True
    if kind == "date_add":
        return f"dt >= date_add('${{bizdate}}', -{n})", n + 1, True
    if kind == "add_months":  # a month is taken as 31 days: never short, not exact
        months = rng.randrange(1, 4)
        return (
            f"dt >= add_months('${{bizdate}}', -{months})",
            (bizdate - _months_back(bizdate, months)).days + 1,
            False,
        )
    if kind == "between":
        return f"dt BETWEEN date_sub('${{bizdate}}', {n}) AND '${{bizdate}}'", n + 1, True
    if kind == "in":
        backs = sorted(rng.sample(range(0, 40), rng.randrange(1, 4)))
        items = ", ".join("'${bizdate}'" if b == 0 else f"date_sub('${{bizdate}}', {b})" for b in backs)
        return f"dt IN ({items})", max(backs) + 1, True
    if kind == "equal":
        return "dt = '${bizdate}'", 1, True
    if kind == "literal_range":  # a resolved start date: a fixed start for all one run can tell
        start = (bizdate - timedelta(days=n + 2)).isoformat()
        return f"dt BETWEEN '{start}' AND '${{bizdate}}'", n + 3, False
    if kind == "fixed":
        return f"dt >= '{FIXED_START.isoformat()}'", None, False
    if kind == "fixed_equal":
        return f"dt = '{FIXED_START.isoformat()}'", None, False
    return "", None, False  # no filter at all


def test_property_advice_is_never_shorter_than_any_readers_window() -> None:
    """Random readers (windows, IN lists, literal ranges, fixed dates, no filter), scheduled (SET hivevar) or
    resolved as engines log them, run on the business day or the day after, ingested, advised with no margin:
    every column's advice covers every reader's window, is exact when all readers are exact windows, and is
    none, with the reason, when one is unbounded. Failed before: fixed dates became ${bizdate} and windows were
    one partition short."""
    rng = random.Random(20261124)
    for trial in range(30):
        g = connect("memory:")
        windows: dict[str, list[tuple[int | None, bool]]] = {column: [] for column in TABLE_COLUMNS}
        queries = []
        for number in range(rng.randrange(1, 6)):
            bizdate = date(2026, 1, 1) + timedelta(days=rng.randrange(0, 60))
            where, window, exact = _random_reader(rng, bizdate)
            columns = rng.sample(TABLE_COLUMNS, rng.randrange(1, 4))
            template = (
                f"INSERT OVERWRITE TABLE dwd.out_{trial}_{number} "
                f"SELECT {', '.join(columns)} FROM ods.events {'WHERE ' if where else ''}{where}"
            )
            start = bizdate + timedelta(days=rng.randrange(0, 2))
            if rng.random() < 0.5:
                sql = f"SET hivevar:bizdate={bizdate.isoformat()};\n{template}"
            else:
                sql = template.replace("${bizdate}", bizdate.isoformat())
            queries.append((f"job{number}", sql, f"{start.isoformat()}T03:00:00.000Z"))
            for column in columns:
                windows[column].append((window, exact))
        _ingest(g, queries)
        advice = {c.column.rsplit(".", 1)[1]: c for c in advise(g, "ods.events", margin_days=0).columns}
        for column, reads in windows.items():
            advised = advice[column].recommended_ttl_days
            context = f"trial {trial}, {column}: {queries}"
            if not reads:
                assert advice[column].unused, context
            elif any(window is None for window, _ in reads):
                assert advised is None and advice[column].no_advice_reason, context
            elif all(exact for _, exact in reads):
                assert advised == max(window for window, _ in reads), context  # type: ignore[type-var]
            else:
                assert advised is None or advised >= max(window for window, _ in reads), context  # type: ignore[type-var]


def test_the_command_names_the_unbounded_reader_instead_of_advising(tmp_path) -> None:
    url = f"embedded:{tmp_path / 'graph'}"
    g = connect(url)
    sql = "INSERT OVERWRITE TABLE dwd.users SELECT uid FROM ods.events WHERE dt >= '2025-01-01'"
    _ingest(g, [("since_2025", sql, "2026-01-05T02:00:00.000Z")])
    disconnect(g)
    result = CliRunner().invoke(cli, ["ttl", "advise", "ods.events", "--margin", "0", "--graph", url])
    assert result.exit_code == 0, result.output
    assert "table: no advice: since_2025: fixed date 2025-01-01" in result.output
    data = json.loads(
        CliRunner().invoke(cli, ["ttl", "advise", "ods.events", "--format", "json", "--graph", url]).output
    )
    assert data["recommended_ttl_days"] is None and "since_2025" in data["no_advice_reason"]


@pytest.mark.parametrize(
    ("where_first", "where_second", "expected"),
    [
        ("dt = '${bizdate}'", "", None),  # the second read takes every partition
        ("dt = '${bizdate}'", "dt >= date_sub('${bizdate}', 29)", 30),  # the widest read counts
        ("dt >= date_sub('${bizdate}', 6)", "dt = '${bizdate}'", 7),
    ],
)
def test_a_table_read_twice_in_one_statement_is_advised_by_its_widest_read(
    where_first: str, where_second: str, expected: int | None
) -> None:
    """Failed before: the filters of both reads were ANDed, so the narrowest read decided and the advice dropped
    partitions the other read still reads."""
    g = connect("memory:")
    second = f" WHERE {where_second}" if where_second else ""
    sql = (
        f"INSERT OVERWRITE TABLE dwd.users SELECT uid FROM ods.events WHERE {where_first} "
        f"UNION ALL SELECT uid FROM ods.events{second}"
    )
    _ingest(g, [("twice", sql.replace("${bizdate}", "2026-01-05"), "2026-01-05T02:00:00.000Z")])
    uid = next(c for c in advise(g, "ods.events", margin_days=0).columns if c.column == "ods.events.uid")
    assert uid.recommended_ttl_days == expected
    if expected is None:
        assert "one of its reads of the table" in uid.no_advice_reason


def test_a_self_join_is_advised_by_its_widest_side() -> None:
    g = connect("memory:")
    sql = (
        "INSERT OVERWRITE TABLE dwd.users SELECT a.uid FROM ods.events a JOIN ods.events b ON a.uid = b.uid "
        "WHERE a.dt = '2026-01-05' AND b.dt >= date_sub('2026-01-05', 13)"
    )
    _ingest(g, [("self_join", sql, "2026-01-05T02:00:00.000Z")])
    advice = advise(g, "ods.events", margin_days=0)
    assert {c.column: c.recommended_ttl_days for c in advice.columns}["ods.events.uid"] == 14
