"""The Spark bulk load end to end, on a small generated sample, into embedded graphs at temporary paths."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from gremlin_python.process.traversal import T

from lineage_platform.graph import connect
from lineage_platform.ingest.budget import ParseBudget
from lineage_platform.ingest.bulk_load import LoadOptions, LoadSummary, bulk_load
from lineage_platform.ingest.readers import read_text
from lineage_platform.ingest.records import FAILED, QueryRecord
from lineage_platform.ingest.sample_logs import SampleSummary
from lineage_platform.ingest.statements import prepare_query
from tests.graph_contents import edge_rows
from tests.ingest.conftest import files_of

pytestmark = [pytest.mark.slow, pytest.mark.spark]
KILL_TIMEOUT_SECONDS = 180  # the subprocess starts its own JVM, slow on a busy machine


def _options(sample: SampleSummary, graph: Path, state: Path, **extra: Any) -> LoadOptions:
    settings = {"graph_url": f"embedded:{graph}", "checkpoint_every": 10, **extra}
    return LoadOptions(
        paths=(str(sample.out_dir / "query-log"),),
        master="local[2]",
        schema=json.loads((sample.out_dir / "catalog.json").read_text()),
        state_dir=state,
        **settings,
    )


def _expected(sample: SampleSummary) -> dict[str, int]:
    """What a plain Python pass over the same logs counts."""
    records = bad = failed = statements = 0
    keys = set()
    for path in files_of(sample, "query-log"):
        for item in read_text(path.read_text(encoding="utf-8"), str(path)):
            if not isinstance(item, QueryRecord):
                bad += 1
                continue
            records += 1
            if item.status == FAILED:
                failed += 1
                continue
            prepared = prepare_query(item.sql, item.engine, start_time=item.start_time)
            statements += len(prepared.statements)
            keys.update(statement.key for statement in prepared.statements)
    return {
        "records": records,
        "bad_records": bad,
        "failed_queries": failed,
        "statements": statements,
        "distinct": len(keys),
    }


def _snapshot(graph_url: str) -> tuple[set, set]:
    """Every vertex (label, qualifiedName) and edge (label, ends, properties but createTime) of a graph."""
    g = connect(graph_url)
    vertices = {
        (row["label"], row["name"])
        for row in g.V().project("label", "name").by(T.label).by("qualifiedName").to_list()
    }
    edges = edge_rows(g)
    return vertices, edges


@pytest.fixture(scope="module")
def loaded(
    spark: Any, sample: SampleSummary, tmp_path_factory: pytest.TempPathFactory
) -> tuple[LoadSummary, Path]:
    """One clean load of the sample's audit log, shared by the tests that inspect it."""
    root = tmp_path_factory.mktemp("load")
    return bulk_load(_options(sample, root / "graph", root / "state")), root


def test_summary_counts_match_a_plain_pass(loaded: tuple[LoadSummary, Path], sample: SampleSummary) -> None:
    summary, _ = loaded
    expected = _expected(sample)
    assert {name: getattr(summary, name) for name in expected} == expected
    assert expected["bad_records"] == sample.garbage["jsonl"]
    assert {"SET", "SHOW TABLES", "DESCRIBE", "EXPLAIN"} <= set(summary.without_lineage)
    assert summary.parsed + summary.parse_failed == summary.distinct
    assert summary.parsed > 0.9 * summary.distinct
    assert summary.batches == math.ceil(summary.distinct / 10) and summary.batches_resumed == 0
    assert summary.vertices > summary.distinct and summary.edges > summary.distinct
    assert summary.processes > 0.9 * summary.distinct and summary.runs > summary.processes


def test_graph_holds_upstream_tables_and_runs(
    loaded: tuple[LoadSummary, Path], sample: SampleSummary
) -> None:
    _, root = loaded
    catalog = json.loads((sample.out_dir / "catalog.json").read_text())
    target = next(name for name in sorted(catalog["dws"]) if name.startswith("dws_user_order_"))
    _, app, region, _ = target.rsplit("_", 3)
    g = connect(f"embedded:{root / 'graph'}")
    upstream = set(
        g.V()
        .has("table", "qualifiedName", f"dws.{target}")
        .in_("generated")
        .in_("usedBy")
        .values("qualifiedName")
        .to_list()
    )
    assert upstream == {f"dwd.dwd_user_{app}_{region}_di", f"dwd.dwd_order_{app}_{region}_di"}
    runs = (
        g.V()
        .has("table", "qualifiedName", f"dws.{target}")
        .in_("generated")
        .out("hasRun")
        .value_map()
        .to_list()
    )
    assert len(runs) >= 3  # one per successful day
    assert all(run["status"] == ["SUCCEEDED"] and run["job"] == [f"agg_{target}"] for run in runs)
    assert len({run["startTime"][0][:10] for run in runs}) == len(runs)


def test_rerun_adds_nothing(loaded: tuple[LoadSummary, Path], sample: SampleSummary) -> None:
    first, root = loaded
    graph = f"embedded:{root / 'graph'}"
    before = _snapshot(graph)
    resumed = bulk_load(_options(sample, root / "graph", root / "state"))
    assert resumed.batches_resumed == resumed.batches == first.batches
    again = bulk_load(_options(sample, root / "graph", root / "fresh-state"))
    assert again.batches_resumed == 0 and again.parsed == first.parsed
    assert (again.vertices, again.edges, again.processes, again.runs) == (0, 0, 0, 0)
    assert _snapshot(graph) == before


def test_side_file_holds_bad_records_with_reasons(loaded: tuple[LoadSummary, Path]) -> None:
    summary, _ = loaded
    rows = [json.loads(line) for line in Path(summary.rejected_file).read_text().splitlines()]
    assert len(rows) == summary.bad_records + summary.parse_failed
    for row in rows:
        assert set(row) == {"source", "line", "reason", "raw"} and row["reason"]
    invalid = [row for row in rows if row["reason"].startswith("not valid JSON")]
    assert invalid and all(row["source"].endswith(".jsonl") and row["line"] > 0 for row in invalid)
    for row in invalid:
        lines = Path(row["source"]).read_text(encoding="utf-8").splitlines()
        assert lines[row["line"] - 1] == row["raw"]


def _markers(state: Path) -> int:
    return sum(1 for _ in state.glob("*/batches/*.json"))


def test_resume_after_kill_equals_a_clean_run(
    loaded: tuple[LoadSummary, Path], sample: SampleSummary, tmp_path: Path
) -> None:
    clean_summary, clean_root = loaded
    graph, state = tmp_path / "graph", tmp_path / "state"
    command = [
        sys.executable,
        "-c",
        "from lineage_platform.cli import main; main()",
        "ingest",
        "logs",
        str(sample.out_dir / "query-log"),
        "--master",
        "local[1]",
        "--graph",
        f"embedded:{graph}",
        "--schema",
        str(sample.out_dir / "catalog.json"),
        "--state-dir",
        str(state),
        "--checkpoint-every",
        "2",
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + KILL_TIMEOUT_SECONDS
    try:
        while _markers(state) < 3 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    done_before = _markers(state)
    assert 3 <= done_before < math.ceil(clean_summary.distinct / 2), "the run was not killed half-way"

    resumed = bulk_load(_options(sample, graph, state, checkpoint_every=2))
    assert resumed.batches_resumed == done_before
    assert resumed.parsed == clean_summary.parsed
    assert _snapshot(f"embedded:{graph}") == _snapshot(f"embedded:{clean_root / 'graph'}")


def test_executors_write_to_a_served_graph(
    loaded: tuple[LoadSummary, Path], sample: SampleSummary, tmp_path: Path
) -> None:
    """With a ws:// graph the executors connect and write; the result equals the driver-written graph."""
    from lineage_platform.graph.embedded.engine import EmbeddedGraph
    from lineage_platform.graph.embedded.server import BackgroundServer, ServerSettings

    clean_summary, clean_root = loaded
    graph = EmbeddedGraph(tmp_path / "served", lock_timeout=5.0)
    try:
        with BackgroundServer(graph, ServerSettings(port=0)) as server:
            summary = bulk_load(
                _options(sample, tmp_path / "unused", tmp_path / "state", graph_url=server.url)
            )
            assert (summary.parsed, summary.batches) == (clean_summary.parsed, clean_summary.batches)
            assert summary.vertices == clean_summary.vertices and summary.edges == clean_summary.edges
            assert _snapshot(server.url) == _snapshot(f"embedded:{clean_root / 'graph'}")
    finally:
        graph.close()


def _good_lines(comment: str = "") -> list[str]:
    """Eight JSONL queries, each writing its own table and ending with the SQL comment ``comment``."""
    return [
        json.dumps(
            {
                "sql": f"INSERT INTO dw.t{n} SELECT a, b FROM ods.s{n} -- {comment}",
                "start_time": 1767225600000 + n,
            },
            ensure_ascii=False,
        )
        for n in range(8)
    ]


def _hostile_logs(folder: Path) -> Path:
    """A query log and a Spark event log mixing good queries with every kind of damage a load must survive."""
    folder.mkdir()
    good = _good_lines(comment="\u2028\x0b\x1c")  # characters str.splitlines breaks on
    hostile = [
        '{"sql": "INSERT INTO dw.x SELECT 1", "start_time": 1e20}',
        '{"sql": "INSERT INTO dw.x SELECT 1", "start_time": Infinity}',
        '{"sql": "INSERT INTO dw.x SELECT 1", "start_time": NaN}',
        '{"sql": "INSERT INTO dw.x SELECT 1", "start_time": "10000-01-01T00:00:00Z"}',
        '{"sql": "INSERT INTO dw.x SELECT 1", "end_time": "not-a-time"}',
        '{"sql": "INSERT INTO dw.x SELECT 1", "end_time": false}',
        "[" * 50_000 + "]" * 50_000,
    ]
    lines = [line for pair in zip(good, [*hostile, ""], strict=True) for line in pair if line]
    (folder / "q.jsonl").write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    start = {"Event": START_EVENT, "executionId": 1, "description": "INSERT INTO dw.y SELECT 1", "time": "x"}
    (folder / "app.log").write_text(json.dumps(start) + "\n", encoding="utf-8")
    return folder


START_EVENT = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"


def test_hostile_records_are_rejected_and_the_load_goes_on(spark: Any, tmp_path: Path) -> None:
    """Bad records are rejected by the readers; a statement too slow to parse is stopped by the parse budget in the
    executor and rejected; the good statements load."""
    logs = _hostile_logs(tmp_path / "logs")
    wide = ", ".join(f"c{n}" for n in range(4000))
    (logs / "wide.jsonl").write_text(
        json.dumps({"sql": f"INSERT INTO dw.wide SELECT {wide} FROM ods.s"}) + "\n"
    )
    options = LoadOptions(
        paths=(str(logs),),
        master="local[2]",
        graph_url=f"embedded:{tmp_path / 'g'}",
        state_dir=tmp_path / "s",
        budget=ParseBudget(max_seconds=0.5),
    )
    summary = bulk_load(options)
    assert (summary.records, summary.bad_records, summary.parsed, summary.parse_failed) == (9, 8, 8, 1)
    rows = [json.loads(line) for line in Path(summary.rejected_file).read_text().splitlines()]
    text_lines = (logs / "q.jsonl").read_text(encoding="utf-8").split("\n")
    for row in rows:
        if row["source"].endswith("q.jsonl"):
            assert text_lines[row["line"] - 1].rstrip("\r") == row["raw"]
    reasons = sorted(row["reason"].split(":")[0] for row in rows)
    assert reasons.count("bad start_time") == 4 and reasons.count("bad end_time") == 2
    assert "JSON nested too deep to read" in reasons
    (slow,) = [row for row in rows if "dw.wide" in row["raw"]]
    assert "longer than the parse budget of 0.5 s" in slow["reason"]


def test_a_resumed_load_counts_what_the_graph_holds(spark: Any, tmp_path: Path) -> None:
    """A batch written but not marked (a kill between the writes and the marker) is redone on the next run; the
    summary still counts the elements the first run created for it."""
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "q.jsonl").write_text("\n".join(_good_lines()) + "\n", encoding="utf-8")
    options = LoadOptions(
        paths=(str(logs),),
        master="local[2]",
        graph_url=f"embedded:{tmp_path / 'g'}",
        state_dir=tmp_path / "s",
        checkpoint_every=2,
    )
    clean = bulk_load(options)
    markers = sorted((tmp_path / "s").glob("*/batches/*.json"))
    assert len(markers) >= 2  # batches are hash partitions: some of the four may be empty
    markers[0].unlink()
    resumed = bulk_load(options)
    assert resumed.batches_resumed == len(markers) - 1
    counts = ("vertices", "edges", "processes", "runs")
    assert [getattr(resumed, name) for name in counts] == [getattr(clean, name) for name in counts]
    assert clean.processes == 8 and clean.vertices > 8
