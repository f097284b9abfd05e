"""`lineage export openlineage`: the graph's lineage as OpenLineage RunEvents, and back into an empty graph."""

from __future__ import annotations

import io
import json
from pathlib import Path

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
