"""OpenLineage RunEvents from other producers (Spark, Airflow ...) into lineage records."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lineage_platform.errors import IngestError
from lineage_platform.ingest.events import EventDecoder
from lineage_platform.model import ColumnEdge, RunInfo

POSITION = ("openlineage", 0, 3)


def input_field(name: str, field: str, kind: str = "DIRECT", subtype: str = "IDENTITY") -> dict[str, Any]:
    return {
        "namespace": "hive://metastore:9083",
        "name": name,
        "field": field,
        "transformations": [{"type": kind, "subtype": subtype, "description": "", "masking": False}],
    }


def spark_event(event_type: str = "COMPLETE") -> dict[str, Any]:
    """A Spark job writing an aggregate of two Hive tables to a Parquet directory on HDFS."""
    return {
        "eventType": event_type,
        "eventTime": "2026-01-05T03:10:00.000Z",
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.20.0/integration/spark",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {
            "runId": "01944a5e-8f7c-7bd2-9d1e-2c6f1b0e4a11",
            "facets": {
                "nominalTime": {"nominalStartTime": "2026-01-05T03:00:00.000Z"},
                "processing_engine": {"name": "spark", "version": "3.5.1"},
            },
        },
        "job": {
            "namespace": "airflow-prod",
            "name": "revenue_by_region.write_parquet",
            "facets": {"sql": {"query": "insert overwrite directory ... select region, sum(amount) ..."}},
        },
        "inputs": [
            {
                "namespace": "hive://metastore:9083",
                "name": "DWD.Orders",
                "facets": {"schema": {"fields": [{"name": "region", "type": "string"}, {"name": "amount"}]}},
            },
            {"namespace": "hive://metastore:9083", "name": "dim.valid_regions"},
        ],
        "outputs": [
            {
                "namespace": "hdfs://nn1:8020",
                "name": "/warehouse/reports/revenue",
                "facets": {
                    "columnLineage": {
                        "fields": {
                            "region": {"inputFields": [input_field("DWD.Orders", "region")]},
                            "revenue": {
                                "inputFields": [input_field("DWD.Orders", "amount", subtype="AGGREGATION")]
                            },
                        },
                        "dataset": [input_field("dim.valid_regions", "code", "INDIRECT", "JOIN")],
                    }
                },
            }
        ],
    }


def decode(event: dict[str, Any]) -> list:
    decoded = EventDecoder().decode(json.dumps(event).encode(), POSITION)
    assert decoded.format == "openlineage"
    return decoded.items


def test_complete_event_gives_datasets_column_lineage_and_a_run() -> None:
    [(statement, run)] = decode(spark_event())
    assert statement.sql.startswith("insert overwrite directory")
    assert [(d.name, d.kind, d.columns) for d in statement.inputs] == [
        ("dwd.orders", "table", ("region", "amount")),
        ("dim.valid_regions", "table", ()),
    ]
    [output] = statement.outputs
    assert (output.name, output.kind) == ("hdfs://nn1:8020/warehouse/reports/revenue", "path")
    assert set(statement.column_edges) == {
        ColumnEdge("dwd.orders.region", f"{output.name}.region", "strong", "IDENTITY"),
        ColumnEdge("dwd.orders.amount", f"{output.name}.revenue", "strong", "AGGREGATION"),
        ColumnEdge("dim.valid_regions.code", output.name, "weak", "JOIN"),
    }
    assert run == RunInfo(
        status="SUCCEEDED",
        start_time="2026-01-05T03:00:00.000Z",
        end_time="2026-01-05T03:10:00.000Z",
        engine="spark",
        job="airflow-prod/revenue_by_region.write_parquet",
        external_id="01944a5e-8f7c-7bd2-9d1e-2c6f1b0e4a11",
        source="openlineage:0:3",
    )


@pytest.mark.parametrize(
    ("event_type", "status", "start", "end"),
    [
        ("START", "RUNNING", "2026-01-05T03:10:00.000Z", None),
        ("RUNNING", "RUNNING", "2026-01-05T03:00:00.000Z", None),
        ("FAIL", "FAILED", "2026-01-05T03:00:00.000Z", "2026-01-05T03:10:00.000Z"),
        ("ABORT", "ABORTED", "2026-01-05T03:00:00.000Z", "2026-01-05T03:10:00.000Z"),
    ],
)
def test_every_state_event_updates_the_run_of_its_run_id(
    event_type: str, status: str, start: str, end: str | None
) -> None:
    [(_, run)] = decode(spark_event(event_type))
    assert (run.status, run.start_time, run.end_time) == (status, start, end)
    assert run.external_id == "01944a5e-8f7c-7bd2-9d1e-2c6f1b0e4a11"


def test_other_event_gives_lineage_without_a_run() -> None:
    [(statement, run)] = decode(spark_event("OTHER"))
    assert run is None and statement.outputs


def test_job_without_sql_is_keyed_by_its_name() -> None:
    event = spark_event()
    del event["job"]["facets"]["sql"]
    [(statement, _)] = decode(event)
    assert statement.sql == "job:airflow-prod/revenue_by_region.write_parquet"


@pytest.mark.parametrize(
    ("legacy_type", "transform"),
    [
        ("AGGREGATE", "AGGREGATION"),
        ("IDENTITY", "IDENTITY"),
        ("MASKED_CONCAT", "TRANSFORMATION"),
        ("", "TRANSFORMATION"),
    ],
)
def test_column_lineage_facet_version_one_without_transformations(legacy_type: str, transform: str) -> None:
    event = spark_event()
    fields = event["outputs"][0]["facets"]["columnLineage"]["fields"]
    fields["revenue"] = {
        "inputFields": [{"namespace": "hive://metastore:9083", "name": "DWD.Orders", "field": "amount"}],
        "transformationType": legacy_type,
    }
    [(statement, _)] = decode(event)
    assert ColumnEdge("dwd.orders.amount", f"{statement.outputs[0].name}.revenue", "strong", transform) in (
        statement.column_edges
    )


def _broken(change: str) -> dict[str, Any]:
    event = spark_event()
    lineage = event["outputs"][0]["facets"]["columnLineage"]
    if change == "event type":
        event["eventType"] = "FINISHED"
    elif change == "transformation":
        lineage["dataset"][0]["transformations"][0]["type"] = "SIDEWAYS"
    elif change == "no namespace":
        del event["inputs"][0]["namespace"]
    return event


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ("event type", "unknown OpenLineage eventType 'FINISHED'"),
        ("transformation", "transformation type 'SIDEWAYS'"),
        ("no namespace", r"inputs\[0\].namespace is missing"),
    ],
)
def test_unusable_events_are_rejected_with_a_reason(change: str, reason: str) -> None:
    with pytest.raises(IngestError, match=reason):
        decode(_broken(change))


def test_a_run_event_without_event_type_adds_lineage_only() -> None:
    event = spark_event()
    del event["eventType"]  # optional in the spec
    [(statement, run)] = decode(event)
    assert run is None
    assert [d.name for d in statement.inputs] == ["dwd.orders", "dim.valid_regions"]


def test_a_job_event_is_static_lineage_without_a_run() -> None:
    event = spark_event()
    del event["run"], event["eventType"]
    event["schemaURL"] = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent"
    [(statement, run)] = decode(event)
    assert run is None
    assert statement.process_key == "airflow-prod/revenue_by_region.write_parquet"
    assert len(statement.column_edges) == 3


def test_a_dataset_event_declares_the_dataset_and_its_columns() -> None:
    event = {
        "eventTime": "2026-02-01T08:00:00Z",
        "producer": "https://example.com/catalog-sync",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": {
            "namespace": "hive://metastore:9083",
            "name": "ODS.Clicks",
            "facets": {"schema": {"fields": [{"name": "Uid", "type": "bigint"}, {"name": "url"}]}},
        },
    }
    [(statement, run)] = decode(event)
    assert run is None and statement.operation == "ALTER_ADD_COLUMNS"  # the writer's schema-only operation
    assert [(d.name, d.columns) for d in statement.outputs] == [("ods.clicks", ("uid", "url"))]


def test_a_dataset_only_the_column_lineage_names_is_read_as_an_input() -> None:
    event = spark_event()
    shadow = input_field("ods.shadow_orders", "region")
    event["outputs"][0]["facets"]["columnLineage"]["fields"]["region"]["inputFields"].append(shadow)
    [(statement, _)] = decode(event)
    assert [d.name for d in statement.inputs] == ["dwd.orders", "dim.valid_regions", "ods.shadow_orders"]
    output = statement.outputs[0].name
    assert (
        ColumnEdge("ods.shadow_orders.region", f"{output}.region", "strong", "IDENTITY")
        in statement.column_edges
    )


def sql_event(query: str, inputs: list[str], outputs: list[str]) -> dict[str, Any]:
    """An Airflow-style event: fully qualified datasets, SQL that names tables as its session sees them."""

    def dataset(name: str) -> dict[str, Any]:
        return {"namespace": "postgres://db:5432", "name": name}

    return {
        "eventType": "COMPLETE",
        "eventTime": "2026-02-01T08:00:00Z",
        "run": {"runId": "0195a000-0000-7000-8000-000000000001"},
        "job": {"namespace": "etl", "name": "shop.daily", "facets": {"sql": {"query": query}}},
        "inputs": [dataset(name) for name in inputs],
        "outputs": [dataset(name) for name in outputs],
    }


def test_sql_tables_are_matched_to_the_event_datasets_they_name() -> None:
    query = "INSERT INTO daily (d, n) SELECT o.day, COUNT(*) FROM orders o JOIN public.users u ON o.uid = u.id GROUP BY o.day"
    event = sql_event(query, ["shop.public.orders", "shop.public.users"], ["shop.public.daily"])
    [(statement, _)] = decode(event)
    sources = {e.source for e in statement.column_edges}
    assert {"shop.public.orders.day", "shop.public.orders.uid", "shop.public.users.id"} <= sources
    assert {e.target for e in statement.column_edges} <= {
        "shop.public.daily",
        "shop.public.daily.d",
        "shop.public.daily.n",
    }


def test_an_output_only_the_sql_names_gets_the_schema_of_the_tables_the_event_named() -> None:
    event = sql_event("INSERT INTO daily (d) SELECT day FROM orders", ["shop.public.orders"], [])
    [(statement, _)] = decode(event)
    assert [d.name for d in statement.outputs] == ["shop.public.daily"]
    assert (
        ColumnEdge("shop.public.orders.day", "shop.public.daily.d", "strong", "IDENTITY")
        in statement.column_edges
    )


def test_two_event_datasets_ending_alike_are_not_guessed_between() -> None:
    event = sql_event(
        "INSERT INTO daily (d) SELECT day FROM orders", ["a.public.orders", "b.public.orders"], []
    )
    [(statement, _)] = decode(event)
    assert not statement.column_edges  # the SQL's orders could be either
    assert [d.name for d in statement.inputs] == ["a.public.orders", "b.public.orders"]


@pytest.mark.parametrize(
    ("event_time", "stored"),
    [
        ("2026-02-01T18:00:00.5+10:00", "2026-02-01T08:00:00.500Z"),
        ("2026-02-01T08:00:00.123456", "2026-02-01T08:00:00.123Z"),  # no zone: UTC
        ("2026-02-01T08:00:00Z", "2026-02-01T08:00:00.000Z"),
    ],
)
def test_event_times_are_stored_in_utc_with_milliseconds(event_time: str, stored: str) -> None:
    event = spark_event("START")
    event["eventTime"] = event_time
    [(_, run)] = decode(event)
    assert run.start_time == stored


def test_an_event_time_that_is_no_time_rejects_the_event() -> None:
    event = spark_event()
    event["run"]["facets"]["nominalTime"]["nominalStartTime"] = "yesterday"
    with pytest.raises(
        IngestError, match=r"run.facets.nominalTime.nominalStartTime: 'yesterday' is not an ISO"
    ):
        decode(event)


@pytest.mark.parametrize(
    ("namespace", "name", "path"),
    [
        ("file.host-7", "file://host-7/exports/out.csv", "file://host-7/exports/out.csv"),
        ("dbfs", "/mnt/Raw/events", "/mnt/Raw/events"),
    ],
)
def test_a_dataset_named_by_a_file_url_or_an_absolute_path_is_a_path(
    namespace: str, name: str, path: str
) -> None:
    event = spark_event()
    event["outputs"][0].update(namespace=namespace, name=name)
    [(statement, _)] = decode(event)
    assert [(d.name, d.kind) for d in statement.outputs] == [(path, "path")]


@pytest.mark.parametrize(
    ("change", "with_inputs", "operation"),
    [
        ("DROP", False, "DROP"),
        ("OVERWRITE", True, "INSERT_OVERWRITE"),
        ("CREATE", True, "CREATE_AS_SELECT"),
        ("CREATE", False, "CREATE_TABLE"),
        ("TRUNCATE", False, "DELETE"),
        ("ALTER", False, "OTHER"),
    ],
)
def test_lifecycle_state_change_gives_the_operation_when_nothing_else_does(
    change: str, with_inputs: bool, operation: str
) -> None:
    event = spark_event()
    del event["job"]["facets"]["sql"]
    output = event["outputs"][0]
    output["facets"] = {"lifecycleStateChange": {"lifecycleStateChange": change}}
    if not with_inputs:
        event["inputs"] = []
    [(statement, _)] = decode(event)
    assert statement.operation == operation


def test_input_fields_without_transformations_take_the_sql_edge_else_a_transformation() -> None:
    def bare(field: str) -> dict[str, Any]:
        return {
            "namespace": "postgres://db:5432",
            "name": "shop.public.orders",
            "field": field,
            "transformations": [],
        }

    event = sql_event(
        "SELECT day, SUM(amount) AS total FROM orders GROUP BY day",
        ["shop.public.orders"],
        ["shop.public.daily"],
    )
    event["outputs"][0]["facets"] = {
        "columnLineage": {
            "fields": {"day": {"inputFields": [bare("day")]}, "total": {"inputFields": [bare("amount")]}}
        }
    }
    [(statement, _)] = decode(event)
    strong = {(e.source, e.target): e.transform for e in statement.column_edges}
    assert strong == {
        ("shop.public.orders.day", "shop.public.daily.day"): "IDENTITY",
        ("shop.public.orders.amount", "shop.public.daily.total"): "AGGREGATION",
    }
    del event["job"]["facets"]["sql"]
    [(statement, _)] = decode(event)
    assert {e.transform for e in statement.column_edges} == {"TRANSFORMATION"}


def test_sql_with_a_column_the_parser_cannot_place_still_gives_its_other_lineage() -> None:
    query = (
        "INSERT INTO daily SELECT o.day, u.country FROM orders o JOIN users u ON o.uid = u.id WHERE flag = 1"
    )
    event = sql_event(query, ["shop.public.orders", "shop.public.users"], ["shop.public.daily"])
    [(statement, _)] = decode(event)  # `flag` belongs to orders or users: no schema says which
    assert statement.operation == "INSERT"
    assert ("shop.public.users.country", "shop.public.daily.country") in {
        (e.source, e.target) for e in statement.column_edges
    }
