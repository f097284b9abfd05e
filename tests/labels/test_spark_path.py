"""The Spark path reaches exactly the labels (and provenance) of the Gremlin path."""

from __future__ import annotations

from pathlib import Path

import pytest

from lineage_platform.graph import connect
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.labels import Declaration, Label, declare, propagate
from lineage_platform.labels.rules import LabelRule, RuleSet
from lineage_platform.labels.spark import propagate_spark
from lineage_platform.labels.store import read_taggings, vertex_names
from lineage_platform.sql import extract_lineage

FIXTURES = Path(__file__).parent.parent / "fixtures"
SQL = (FIXTURES / "labels_warehouse.sql").read_text() + (FIXTURES / "dag_provenance_paper.sql").read_text()
DECLARED = [
    Declaration("ods.app_events", (Label("APP", "douyin"), Label("APP", "toutiao"))),
    Declaration("ods.app_events.phone", (Label("PII"),)),
    Declaration("default.employee.salary", (Label("SENSITIVITY", "high"),)),
    Declaration("hdfs:///data/empinfo.csv", (Label("SOURCE", "hr_export"),)),
]


def _graph():
    g = connect("memory:")
    LineageWriter(g).write(extract_lineage(SQL))
    declare(g, DECLARED)
    return g


def _labels(g) -> set[tuple]:
    taggings = [t for _, t in read_taggings(g, origin="propagated")]
    names = vertex_names(g, {t.vertex for t in taggings})
    return {
        (names[t.vertex], str(t.label), t.from_name, t.from_label, t.via, t.rule, t.round) for t in taggings
    }


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.parametrize(
    "rules", [RuleSet(), RuleSet(rules={"APP": LabelRule(enabled=False)})], ids=["default", "app-off"]
)
def test_spark_and_gremlin_paths_store_the_same_labels(spark, tmp_path: Path, rules: RuleSet) -> None:
    by_gremlin, by_spark = _graph(), _graph()
    gremlin = propagate(by_gremlin, rules)
    spark_summary = propagate_spark(by_spark, spark, tmp_path / "tables", rules)
    expected = _labels(by_gremlin)
    assert expected, "the fixture must propagate something"
    assert _labels(by_spark) == expected
    assert spark_summary.added == gremlin.added
    assert spark_summary.rounds == gremlin.rounds
