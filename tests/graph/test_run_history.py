"""Run history retention: recent runs in full, older ones rolled up per process and day, on a real embedded store."""

from __future__ import annotations

import json
from datetime import date

import pytest

from lineage_platform.cli import invoke
from lineage_platform.errors import ConfigError
from lineage_platform.graph import close_all, connect
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


def _days(g) -> dict[str, dict]:
    rows = g.V().has_label("runDay").value_map().to_list()
    return {row["day"][0]: {key: values[0] for key, values in row.items()} for row in rows}


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


def test_compact_runs_command(tmp_path) -> None:
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


def test_create_by_stays_the_user_of_the_earliest_run_after_it_is_rolled_up(g) -> None:
    first = RunInfo("SUCCEEDED", user="founder", start_time="2026-01-01T01:00:00Z")
    LineageWriter(g).write_runs([(LOAD, first), *_runs(range(2, 6), failed_day=3)])
    compact_runs(g, keep_days=1, as_of=date(2026, 1, 5))
    LineageWriter(g).write_runs(_runs(range(5, 7), failed_day=6))  # a later load recomputes provenance
    for label, name in (("process", None), ("table", "dwd.orders")):
        vertex = g.V().has_label(label) if name is None else g.V().has(label, "qualifiedName", name)
        assert vertex.values("createBy").next() == "founder"
