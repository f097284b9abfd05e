"""`lineage export openlineage`: the graph's lineage as OpenLineage RunEvents, and back into an empty graph."""

from __future__ import annotations

import io
import json
from pathlib import Path

import lineage_platform.export
from lineage_platform.cli import invoke
from lineage_platform.export import export_openlineage
from lineage_platform.graph import connect
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.ingest.events import EventDecoder
from lineage_platform.model import RunInfo
from lineage_platform.sql import extract_lineage
from tests.export.lineage_snapshot import snapshot

SCHEMA = {
    "ods": {"users": {"id": "int", "name": "string", "phone": "string", "props": "string", "dt": "string"}}
}
STATEMENTS = [
    "INSERT OVERWRITE TABLE dwd.users SELECT id, upper(name) AS name, sha2(phone, 256) AS phone_hash, "
    "get_json_object(props, '$.app.name') AS app FROM ods.users WHERE dt = '2026-01-05'",
    "CREATE TABLE ads.user_count AS SELECT app, count(DISTINCT id) AS users FROM dwd.users GROUP BY app",
    "CREATE VIEW ads.v_users AS SELECT u.id, u.name FROM dwd.users u JOIN ads.user_count c ON u.app = c.app",
    "SELECT name FROM dwd.users ORDER BY name",
    "INSERT OVERWRITE DIRECTORY 'hdfs://nn1:8020/export/users' SELECT id, name FROM dwd.users",
    "FROM ods.users INSERT INTO dwd.a SELECT id INSERT INTO dwd.b SELECT name",
]


def lineage_graph() -> object:
    """A graph holding the statements above, two runs of the first one, one failed run, one without runs."""
    g = connect("memory:")
    writer = LineageWriter(g)
    for n, sql in enumerate(STATEMENTS):
        [statement, *more] = extract_lineage(sql, schema=SCHEMA)
        status = "FAILED" if n == 2 else "SUCCEEDED"
        runs = [
            RunInfo(
                status,
                user="etl",
                start_time=f"2026-01-0{day}T02:00:00.000Z",
                host="hs2",
                job=f"job{n}",
                source=f"audit.log:{n * 10 + day}",
            )
            for day in ((5, 6) if n == 0 else (5,))
        ]
        for run in runs if n != 3 else [None]:
            writer.write([statement, *more], run)
    return g


def test_every_process_and_run_becomes_a_run_event() -> None:
    out = io.StringIO()
    summary = export_openlineage(lineage_graph(), out, namespace="hive://metastore")
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert (summary.processes, summary.events, len(events)) == (
        len(STATEMENTS),
        len(STATEMENTS) + 1,
        len(events),
    )
    assert sorted(e["eventType"] for e in events) == ["COMPLETE"] * 5 + ["FAIL", "OTHER"]
    [users] = [
        e
        for e in events
        if e["outputs"][0]["name"] == "dwd.users" and e["eventTime"].startswith("2026-01-06")
    ]
    fields = users["outputs"][0]["facets"]["columnLineage"]["fields"]
    [phone] = fields["phone_hash"]["inputFields"]
    assert (phone["namespace"], phone["name"], phone["field"]) == ("hive://metastore", "ods.users", "phone")
    assert phone["transformations"][0]["masking"] is True
    assert fields["app"]["inputFields"][0]["transformations"][0]["description"] == "key path $.app.name"
    assert users["job"]["facets"]["sql"]["query"] == STATEMENTS[0]
    [directory] = [e for e in events if e["outputs"][0]["namespace"] == "hdfs://nn1:8020"]
    assert directory["outputs"][0]["name"] == "/export/users"
    assert len({e["run"]["runId"] for e in events}) == len(events)
    [select] = [e for e in events if e["job"]["facets"]["lineagePlatform_process"]["operation"] == "SELECT"]
    [result] = select["outputs"]
    assert result["name"] == select["job"]["name"].replace("process:", "$result:")  # one dataset per SELECT
    assert result["facets"]["lineagePlatform_dataset"]["kind"] == "temp"
    assert "name" in result["facets"]["columnLineage"]["fields"]


def test_export_collected_into_an_empty_graph_gives_the_same_lineage() -> None:
    source = lineage_graph()
    out = io.StringIO()
    export_openlineage(source, out)
    target = connect("memory:")
    writer, decoder = LineageWriter(target), EventDecoder()
    for offset, line in enumerate(out.getvalue().splitlines()):
        writer.write_runs(decoder.decode(line.encode(), ("exported", 0, offset)).items)
    assert snapshot(target) == snapshot(source)
    vertices, edges = snapshot(source)
    assert len([v for v in vertices if v[0] == "run"]) == 6 and any(e[0] == "flowsTo" for e in edges)


def test_cli_writes_json_lines_to_a_file(tmp_path: Path) -> None:
    store = tmp_path / "graph"
    g = connect(f"embedded:{store}")
    LineageWriter(g).write(extract_lineage(STATEMENTS[1]), RunInfo("SUCCEEDED", user="etl"))
    output = tmp_path / "lineage.jsonl"
    result = invoke(["export", "openlineage", "--graph", f"embedded:{store}", "--output", str(output)])
    assert result.success, result.exception
    [event] = [json.loads(line) for line in output.read_text().splitlines()]
    assert event["outputs"][0]["name"] == "ads.user_count"
    assert event["run"]["facets"]["lineagePlatform_run"]["user"] == "etl"


def exported(g: object, *args: str) -> list[dict]:
    out = io.StringIO()
    export_openlineage(g, out, *args)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def facets_of(event: dict) -> list[tuple[str, dict]]:
    bags = [event["run"]["facets"], event["job"]["facets"]]
    bags += [dataset["facets"] for dataset in event["inputs"] + event["outputs"]]
    return [(name, facet) for bag in bags for name, facet in bag.items()]


def test_events_pass_the_openlineage_client_classes_and_facets_their_published_schemas() -> None:
    from jsonschema import Draft202012Validator
    from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState

    schemas = {
        path.stem: json.loads(path.read_text())
        for path in (Path(lineage_platform.export.__file__).parent / "facets").glob("*.json")
    }
    events = exported(lineage_graph(), "hive", "hive://metastore:9083")
    checked = set()
    for event in events:
        client_event = RunEvent(  # the client's validators: event time, run id (a UUID), producer URL
            eventType=RunState(event["eventType"]),
            eventTime=event["eventTime"],
            run=Run(runId=event["run"]["runId"]),
            job=Job(namespace=event["job"]["namespace"], name=event["job"]["name"]),
            producer=event["producer"],
            inputs=[InputDataset(namespace=d["namespace"], name=d["name"]) for d in event["inputs"]],
            outputs=[OutputDataset(namespace=d["namespace"], name=d["name"]) for d in event["outputs"]],
        )
        assert event["schemaURL"] == client_event.schemaURL  # the spec version the client writes
        for name, facet in facets_of(event):
            document, _, pointer = facet["_schemaURL"].partition("#/$defs/")
            assert document.startswith("https://") and document.endswith(".json") and pointer, facet
            if name.startswith("lineagePlatform_"):
                schema = schemas[pointer]
                assert schema["$id"] == document
                Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER).validate(
                    facet
                )
                checked.add(name)
    assert checked == {"lineagePlatform_process", "lineagePlatform_run", "lineagePlatform_dataset"}


def test_datasets_are_named_per_the_naming_spec_and_read_back() -> None:
    g = connect("memory:")
    statements = [
        "INSERT OVERWRITE DIRECTORY '/tmp/export/users' SELECT id FROM ods.users",
        "INSERT OVERWRITE DIRECTORY 's3://bucket/exports/users' SELECT id FROM ods.users",
    ]
    for n, sql in enumerate(statements):
        run = RunInfo("SUCCEEDED", user="etl", source=f"audit.log:{n}")
        LineageWriter(g).write(extract_lineage(sql, schema=SCHEMA), run)
    events = exported(g, "etl", "hive://metastore:9083")
    identities = {(d["namespace"], d["name"]) for e in events for d in e["inputs"] + e["outputs"]}
    assert identities == {
        ("hive://metastore:9083", "ods.users"),
        ("file", "/tmp/export/users"),
        ("s3://bucket", "exports/users"),
    }
    fields = [
        f for e in events for f in e["outputs"][0]["facets"]["columnLineage"]["fields"]["id"]["inputFields"]
    ]
    assert {(f["namespace"], f["name"]) for f in fields} == {("hive://metastore:9083", "ods.users")}
    target, decoder = connect("memory:"), EventDecoder()
    for offset, event in enumerate(events):
        LineageWriter(target).write_runs(decoder.decode(json.dumps(event).encode(), ("x", 0, offset)).items)
    assert snapshot(target) == snapshot(g)


def test_cli_puts_tables_in_the_metastore_namespace(tmp_path: Path) -> None:
    store = tmp_path / "graph"
    LineageWriter(connect(f"embedded:{store}")).write(extract_lineage(STATEMENTS[1]), None)
    output = tmp_path / "lineage.jsonl"
    arguments = ["--graph", f"embedded:{store}", "--output", str(output), "--hive-metastore", "ms1:9083"]
    assert invoke(["export", "openlineage", *arguments]).success
    [event] = [json.loads(line) for line in output.read_text().splitlines()]
    assert (event["outputs"][0]["namespace"], event["job"]["namespace"]) == ("hive://ms1:9083", "hive")
