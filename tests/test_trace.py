"""Lineage tracing: the DAG provenance paper's example, cycles, deep chains, fan-out caps, suggestions."""

from __future__ import annotations

import importlib
import itertools
from pathlib import Path

import pytest
from gremlin_python.driver.remote_connection import RemoteConnection
from gremlin_python.process.anonymous_traversal import traversal

from lineage_platform.errors import GraphError
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.model import ColumnEdge, Dataset, StatementLineage
from lineage_platform.sql import extract_lineage
from lineage_platform.trace import trace

PAPER = Path(__file__).parent / "fixtures" / "dag_provenance_paper.sql"


@pytest.fixture
def paper_graph(g):
    LineageWriter(g).write(extract_lineage(PAPER.read_text()))
    return g


def _names(lineage) -> set[str]:
    return {node.qualified_name for node in lineage.nodes.values()}


def test_paper_example_upstream_of_avgsalary(paper_graph) -> None:
    lineage = trace(paper_graph, "default.avgsalary", direction="up")
    assert _names(lineage) == {
        "default.avgsalary",
        "default.empinfo",
        "default.employee",
        "default.department",
        "hdfs:///data/empinfo.csv",
    }
    operations = {lineage.processes[e.process].operation for e in lineage.edges}
    assert operations == {"CREATE_AS_SELECT", "INSERT", "LOAD"}
    assert not lineage.partial


def test_paper_example_downstream_of_avgsalary(paper_graph) -> None:
    lineage = trace(paper_graph, "default.avgsalary", direction="down", include_selects=True)
    names = _names(lineage)
    assert "hdfs:///export/avgsalary.csv" in names
    results = [n for n in names if n.startswith("$result:")]
    assert len(results) == 1  # the temporary result of the SELECT
    assert names == {"default.avgsalary", "hdfs:///export/avgsalary.csv", results[0]}
    assert {lineage.processes[e.process].operation for e in lineage.edges} == {"EXPORT", "SELECT"}


def test_selects_are_left_out_unless_asked_for(paper_graph) -> None:
    lineage = trace(paper_graph, "default.avgsalary", direction="down")
    assert _names(lineage) == {"default.avgsalary", "hdfs:///export/avgsalary.csv"}
    assert {lineage.processes[e.process].operation for e in lineage.edges} == {"EXPORT"}


def test_column_trace_follows_selects_into_their_result_only_when_asked(g) -> None:
    LineageWriter(g).write(
        extract_lineage(
            "INSERT INTO db.o SELECT a AS b FROM db.t; SELECT upper(a) AS shout FROM db.t WHERE dt = '2024-01-01'"
        )
    )
    assert _names(trace(g, "db.t.a", direction="down")) == {"db.t.a", "db.o.b"}
    names = _names(trace(g, "db.t.a", direction="down", include_selects=True))
    [shout] = [n for n in names if n.startswith("$result:")]
    assert names == {"db.t.a", "db.o.b", shout} and shout.endswith(".shout")


def test_paper_example_column_level(paper_graph) -> None:
    lineage = trace(paper_graph, "default.avgsalary.avg_salary", direction="up")
    assert lineage.level == "column"
    assert _names(lineage) == {
        "default.avgsalary.avg_salary",
        "default.empinfo.salary",
        "default.employee.salary",
    }
    by_target = {lineage.nodes[e.target].qualified_name: e.transform for e in lineage.edges}
    assert by_target["default.avgsalary.avg_salary"] == "AGGREGATION"
    tree = lineage.to_tree()
    assert tree.splitlines()[0] == "default.avgsalary.avg_salary"
    assert "default.employee.salary" in tree


def _chain(length: int, *, cycle: bool = False) -> list[StatementLineage]:
    statements = []
    names = [f"db.t{i}" for i in range(length)]
    pairs = list(itertools.pairwise(names))
    if cycle:
        pairs.append((names[-1], names[0]))
    for index, (source, target) in enumerate(pairs):
        statements.append(
            StatementLineage(
                index=index,
                operation="INSERT",
                sql=f"INSERT INTO {target} SELECT c FROM {source}",
                inputs=(Dataset(source),),
                outputs=(Dataset(target),),
                column_edges=(ColumnEdge(f"{source}.c", f"{target}.c"),),
            )
        )
    return statements


def test_deep_chain_has_no_small_depth_cap_and_depth_limits_hops(g) -> None:
    LineageWriter(g).write(_chain(26))
    full = trace(g, "db.t25", direction="up")
    assert len(full.nodes) == 26 and max(n.depth for n in full.nodes.values()) == 25
    column = trace(g, "db.t25.c", direction="up")
    assert len(column.nodes) == 26
    assert len(trace(g, "db.t25", direction="up", depth=3).nodes) == 4


def test_cycles_across_runs_terminate(g) -> None:
    LineageWriter(g).write(_chain(4, cycle=True))
    both = trace(g, "db.t1", direction="both")
    assert _names(both) == {"db.t0", "db.t1", "db.t2", "db.t3"}
    assert "(cycle)" in trace(g, "db.t1", direction="up").to_tree()


def test_fanout_cap_marks_has_more_and_limit_cuts_with_a_note(g) -> None:
    fan_in = [
        StatementLineage(
            index=i,
            operation="INSERT",
            sql=f"INSERT INTO db.sink SELECT c FROM db.src{i}",
            inputs=(Dataset(f"db.src{i}"),),
            outputs=(Dataset("db.sink"),),
        )
        for i in range(30)
    ]
    LineageWriter(g).write(fan_in)
    capped = trace(g, "db.sink", direction="up", fanout=10)
    assert len(capped.nodes) == 11
    assert capped.nodes[capped.root].more_inputs
    assert "has more" in capped.to_tree()
    cut = trace(g, "db.sink", direction="up", limit=5)
    assert len(cut.nodes) == 5 and cut.partial
    assert "--limit" in cut.notes[0]


def test_unknown_name_suggests_the_closest(paper_graph) -> None:
    with pytest.raises(GraphError) as error:
        trace(paper_graph, "default.avgsalry")
    assert "default.avgsalary" in str(error.value)


def test_json_dot_and_html_views(paper_graph) -> None:
    lineage = trace(paper_graph, "default.avgsalary", direction="both")
    data = lineage.to_dict()
    assert {n["qualified_name"] for n in data["nodes"]} == _names(lineage)
    assert len(data["edges"]) == len(lineage.edges)
    dot = lineage.to_dot()
    assert dot.startswith("digraph lineage {") and dot.count("->") == len(lineage.edges)
    html = lineage.to_html()
    assert html.count("window.LINEAGE_VIEW = offline.view") == 1 and "default.empinfo" in html
    assert 'src="http' not in html and "<link" not in html  # self-contained: nothing fetched when opened


def test_impact_lists_downstream_datasets_with_their_jobs_and_users(g) -> None:
    from lineage_platform.impact import impact
    from lineage_platform.model import RunInfo

    writer = LineageWriter(g)
    for index, statement in enumerate(_chain(4)):
        run = RunInfo(
            status="SUCCESS", user=f"user{index}", job=f"job{index}", start_time=f"2024-01-0{index + 1}"
        )
        writer.write([statement], run)
    report = impact(g, "db.t1")
    assert [(d.qualified_name, d.hops) for d in report.impacted] == [("db.t2", 1), ("db.t3", 2)]
    assert report.impacted[0].jobs == {"job1", "job2"}  # written by job1, read by job2
    assert report.impacted[1].users == {"user2"}
    assert report.impacted[1].last_run == "2024-01-03"


def test_impact_counts_plain_selects_as_consumers(g) -> None:
    from lineage_platform.impact import impact
    from lineage_platform.model import RunInfo

    writer = LineageWriter(g)
    writer.write(
        extract_lineage("INSERT INTO db.o SELECT a FROM db.t"),
        RunInfo("SUCCEEDED", job="etl", user="e", start_time="2024-01-07"),
    )
    report_run = RunInfo("SUCCEEDED", job="weekly_report", user="ann", start_time="2024-01-08")
    writer.write(extract_lineage("SELECT a, count(1) AS n FROM db.o GROUP BY a"), report_run)

    report = impact(g, "db.t")
    by_name = {d.qualified_name: d for d in report.impacted}
    [result] = [d for d in report.impacted if d.kind == "result"]
    assert result.hops == 2 and result.jobs == {"weekly_report"} and result.users == {"ann"}
    assert by_name["db.o"].jobs == {"etl", "weekly_report"}  # written by etl, read by the report
    assert result.last_run == "2024-01-08"

    without = impact(g, "db.t", include_selects=False)
    assert [d.qualified_name for d in without.impacted] == ["db.o"]
    assert without.impacted[0].jobs == {"etl"}


def test_impact_and_trace_commands_take_the_selects_option(tmp_path) -> None:
    import json

    from click.testing import CliRunner

    from lineage_platform.cli import cli
    from lineage_platform.graph import connect

    graph = f"embedded:{tmp_path / 'graph'}"
    LineageWriter(connect(graph)).write(extract_lineage("SELECT a FROM db.t"))
    runner = CliRunner()
    shown = runner.invoke(cli, ["impact", "db.t", "--graph", graph, "--format", "json"])
    assert shown.exit_code == 0, shown.output
    assert [d["kind"] for d in json.loads(shown.output)["impacted"]] == ["result"]
    hidden = runner.invoke(cli, ["impact", "db.t", "--graph", graph, "--format", "json", "--no-selects"])
    assert json.loads(hidden.output)["impacted"] == []
    traced = runner.invoke(
        cli, ["trace", "db.t", "--down", "--graph", graph, "--format", "json", "--selects"]
    )
    assert "$result:" in traced.output
    plain = runner.invoke(cli, ["trace", "db.t", "--down", "--graph", graph, "--format", "json"])
    assert "$result:" not in plain.output


def test_a_table_traced_at_column_level_is_traced_from_all_its_columns(paper_graph) -> None:
    column_level = trace(paper_graph, "default.avgsalary", direction="up", level="column")
    columns = {column_level.nodes[c].qualified_name for c in column_level.starts}
    assert columns == {"default.avgsalary.dept", "default.avgsalary.avg_salary"}
    assert _names(column_level) - columns - {"default.avgsalary"} == {
        "default.empinfo.salary",
        "default.employee.salary",
        "default.empinfo.dept",
        "default.department.name",
    }
    for column in column_level.starts:  # the same as tracing each column by itself
        alone = trace(paper_graph, column_level.nodes[column].qualified_name, direction="up")
        assert _names(alone) <= _names(column_level)
    tree = column_level.to_tree().splitlines()
    assert tree[0] == "default.avgsalary"
    assert {line.split(" ", 1)[1] for line in tree if line[:2] in ("├─", "└─")} == columns
    assert "│     └─▲ default.employee.salary [INSERT IDENTITY]" in tree  # under avg_salary's branch


class _CountingConnection(RemoteConnection):
    """A remote connection that counts the requests it passes on to the graph's own connection."""

    def __init__(self, inner: RemoteConnection) -> None:
        super().__init__(inner.url, inner.traversal_source)
        self.inner = inner
        self.requests = 0

    def submit(self, bytecode):
        self.requests += 1
        return self.inner.submit(bytecode)


@pytest.mark.parametrize("column", ["", ".c"], ids=["table", "column"])
def test_the_requests_of_a_trace_do_not_grow_with_its_depth(g, column) -> None:
    LineageWriter(g).write(_chain(13))
    counted = _CountingConnection(
        g.traversal_strategies.traversal_strategies[0].remote_connection
    )  # RemoteStrategy
    source = traversal().with_remote(counted)

    def requests(name: str, **options) -> tuple[int, int]:
        counted.requests = 0
        lineage = trace(source, name + column, **options)
        return counted.requests, max(abs(n.depth) for n in lineage.nodes.values())

    short, deep = requests("db.t2"), requests("db.t12")
    assert short[1] == 2 and deep[1] == 12  # the chains were walked to their start
    assert short[0] == deep[0] == (1 if not column else 2)  # the name with its walk (+ column provenance)
    bounded, deeper = requests("db.t12", depth=2), requests("db.t12", depth=10)
    assert (bounded[1], deeper[1]) == (2, 10)
    assert bounded[0] == deeper[0] == short[0] + 1  # and the leaves the depth left unexpanded
    both = requests("db.t6", direction="both")
    assert both[1] == 6 and both[0] == short[0] + 1  # the walk downstream


def test_a_walk_past_the_time_limit_stops_with_a_note(g, request) -> None:
    if request.node.callspec.params["g"] in ("tinkergraph", "janusgraph"):
        pytest.skip("a JVM server may walk 200 vertices within the 1 ms this test allows")
    LineageWriter(g).write(_chain(200))
    lineage = trace(g, "db.t199", direction="up", timeout=0.001)
    assert lineage.partial and "time limit reached" in lineage.notes[0]
    assert len(lineage.nodes) < 200
    assert len(trace(g, "db.t199", direction="up").nodes) == 200


@pytest.mark.parametrize("column", ["", ".c"], ids=["table", "column"])
def test_since_keeps_the_lineage_of_processes_that_ran_after_it(g, column) -> None:
    from lineage_platform.model import RunInfo

    writer = LineageWriter(g)
    for statement, day in zip(_chain(4), ("2024-01-01", "2024-03-01", "2024-01-02"), strict=True):
        writer.write([statement], RunInfo(status="SUCCESS", start_time=day))
    assert _names(trace(g, "db.t3" + column, direction="up")) == {f"db.t{i}{column}" for i in range(4)}
    recent = trace(g, "db.t2" + column, direction="up", since="2024-02-01")
    assert _names(recent) == {"db.t2" + column, "db.t1" + column}  # t0 -> t1 ran before
    assert _names(trace(g, "db.t1" + column, direction="down", since="2024-02-01")) == {
        "db.t1" + column,
        "db.t2" + column,
    }


def test_a_served_trace_answer_bigger_than_a_frame_arrives_in_batches(monkeypatch) -> None:
    """The walk's rows are separate results, which the server sends in batches: however big the walk, no frame
    holds it all (here the client takes frames of 64 KB; the trace's rows take ~4 times that)."""
    from lineage_platform.graph import connect, disconnect
    from lineage_platform.graph.connect import open_embedded
    from lineage_platform.graph.embedded.server import BackgroundServer, ServerSettings

    # (the module, not the package's connect() of the same name)
    monkeypatch.setattr(
        importlib.import_module("lineage_platform.graph.connect"), "_MAX_MESSAGE_BYTES", 64 * 1024
    )
    graph = open_embedded(None)
    with BackgroundServer(graph, ServerSettings(port=0)) as server:
        g = connect(server.url)
        try:
            LineageWriter(g).write(_chain(300))
            lineage = trace(g, "db.t299", direction="up")
        finally:
            disconnect(g)
    assert len(lineage.nodes) == 300 and max(n.depth for n in lineage.nodes.values()) == 299
