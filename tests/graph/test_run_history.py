"""Run history retention: recent runs in full, older ones rolled up per process and day, then month, on a real
embedded store and on the reference servers."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest

from lineage_platform.cli import invoke
from lineage_platform.errors import ConfigError
from lineage_platform.graph import close_all, connect, disconnect
from lineage_platform.graph.run_history import compact_runs
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.model import ColumnEdge, Dataset, RunInfo, StatementLineage
from lineage_platform.trace import trace

LOAD = StatementLineage(
    index=0,
    operation="INSERT_OVERWRITE",
    sql="INSERT OVERWRITE TABLE dwd.orders SELECT id FROM ods.orders",
    inputs=(Dataset("ods.orders"),),
    outputs=(Dataset("dwd.orders"),),
    column_edges=(ColumnEdge("ods.orders.id", "dwd.orders.id"),),
)


def _runs(days: range, failed_day: int) -> list[tuple[StatementLineage, RunInfo]]:
    """One run a day at 01:00, plus a failed retry at 03:00 on ``failed_day``."""
    runs = [
        (LOAD, RunInfo("SUCCEEDED", user="etl", start_time=f"2026-01-{day:02d}T01:00:00Z")) for day in days
    ]
    return [*runs, (LOAD, RunInfo("FAILED", user="etl", start_time=f"2026-01-{failed_day:02d}T03:00:00Z"))]


def _days(g, label: str = "runDay", key: str = "day") -> dict[str, dict]:
    rows = g.V().has_label(label).value_map().to_list()
    return {row[key][0]: {k: values[0] for k, values in row.items()} for row in rows}


def _months(g) -> dict[str, dict]:
    return _days(g, "runMonth", "month")


def _daily(first: date, last: date) -> list[tuple[StatementLineage, RunInfo]]:
    """One successful run a day at 01:00 from ``first`` to ``last``, plus a failed retry at 03:00 on ``first``."""
    days = [first + timedelta(days=n) for n in range((last - first).days + 1)]
    runs = [(LOAD, RunInfo("SUCCEEDED", user="etl", start_time=f"{day}T01:00:00Z")) for day in days]
    return [*runs, (LOAD, RunInfo("FAILED", user="etl", start_time=f"{first}T03:00:00Z"))]


def _counts(g) -> dict[str, int]:
    return {label: g.V().has_label(label).count().next() for label in ("run", "runDay", "runMonth")}


@pytest.fixture
def g(tmp_path):
    graph = connect(
        f"embedded:{tmp_path / 'graph'}"
    )  # strict schema: what JanusGraph would refuse fails here
    yield graph
    close_all()


def test_old_runs_are_rolled_up_per_day_and_recent_ones_kept(g) -> None:
    LineageWriter(g).write_runs(_runs(range(1, 11), failed_day=2))
    summary = compact_runs(g, keep_days=3, as_of=date(2026, 1, 10))
    kept = sorted(g.V().has_label("run").values("startTime").to_list())
    assert kept == [f"2026-01-{day:02d}T01:00:00Z" for day in range(7, 11)]
    days = _days(g)
    assert sorted(days) == [f"2026-01-{day:02d}" for day in range(1, 7)]
    assert summary.runs_rolled_up == 7 and summary.days_written == 6 and summary.processes == 1
    assert days["2026-01-02"]["runs"] == 2
    assert json.loads(days["2026-01-02"]["statuses"]) == {"FAILED": 1, "SUCCEEDED": 1}
    assert (days["2026-01-02"]["firstStart"], days["2026-01-02"]["lastStart"]) == (
        "2026-01-02T01:00:00Z",
        "2026-01-02T03:00:00Z",
    )
    process = g.V().has_label("process").next()
    assert g.V(process).out("hasRunDay").count().next() == 6


def test_compacting_again_or_after_a_reload_counts_each_run_once(g) -> None:
    writer = LineageWriter(g)
    writer.write_runs(_runs(range(1, 6), failed_day=1))
    compact_runs(g, keep_days=1, as_of=date(2026, 1, 5))
    first = _days(g)
    assert compact_runs(g, keep_days=1, as_of=date(2026, 1, 5)).runs_rolled_up == 0
    LineageWriter(g).write_runs(
        _runs(range(1, 6), failed_day=1)
    )  # the same logs loaded again re-create old runs
    again = compact_runs(g, keep_days=1, as_of=date(2026, 1, 5))
    assert again.runs_rolled_up == 4  # days 1-3 and the retry: dropped again, but already counted
    assert _days(g) == first
    assert g.V().has_label("run").count().next() == 2  # 2026-01-04 and 2026-01-05


def test_a_later_compaction_adds_to_the_day_already_rolled_up(g) -> None:
    LineageWriter(g).write_runs([(LOAD, RunInfo("SUCCEEDED", user="etl", start_time="2026-01-01T01:00:00Z"))])
    compact_runs(g, keep_days=0, as_of=date(2026, 1, 2))
    late = RunInfo("FAILED", user="etl", start_time="2026-01-01T00:30:00Z")  # an older log found later
    LineageWriter(g).write_runs([(LOAD, late)])
    compact_runs(g, keep_days=0, as_of=date(2026, 1, 2))
    day = _days(g)["2026-01-01"]
    assert (day["runs"], day["firstStart"], day["lastStart"]) == (
        2,
        "2026-01-01T00:30:00Z",
        "2026-01-01T01:00:00Z",
    )
    assert json.loads(day["statuses"]) == {"FAILED": 1, "SUCCEEDED": 1}


def test_traces_never_walk_runs_or_roll_ups(g) -> None:
    LineageWriter(g).write_runs(_runs(range(1, 11), failed_day=2))

    def lineage(level: str) -> tuple[set[str], set[str]]:
        result = trace(g, "dwd.orders" if level == "table" else "dwd.orders.id", direction="up", level=level)
        assert {node.label for node in result.nodes.values()} <= {"table", "column"}
        return {n.qualified_name for n in result.nodes.values()}, {e.process for e in result.edges}

    before = {level: lineage(level) for level in ("table", "column")}
    compact_runs(g, keep_days=3, as_of=date(2026, 1, 10))
    assert {level: lineage(level) for level in ("table", "column")} == before
    assert before["table"][0] == {"dwd.orders", "ods.orders"}


def test_negative_retention_is_refused(g) -> None:
    with pytest.raises(ConfigError, match="negative"):
        compact_runs(g, keep_days=-1)


def test_compact_runs_command(tmp_path, capsys) -> None:
    url = f"embedded:{tmp_path / 'graph'}"
    LineageWriter(connect(url)).write_runs(_runs(range(1, 6), failed_day=1))
    close_all()
    result = invoke(["graph", "compact-runs", "--graph", url, "--keep-days", "2", "--as-of", "2026-01-05"])
    assert result.success, result.exception
    g = connect(url)
    assert g.V().has_label("run").count().next() == 3 and g.V().has_label("runDay").count().next() == 2
    close_all()
    bad = invoke(["graph", "compact-runs", "--graph", url, "--keep-days", "2", "--as-of", "yesterday"])
    assert not bad.success
    months = invoke(
        [
            "graph",
            "compact-runs",
            "--graph",
            url,
            "--keep-days",
            "2",
            "--keep-day-rollups",
            "2",
            "--as-of",
            "2026-01-05",
        ]
    )
    assert months.success, months.exception
    assert "month roll-ups written: 1" in capsys.readouterr().out
    g = connect(url)
    assert g.V().has_label("runDay").count().next() == 0 and g.V().has_label("runMonth").count().next() == 1
    close_all()
    refused = invoke(["graph", "compact-runs", "--graph", url, "--keep-days", "9", "--keep-day-rollups", "2"])
    assert not refused.success and "--keep-day-rollups 2 is less than --keep-days 9" in str(refused.exception)


def test_create_by_stays_the_user_of_the_earliest_run_after_it_is_rolled_up(g) -> None:
    first = RunInfo("SUCCEEDED", user="founder", start_time="2026-01-01T01:00:00Z")
    LineageWriter(g).write_runs([(LOAD, first), *_runs(range(2, 6), failed_day=3)])
    compact_runs(g, keep_days=1, as_of=date(2026, 1, 5))
    LineageWriter(g).write_runs(_runs(range(5, 7), failed_day=6))  # a later load recomputes provenance
    for label, name in (("process", None), ("table", "dwd.orders")):
        vertex = g.V().has_label(label) if name is None else g.V().has(label, "qualifiedName", name)
        assert vertex.values("createBy").next() == "founder"


def test_day_roll_ups_older_than_the_second_horizon_move_into_months(g) -> None:
    LineageWriter(g).write_runs(_daily(date(2026, 1, 1), date(2026, 3, 10)))
    summary = compact_runs(g, keep_days=3, keep_day_rollups=30, as_of=date(2026, 3, 10))
    # runs from 2026-03-07 kept; days from 2026-02-08 to 2026-03-06 rolled up per day; older ones per month
    assert _counts(g) == {"run": 4, "runDay": 27, "runMonth": 2}
    months = _months(g)
    assert (months["2026-01"]["runs"], months["2026-02"]["runs"]) == (32, 7)
    assert json.loads(months["2026-01"]["statuses"]) == {"FAILED": 1, "SUCCEEDED": 31}
    assert (months["2026-01"]["firstStart"], months["2026-01"]["lastStart"]) == (
        "2026-01-01T01:00:00Z",
        "2026-01-31T01:00:00Z",
    )
    assert months["2026-02"]["lastStart"] == "2026-02-07T01:00:00Z"
    assert summary.runs_rolled_up == 66 and summary.months_written == 2 and summary.days_written == 27
    process = g.V().has_label("process").next()
    assert g.V(process).out("hasRunMonth").count().next() == 2


def test_months_made_later_from_day_roll_ups_equal_months_made_at_once(tmp_path) -> None:
    def rolled_up(name: str, steps: list[int | None]) -> tuple[dict, dict, dict]:
        graph = connect(f"embedded:{tmp_path / name}")
        LineageWriter(graph).write_runs(_daily(date(2026, 1, 1), date(2026, 3, 10)))
        for keep_day_rollups in steps:
            compact_runs(graph, keep_days=3, keep_day_rollups=keep_day_rollups, as_of=date(2026, 3, 10))
        drop = ("createTime",)
        months = {m: {k: v for k, v in row.items() if k not in drop} for m, row in _months(graph).items()}
        days = {d: {k: v for k, v in row.items() if k not in drop} for d, row in _days(graph).items()}
        return months, days, _counts(graph)

    assert rolled_up("at-once", [30]) == rolled_up("later", [None, 30])
    close_all()


def test_reloading_old_logs_counts_each_run_once_across_days_and_months(g) -> None:
    logs = _daily(date(2026, 1, 1), date(2026, 3, 10))
    LineageWriter(g).write_runs(logs)
    compact_runs(g, keep_days=3, keep_day_rollups=30, as_of=date(2026, 3, 10))
    first = (_months(g), _days(g))
    LineageWriter(g).write_runs(logs)  # every old run is created again
    again = compact_runs(g, keep_days=3, keep_day_rollups=30, as_of=date(2026, 3, 10))
    assert again.runs_rolled_up == 66
    assert (_months(g), _days(g)) == first
    # a wider second horizon later: re-created runs of days already in a month are not counted into a day
    LineageWriter(g).write_runs(logs)
    compact_runs(g, keep_days=3, keep_day_rollups=60, as_of=date(2026, 3, 10))
    assert _months(g) == first[0]
    assert sum(day["runs"] for day in _days(g).values()) == sum(day["runs"] for day in first[1].values())


def test_a_second_horizon_shorter_than_the_first_is_refused(g) -> None:
    with pytest.raises(ConfigError, match="less than --keep-days"):
        compact_runs(g, keep_days=30, keep_day_rollups=7)


@pytest.mark.parametrize("server", ["tinkerpop_url", "janusgraph_url"])
def test_month_roll_ups_on_the_reference_servers(request, server) -> None:
    source = connect(request.getfixturevalue(server))
    source.V().drop().iterate()
    try:
        LineageWriter(source).write_runs(_daily(date(2026, 1, 1), date(2026, 2, 20)))
        compact_runs(source, keep_days=3, keep_day_rollups=10, as_of=date(2026, 2, 20))
        assert _counts(source) == {"run": 4, "runDay": 7, "runMonth": 2}
        assert {m: row["runs"] for m, row in _months(source).items()} == {"2026-01": 32, "2026-02": 9}
    finally:
        disconnect(source)
