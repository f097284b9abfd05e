"""The lineage DSL: its steps find the paper example's lineage on every backend, and its names are the schema's."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph_schema import load_schema
from graph_schema.vocabulary import MODULE_FILE, constant_name, vocabulary_module
from lineage_platform.graph import vocabulary
from lineage_platform.graph.dsl import (
    DOMAIN_STEPS,
    LineageTraversal,
    LineageTraversalSource,
    __,
    lineage_source,
)
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.labels.declare import declare, load_declarations
from lineage_platform.model import RunInfo
from lineage_platform.sql import extract_lineage

PAPER = Path(__file__).parent.parent / "fixtures" / "dag_provenance_paper.sql"


def test_checked_in_vocabulary_matches_the_schema() -> None:
    assert MODULE_FILE.read_text() == vocabulary_module(load_schema()), (
        "lineage_platform/graph/vocabulary.py is stale: run `python -m graph_schema.vocabulary`"
    )


def test_every_label_and_key_of_the_schema_has_its_constant() -> None:
    schema = load_schema()
    for namespace, names in (
        (vocabulary.VertexLabel, schema.vertex_labels),
        (vocabulary.EdgeLabel, schema.edge_labels),
        (vocabulary.Key, schema.property_keys),
    ):
        assert {getattr(namespace, constant_name(name)) for name in names} == set(names)
    assert vocabulary.LabelGroup.DATASET == ("table", "file", "topic")


@pytest.fixture
def paper(g) -> LineageTraversalSource:
    writer = LineageWriter(g)
    for statement in extract_lineage(PAPER.read_text()):
        run = RunInfo(
            "SUCCESS", user="ann", job=f"job{statement.index}", start_time=f"2024-01-0{statement.index + 1}"
        )
        writer.write([statement], run)
    return lineage_source(g)


def _names(traversal) -> list[str]:
    return sorted(traversal.qualified_name().to_list())


def test_table_hops_up_and_down(paper: LineageTraversalSource) -> None:
    assert _names(paper.datasets("default.avgsalary").upstream()) == ["default.empinfo"]
    assert _names(paper.datasets("default.avgsalary").upstream().upstream().dedup()) == [
        "default.department",
        "default.employee",
        "hdfs:///data/empinfo.csv",
    ]
    down = _names(paper.datasets("default.avgsalary").downstream())
    assert down[0].startswith("$result:") and down[1:] == ["hdfs:///export/avgsalary.csv"]
    without_selects = paper.datasets("default.avgsalary").readers(selects=False).outputs()
    assert _names(without_selects) == ["hdfs:///export/avgsalary.csv"]


def test_source_steps_pick_labels_and_names(paper: LineageTraversalSource) -> None:
    assert len(paper.datasets().to_list()) == 7  # 4 tables, 2 paths, 1 SELECT result
    assert _names(paper.datasets("default.employee", "default.department", "nope")) == [
        "default.department",
        "default.employee",
    ]
    assert _names(paper.tables("default.department").columns_of()) == [
        "default.department.id",
        "default.department.name",
    ]
    assert _names(paper.tables("default.employee").columns_of("default.employee.salary")) == [
        "default.employee.salary"
    ]
    assert _names(paper.columns("default.department.id").table_of()) == ["default.department"]
    assert _names(paper.named("default.empinfo.dept")) == ["default.empinfo.dept"]
    assert _names(paper.tables("hdfs:///data/empinfo.csv")) == []  # a path is no table


def test_column_hops_follow_strong_edges_unless_weak(paper: LineageTraversalSource) -> None:
    column = paper.columns("default.avgsalary.avg_salary")
    assert _names(column.upstream("column")) == ["default.empinfo.salary"]
    assert _names(paper.columns("default.empinfo.salary").downstream("column")) == [
        "default.avgsalary.avg_salary"
    ]
    # GROUP BY dept: a weak edge from the column to the table it shapes
    assert _names(paper.tables("default.avgsalary").upstream("column")) == []
    assert _names(paper.tables("default.avgsalary").upstream("column", weak=True)) == ["default.empinfo.dept"]
    edge = paper.columns("default.empinfo.dept").flows_out(weak=True).has("strength", "weak").element_map()
    assert [e["transform"] for e in edge.to_list()] == ["GROUP_BY"]
    every = paper.columns().flows_out(weak=True).id_().to_list()
    assert every and sorted(map(str, paper.flows().id_().to_list())) == sorted(map(str, every))


def test_processes_operations_and_runs(paper: LineageTraversalSource) -> None:
    assert _names(paper.processes().with_operation("LOAD").outputs()) == ["default.empinfo"]
    assert _names(paper.processes().with_operation("EXPORT", "LOAD").inputs()) == [
        "default.avgsalary",
        "hdfs:///data/empinfo.csv",
    ]
    writers = paper.datasets("default.empinfo").writers()
    assert sorted(writers.runs().values("job").to_list()) == ["job2", "job3", "job4"]  # CREATE, LOAD, INSERT
    since = paper.datasets("default.empinfo").writers().runs(since="2024-01-04").values("job")
    assert sorted(since.to_list()) == ["job3", "job4"]
    [load] = [s for s in extract_lineage(PAPER.read_text()) if s.operation == "LOAD"]
    LineageWriter(paper).write([load], RunInfo("SUCCESS", job="reload", start_time="2024-02-01"))
    assert paper.processes().with_operation("LOAD").runs().count().next() == 2
    assert paper.processes().with_operation("LOAD").latest_runs(1).values("job").to_list() == ["reload"]
    assert len(paper.processes(*paper.processes().qualified_name().to_list()).to_list()) == 8


def test_a_process_with_its_runs_in_one_projection(paper: LineageTraversalSource) -> None:
    [load] = [s for s in extract_lineage(PAPER.read_text()) if s.operation == "LOAD"]
    LineageWriter(paper).write([load], RunInfo("FAILED", job="reload", start_time="2024-02-01"))
    rows = (
        paper.processes()
        .with_operation("LOAD")
        .project("p", "all", "latest")
        .by(__.element_map())
        .by(__.run_maps())
        .by(__.run_maps(1))
        .to_list()
    )
    [row] = rows
    assert row["p"]["operation"] == "LOAD"
    assert sorted(run["job"] for run in row["all"]) == ["job3", "reload"]
    assert [(run["job"], run["status"]) for run in row["latest"]] == [("reload", "FAILED")]
    assert paper.processes().with_operation("EXPORT").run_maps(0).next() == []


def test_partitions_of_a_catalogued_dataset(paper: LineageTraversalSource) -> None:
    table = paper.add_v("table").property("qualifiedName", "nf.flows").next()
    for name in ("nf.flows/b", "nf.flows/a"):
        paper.add_v("partition").property("qualifiedName", name).add_e("hasPartition").from_(
            __.V(table.id)
        ).iterate()
    assert _names(paper.tables("nf.flows").partitions()) == ["nf.flows/a", "nf.flows/b"]
    assert _names(paper.tables("default.employee").partitions()) == []


def test_labelled_vertices(paper: LineageTraversalSource, tmp_path: Path) -> None:
    declarations = tmp_path / "labels.yaml"
    declarations.write_text(
        "labels:\n  - name: default.employee.salary\n    labels: [PII]\n"
        "  - name: default.employee\n    labels: [APP=hr]\n"
    )
    declare(paper, load_declarations(declarations))
    assert _names(paper.labelled("PII")) == ["default.employee.salary"]
    assert _names(paper.labelled("APP", "hr")) == ["default.employee"]
    assert _names(paper.labelled("APP", "other")) == []
    assert _names(paper.tables("default.employee").columns_of().labelled("PII")) == [
        "default.employee.salary"
    ]
    assert paper.named("default.employee").tagged_with("APP", "hr").values("labelValue").to_list() == ["hr"]
    assert paper.tables("default.employee").taggings().values("origin").to_list() == ["declared"]


def test_anonymous_steps_nest_in_standard_steps(paper: LineageTraversalSource) -> None:
    rows = (
        paper.datasets("default.empinfo")
        .project("name", "writers", "columns")
        .by(__.qualified_name())
        .by(__.writers().count())
        .by(__.columns_of().count())
        .to_list()
    )
    assert rows == [{"name": "default.empinfo", "writers": 3, "columns": 4}]
    assert _names(paper.datasets().where(__.upstream().named("default.empinfo"))) == ["default.avgsalary"]


def test_lineage_source_shares_the_connection(g) -> None:
    source = lineage_source(g)
    assert lineage_source(source) is source
    g.add_v("table").property("qualifiedName", "db.t").iterate()
    assert _names(source.tables()) == ["db.t"]
    assert type(source.tables()).__name__ == "LineageTraversal"


def test_every_domain_step_is_an_anonymous_step_too() -> None:
    assert {"upstream", "downstream", "columns_of", "runs", "run_maps", "partitions", "labelled"} <= set(
        DOMAIN_STEPS
    )
    for name in DOMAIN_STEPS:
        assert getattr(__, name).__doc__ == getattr(LineageTraversal, name).__doc__
    assert str(__.upstream("column", weak=True).bytecode) == "[['inE', 'flowsTo'], ['outV']]"
    assert str(__.readers(selects=False).bytecode) == str(
        __.out("usedBy").not_(__.has("operation", "SELECT")).bytecode
    )
    assert type(__.out("x")).__name__ == "LineageTraversal"
