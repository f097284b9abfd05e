"""OpenLineage events in the shapes Spark, Hive and dbt emit, decoded and written into a real embedded graph."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gremlin_python.process.graph_traversal import GraphTraversalSource, __

from lineage_platform.graph import connect
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.ingest.events import EventDecoder
from lineage_platform.trace import trace

FIXTURES = Path(__file__).parent / "fixtures" / "openlineage"
SPARK_RUN = "0194c1a2-7d10-7a3e-b2c4-5e6f70818293"


def events(name: str) -> list[dict[str, Any]]:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def collect(g: GraphTraversalSource, *batches: list[dict[str, Any]]) -> None:
    """Decode and write each batch of events in one write, as the collector does with one poll."""
    decoder, writer = EventDecoder(), LineageWriter(g)
    offset = 0
    for batch in batches:
        items = []
        for event in batch:
            items += decoder.decode(json.dumps(event).encode(), ("openlineage", 0, offset)).items
            offset += 1
        writer.write_runs(items)


def names(g: GraphTraversalSource, label: str) -> set[str]:
    return set(g.V().has_label(label).values("qualifiedName").to_list())


def test_spark_path_datasets_resolve_through_symlinks_to_the_hive_tables() -> None:
    g = connect("memory:")
    collect(g, events("spark_hive_insert"))
    assert {"dwd.orders", "dws.orders_daily"} <= names(g, "table")
    assert not {name for name in names(g, "table") | names(g, "file") if name.startswith("hdfs://")}
    upstream = trace(g, "dws.orders_daily.total", level="column")
    assert "dwd.orders.amount" in {node.qualified_name for node in upstream.nodes.values()}
    tables = trace(g, "dws.orders_daily")
    assert "dwd.orders" in {node.qualified_name for node in tables.nodes.values()}


def test_a_path_with_a_schema_has_its_columns_on_the_file_vertex_and_no_table_twin() -> None:
    [start, complete] = events("spark_hive_insert")
    for event in (start, complete):
        for dataset in event["inputs"] + event["outputs"]:
            del dataset["facets"]["symlinks"]
    g = connect("memory:")  # strict schema: JanusGraph's rules
    collect(g, [start, complete])
    path = "hdfs://nn1:8020/warehouse/dws.db/orders_daily"
    assert path in names(g, "file")
    assert not {name for name in names(g, "table") if name.startswith("hdfs://")}
    columns = g.V().has("file", "qualifiedName", path).out("hasColumn").values("name").to_list()
    assert sorted(columns) == ["dt", "total"]
    sources = (
        g.V().has("column", "qualifiedName", f"{path}.total").in_("flowsTo").values("qualifiedName").to_list()
    )
    assert sources == ["hdfs://nn1:8020/warehouse/dwd.db/orders.amount"]


def run_vertices(g: GraphTraversalSource) -> list[dict[str, Any]]:
    return g.V().has_label("run").value_map("runId", "status", "startTime", "endTime").to_list()


def test_start_and_complete_update_one_run_in_any_order_and_in_any_batches() -> None:
    start, complete = events("spark_hive_insert")
    expected = [
        {
            "runId": [SPARK_RUN],
            "status": ["SUCCEEDED"],
            "startTime": ["2026-01-06T02:00:05.120Z"],
            "endTime": ["2026-01-06T02:03:41.877Z"],
        }
    ]
    for batches in ([[start, complete]], [[start], [complete]], [[complete], [start]], [[complete, start]]):
        g = connect("memory:")
        collect(g, *batches)
        assert run_vertices(g) == expected, batches
        collect(g, *batches)  # the collector re-reading after a crash changes nothing
        assert run_vertices(g) == expected


def test_a_run_that_only_started_is_running_and_a_failure_ends_it() -> None:
    start, complete = events("spark_hive_insert")
    g = connect("memory:")
    collect(g, [start])
    assert [r["status"] for r in run_vertices(g)] == [["RUNNING"]]
    collect(g, [{**complete, "eventType": "FAIL", "eventTime": "2026-01-06T02:01:00.000Z"}])
    [run] = run_vertices(g)
    assert (run["status"], run["endTime"]) == (["FAILED"], ["2026-01-06T02:01:00.000Z"])


def test_two_runs_without_nominal_time_stay_two_runs() -> None:
    _, complete = events("spark_hive_insert")
    other = {**complete, "run": {**complete["run"], "runId": "0194c1a2-7d10-7a3e-b2c4-000000000002"}}
    g = connect("memory:")
    collect(g, [complete, other])
    assert sorted(r["runId"][0] for r in run_vertices(g)) == sorted([SPARK_RUN, other["run"]["runId"]])
    assert g.V().has_label("process").count().next() == 1
    assert g.V().has_label("process").out("hasRun").count().next() == 2


def test_operation_comes_from_the_sql_facet_or_the_job_type() -> None:
    g = connect("memory:")
    collect(g, events("spark_hive_insert"), events("hive_query"), events("dbt_model"))
    rows = (
        g.V()
        .has_label("process")
        .project("out", "operation")
        .by(__.out("generated").values("qualifiedName"))
        .by("operation")
        .to_list()
    )
    operations = {row["out"]: row["operation"] for row in rows}
    assert operations == {
        "dws.orders_daily": "INSERT_OVERWRITE",
        "ads.region_report": "CREATE_AS_SELECT",
        "dws.customer_ltv": "CREATE_AS_SELECT",
    }


def test_sql_facet_gives_column_lineage_when_the_event_has_none() -> None:
    g = connect("memory:")
    collect(g, events("dbt_model"), events("hive_query"))
    ltv = trace(g, "dws.customer_ltv.lifetime_value", level="column")
    assert "dwd.orders.amount" in {node.qualified_name for node in ltv.nodes.values()}
    report = trace(g, "ads.region_report.region", level="column")
    assert "dwd.orders_region.region" in {node.qualified_name for node in report.nodes.values()}


def test_static_job_and_dataset_events_are_written_without_runs() -> None:
    [start, _] = events("spark_hive_insert")
    job_event = {key: value for key, value in start.items() if key not in ("run", "eventType")}
    dataset_event = {
        "eventTime": "2026-02-01T08:00:00Z",
        "producer": "https://example.com/catalog-sync",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": {
            "namespace": "hive://metastore:9083",
            "name": "ods.clicks",
            "facets": {"schema": {"fields": [{"name": "uid"}, {"name": "url"}]}},
        },
    }
    g = connect("memory:")
    collect(g, [job_event, dataset_event])
    assert g.V().has_label("run").count().next() == 0
    assert g.V().has_label("process").count().next() == 1  # the job's, none for the dataset event
    assert "dws.orders_daily" in names(g, "table")
    clicks = g.V().has("table", "qualifiedName", "ods.clicks").out("hasColumn").values("name").to_list()
    assert sorted(clicks) == ["uid", "url"]


def test_a_source_only_the_column_lineage_names_is_traced_upstream() -> None:
    [_, complete] = events("spark_hive_insert")
    output = next(o for o in complete["outputs"] if o["facets"].get("columnLineage"))
    column, spec = next(iter(output["facets"]["columnLineage"]["fields"].items()))
    spec["inputFields"].append(
        {
            "namespace": "hive://metastore:9083",
            "name": "ods.late_fixes",
            "field": "patched",
            "transformations": [],
        }
    )
    g = connect("memory:")
    collect(g, [complete])
    target = output["facets"]["symlinks"]["identifiers"][0]["name"].lower()
    upstream = trace(g, f"{target}.{column}", level="column")
    assert "ods.late_fixes.patched" in {node.qualified_name for node in upstream.nodes.values()}
