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


def test_column_lineage_facet_version_one_without_transformations() -> None:
    event = spark_event()
    fields = event["outputs"][0]["facets"]["columnLineage"]["fields"]
    fields["revenue"] = {
        "inputFields": [{"namespace": "hive://metastore:9083", "name": "DWD.Orders", "field": "amount"}],
        "transformationType": "AGGREGATE",
    }
    [(statement, _)] = decode(event)
    assert ColumnEdge(
        "dwd.orders.amount", f"{statement.outputs[0].name}.revenue", "strong", "TRANSFORMATION"
    ) in (statement.column_edges)


def _broken(change: str) -> dict[str, Any]:
    event = spark_event()
    lineage = event["outputs"][0]["facets"]["columnLineage"]
    if change == "unknown input":
        lineage["fields"]["region"]["inputFields"][0]["name"] = "ods.shadow_orders"
    elif change == "event type":
        event["eventType"] = "FINISHED"
    elif change == "transformation":
        lineage["dataset"][0]["transformations"][0]["type"] = "SIDEWAYS"
    elif change == "no namespace":
        del event["inputs"][0]["namespace"]
    return event


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (
            "unknown input",
            "reads hive://metastore:9083/ods.shadow_orders, which is neither an input nor an output",
        ),
        ("event type", "unknown OpenLineage eventType 'FINISHED'"),
        ("transformation", "transformation type 'SIDEWAYS'"),
        ("no namespace", r"inputs\[0\].namespace is missing"),
    ],
)
def test_unusable_events_are_rejected_with_a_reason(change: str, reason: str) -> None:
    with pytest.raises(IngestError, match=reason):
        decode(_broken(change))
