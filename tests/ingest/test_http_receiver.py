"""`lineage collect --http`: OpenLineage's own Python client (HTTP transport) posting to the receiver, then the graph."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import job_type_job, schema_dataset, sql_job, symlinks_dataset
from openlineage.client.serde import Serde
from openlineage.client.transport.http import HttpCompression, HttpConfig, HttpTransport

from lineage_platform.graph import connect

RUN_ID = "0194c1a2-7d10-7a3e-b2c4-5e6f70818293"
MAX_BODY_MIB = 0.05


def hive_path(table: str, columns: list[str], output: bool = False) -> InputDataset | OutputDataset:
    """A Hive table as Spark's integration names it: by its storage path, the table in the symlinks facet."""
    database, _, name = table.partition(".")
    facets = {
        "schema": schema_dataset.SchemaDatasetFacet(
            fields=[schema_dataset.SchemaDatasetFacetFields(name=c, type="string") for c in columns]
        ),
        "symlinks": symlinks_dataset.SymlinksDatasetFacet(
            identifiers=[
                symlinks_dataset.Identifier(namespace="hive://metastore:9083", name=table, type="TABLE")
            ]
        ),
    }
    kind = OutputDataset if output else InputDataset
    return kind(namespace="hdfs://nn1:8020", name=f"/warehouse/{database}.db/{name}", facets=facets)


def assert_the_run_succeeded(g) -> None:
    """The graph holds the one run of :func:`spark_event`'s job, started at START and ended by COMPLETE."""
    [run] = g.V().has_label("run").value_map("runId", "status", "startTime", "endTime").to_list()
    assert run == {
        "runId": [RUN_ID],
        "status": ["SUCCEEDED"],
        "startTime": ["2026-01-06T02:00:05.120Z"],
        "endTime": ["2026-01-06T02:03:41.877Z"],
    }


def spark_event(state: RunState, time: str) -> RunEvent:
    job_facets = {
        "jobType": job_type_job.JobTypeJobFacet(
            processingType="BATCH", integration="SPARK", jobType="SQL_JOB"
        ),
        "sql": sql_job.SQLJobFacet(
            query="INSERT INTO dws.orders_daily SELECT dt, sum(amount) AS total FROM dwd.orders GROUP BY dt"
        ),
    }
    return RunEvent(
        eventType=state,
        eventTime=time,
        run=Run(runId=RUN_ID),
        job=Job(namespace="spark-prod", name="orders_daily_job", facets=job_facets),
        producer="https://github.com/OpenLineage/OpenLineage/tree/1.24.2/integration/spark",
        inputs=[hive_path("dwd.orders", ["dt", "amount"])],
        outputs=[hive_path("dws.orders_daily", ["dt", "total"], output=True)],
    )


class Receiver:
    """`lineage collect --http 127.0.0.1:0` on an embedded store, run as a user runs it."""

    def __init__(self, tmp_path: Path) -> None:
        self.store, self.dead = tmp_path / "graph", tmp_path / "dead.jsonl"
        command = [sys.executable, "-c", "from lineage_platform.cli import main; main()", "collect"]
        command += ["--http", "127.0.0.1:0", "--graph", f"embedded:{self.store}"]
        command += ["--dead-letter-file", str(self.dead), "--max-event-mib", str(MAX_BODY_MIB)]
        self.process = subprocess.Popen(
            command, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=os.environ.copy()
        )
        line = self.process.stderr.readline()
        assert line.startswith("listening on 127.0.0.1:"), line + self.process.stderr.read()
        self.url = f"http://{line.split()[-1]}"
        self.summary = ""

    def stop(self) -> dict[str, str]:
        """SIGTERM (finishes the request in hand), then the summary it printed."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.summary, _ = self.process.communicate(timeout=30)
        assert self.process.returncode == 0
        return dict(line.split(": ", 1) for line in self.summary.splitlines())

    def dead_letters(self) -> list[dict]:
        return [json.loads(line) for line in self.dead.read_text().splitlines()] if self.dead.exists() else []


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[Receiver]:
    running = Receiver(tmp_path)
    yield running
    if running.process.poll() is None:
        running.process.kill()
        running.process.communicate()


def test_openlineage_client_events_reach_the_graph_through_http(receiver: Receiver) -> None:
    transport = HttpTransport(HttpConfig(url=receiver.url, compression=HttpCompression.GZIP))
    for state, time in (
        (RunState.START, "2026-01-06T02:00:05.120Z"),
        (RunState.COMPLETE, "2026-01-06T02:03:41.877Z"),
        (RunState.COMPLETE, "2026-01-06T02:03:41.877Z"),  # a client's retry changes nothing
    ):
        assert transport.emit(spark_event(state, time)).status_code == 201  # as Marquez answers
    transport.close()
    summary = receiver.stop()
    assert (summary["events"], summary["applied"], summary["dead lettered"]) == ("3", "3", "0")
    g = connect(f"embedded:{receiver.store}")
    tables = set(g.V().has_label("table").values("qualifiedName").to_list())
    assert {"dwd.orders", "dws.orders_daily"} <= tables
    assert not [name for name in tables if name.startswith("hdfs://")]
    assert_the_run_succeeded(g)
    assert g.V().has("process", "operation", "INSERT").count().next() == 1
    assert receiver.dead_letters() == []


def test_a_batch_array_is_applied_and_its_bad_events_are_kept_aside(receiver: Receiver) -> None:
    good = json.loads(Serde.to_json(spark_event(RunState.COMPLETE, "2026-01-06T02:03:41.877Z")))
    bad = {**good, "eventType": "FINISHED"}
    response = requests.post(f"{receiver.url}/api/v1/lineage", json=[good, bad], timeout=30)
    assert response.status_code == 400
    body = response.json()
    assert (body["applied"], body["dead_lettered"]) == (1, 1)
    assert "unknown OpenLineage eventType 'FINISHED'" in body["reasons"][0]
    [letter] = receiver.dead_letters()
    assert letter["event"] == bad and letter["reason"].startswith("event 1: unknown OpenLineage eventType")
    receiver.stop()
    g = connect(f"embedded:{receiver.store}")
    assert g.V().has("table", "qualifiedName", "dws.orders_daily").count().next() == 1


def test_the_batch_path_answers_each_events_outcome(receiver: Receiver) -> None:
    """POST /api/v1/lineage/batch (the OpenLineage API spec's batch path; openlineage-python 1.54 sends no batches,
    so the client's own serialisation of its events is posted, gzip-compressed as its transport does)."""
    start, complete = (
        json.loads(Serde.to_json(spark_event(state, time)))
        for state, time in (
            (RunState.START, "2026-01-06T02:00:05.120Z"),
            (RunState.COMPLETE, "2026-01-06T02:03:41.877Z"),
        )
    )
    broken = {**complete, "inputs": "dwd.orders"}
    batch = gzip.compress(json.dumps([start, broken, complete, complete]).encode())
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    response = requests.post(f"{receiver.url}/api/v1/lineage/batch", data=batch, headers=headers, timeout=30)
    assert response.status_code == 400
    body = response.json()
    assert (body["applied"], body["dead_lettered"]) == (3, 1)
    assert [r["status"] for r in body["results"]] == ["applied", "refused", "applied", "applied"]
    assert body["results"][1]["index"] == 1 and "inputs" in body["results"][1]["reason"]
    [letter] = receiver.dead_letters()
    assert letter["event"] == broken and letter["reason"].startswith("event 1: ")
    again = requests.post(f"{receiver.url}/api/v1/lineage/batch", json=[complete], timeout=30)
    assert (again.status_code, again.json()) == (
        200,
        {"applied": 1, "results": [{"index": 0, "status": "applied"}]},
    )
    summary = receiver.stop()
    assert (summary["events"], summary["applied"], summary["dead lettered"]) == ("5", "4", "1")
    g = connect(f"embedded:{receiver.store}")
    assert_the_run_succeeded(g)


def test_the_batch_path_takes_only_an_array(receiver: Receiver) -> None:
    event = json.loads(Serde.to_json(spark_event(RunState.COMPLETE, "2026-01-06T02:03:41.877Z")))
    response = requests.post(f"{receiver.url}/api/v1/lineage/batch", json=event, timeout=30)
    assert response.status_code == 400
    assert response.json()["error"].startswith(
        "/api/v1/lineage/batch takes a JSON array of events, not one object"
    )
    assert "/api/v1/lineage" in response.json()["hint"]
    [letter] = receiver.dead_letters()
    assert json.loads(letter["event"]) == event


@pytest.mark.parametrize("path", ["/api/v1/lineage", "/api/v1/lineage/batch"])
@pytest.mark.parametrize(
    ("body", "headers", "status", "error"),
    [
        (b"{not json", {}, 400, "body is not valid JSON"),
        (b"[]", {}, 400, "body is a JSON list (empty)"),
        (b'"text"', {}, 400, "body is a JSON str"),
        (b"[" + b"1," * 40_000 + b"1]", {}, 413, "body larger than"),
        (gzip.compress(b"[" + b"1," * 40_000 + b"1]"), {"Content-Encoding": "gzip"}, 413, "body larger than"),
    ],
)
def test_bad_bodies_get_a_json_error_and_nothing_is_lost(
    receiver: Receiver, path: str, body: bytes, headers: dict[str, str], status: int, error: str
) -> None:
    response = requests.post(
        f"{receiver.url}{path}",
        data=body,
        headers={"Content-Type": "application/json", **headers},
        timeout=30,
    )
    assert response.status_code == status
    assert response.json()["error"].startswith(error) and response.json()["hint"]
    if status == 400:
        [letter] = receiver.dead_letters()
        assert letter["event"] == body.decode() and letter["reason"].startswith(error)
