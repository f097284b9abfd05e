"""The log readers: good input becomes query records with provenance, bad input becomes BadRecord with a reason."""

from __future__ import annotations

import json

import pytest

from lineage_platform.errors import IngestError
from lineage_platform.ingest.readers import (
    detect_format,
    hive_log,
    jsonl,
    read_text,
    reader_for,
    spark_events,
)
from lineage_platform.ingest.records import FAILED, SUCCEEDED, BadRecord, QueryRecord
from lineage_platform.ingest.sample_logs import SampleSummary
from tests.ingest.conftest import files_of

START = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"
END = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd"


def _split(items: list) -> tuple[list[QueryRecord], list[BadRecord]]:
    return [i for i in items if isinstance(i, QueryRecord)], [i for i in items if isinstance(i, BadRecord)]


# ---- JSONL ------------------------------------------------------------------------------------------


def test_jsonl_reads_records_and_normalises_status_and_times() -> None:
    lines = [
        json.dumps(
            {"sql": "INSERT INTO t SELECT 1", "user": "ann", "status": "success", "start_time": 1767225600000}
        ),
        "",
        json.dumps(
            {"sql": "DROP TABLE t", "status": "KILLED", "end_time": "2026-01-01T00:00:09.000Z", "job": ""}
        ),
        json.dumps({"sql": "SELECT 1"}),
    ]
    records, bad = _split(list(jsonl.read(lines, "q.jsonl")))
    assert not bad
    assert [(r.status, r.source) for r in records] == [
        (SUCCEEDED, "q.jsonl:1"),
        (FAILED, "q.jsonl:3"),
        (SUCCEEDED, "q.jsonl:4"),
    ]
    assert records[0].user == "ann" and records[0].start_time == "2026-01-01T00:00:00.000Z"
    assert records[1].end_time == "2026-01-01T00:00:09.000Z" and records[1].job is None


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"sql": "INSERT INTO t SEL', "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"user": "ann"}', "no 'sql' text"),
        ('{"sql": "  "}', "no 'sql' text"),
        ('{"sql": "DROP TABLE t", "status": "maybe"}', "unknown status 'maybe'"),
    ],
)
def test_jsonl_keeps_bad_lines_with_reason(line: str, reason: str) -> None:
    [bad] = list(jsonl.read(["", line], "q.jsonl"))
    assert isinstance(bad, BadRecord)
    assert (bad.source, bad.line, bad.raw) == ("q.jsonl", 2, line)
    assert reason in bad.reason


# ---- Spark event logs ----------------------------------------------------------------------------------


def _spark_log(*, end_error: str | None = None, with_end: bool = True) -> list[str]:
    end = {"Event": END, "executionId": 4, "time": 1767225609000}
    if end_error:
        end["errorMessage"] = end_error
    events = [
        {
            "Event": "SparkListenerApplicationStart",
            "App Name": "nightly",
            "App ID": "app-1",
            "Timestamp": 0,
            "User": "bob",
        },
        {
            "Event": "SparkListenerEnvironmentUpdate",
            "Spark Properties": {"spark.driver.host": "gw-1", "spark.yarn.queue": "root.etl"},
            "Hadoop Properties": {"yarn.resourcemanager.cluster-id": "prod"},
        },
        {
            "Event": START,
            "executionId": 4,
            "description": "INSERT INTO t SELECT * FROM s",
            "time": 1767225600000,
        },
        {
            "Event": "SparkListenerJobStart",
            "Job ID": 0,
            "Properties": {"spark.sql.execution.id": "4", "spark.jobGroup.id": "load_t"},
        },
        *([end] if with_end else []),
        {"Event": START, "executionId": 5, "description": "SHOW TABLES", "time": 1767225610000},
        {"Event": END, "executionId": 5, "time": 1767225611000},
    ]
    return [json.dumps(event) for event in events]


def test_spark_events_join_start_and_end_with_application_provenance() -> None:
    records, bad = _split(list(spark_events.read(_spark_log(), "app-1")))
    assert not bad
    first, second = records
    assert first == QueryRecord(
        sql="INSERT INTO t SELECT * FROM s",
        status=SUCCEEDED,
        source="app-1:3",
        user="bob",
        start_time="2026-01-01T00:00:00.000Z",
        end_time="2026-01-01T00:00:09.000Z",
        host="gw-1",
        cluster="prod",
        engine="spark",
        job="load_t",
        queue="root.etl",
    )
    assert second.job == "nightly"  # no job group: the application's name


def test_spark_events_error_message_means_failed() -> None:
    records, _ = _split(list(spark_events.read(_spark_log(end_error="boom"), "app-1")))
    assert records[0].status == FAILED


def test_spark_events_report_damage_and_executions_without_end() -> None:
    lines = [*_spark_log(with_end=False), '{"Event": "SparkListenerJobEnd", "Job', '{"no": "event"}']
    records, bad = _split(list(spark_events.read(lines, "app-1")))
    assert [r.sql for r in records] == ["SHOW TABLES"]
    assert [(b.line, b.reason.split(" (")[0]) for b in bad] == [
        (7, "not valid JSON"),
        (8, "not a Spark listener event"),
        (3, "SQL execution never ended"),
    ]


# ---- HiveServer2 logs ------------------------------------------------------------------------------------

HIVE_LOG = """\
2026-01-01 01:00:00,000 INFO  [main] server.HiveServer2: Starting HiveServer2
2026-01-01 01:00:01,250 INFO  [Thread-1] ql.Driver: Executing command(queryId=q1): user=ann host=hs2 cluster=prod job=j1 queue=root.etl
INSERT OVERWRITE TABLE t
SELECT * FROM s
2026-01-01 01:00:01,300 INFO  [Thread-2] ql.Driver: Executing command(queryId=q2): user=bob host=hs2 cluster=prod job=j2 queue=root.adhoc
DROP TABLE x
2026-01-01 01:00:02,000 INFO  [Thread-1] session.SessionState: Resetting thread name
java.lang.RuntimeException: a stack trace line outside any command
2026-01-01 01:00:05,500 ERROR [Thread-2] ql.Driver: FAILED: command(queryId=q2): SemanticException boom
2026-01-01 01:00:09,000 INFO  [Thread-1] ql.Driver: Completed executing command(queryId=q1); Time taken: 7.75 seconds
2026-01-01 01:00:10,000 INFO  [Thread-3] ql.Driver: Executing command(queryId=q3): user=cy host=hs2 cluster=prod job=j3 queue=q
INSERT INTO t
"""


def test_hive_log_reads_interleaved_commands_with_status() -> None:
    records, bad = _split(list(hive_log.read(HIVE_LOG.splitlines(), "hs2.log")))
    by_sql = {r.sql: r for r in records}
    assert set(by_sql) == {"INSERT OVERWRITE TABLE t\nSELECT * FROM s", "DROP TABLE x"}
    insert = by_sql["INSERT OVERWRITE TABLE t\nSELECT * FROM s"]
    assert (insert.status, insert.user, insert.job, insert.queue, insert.source) == (
        SUCCEEDED,
        "ann",
        "j1",
        "root.etl",
        "hs2.log:2",
    )
    assert (insert.start_time, insert.end_time) == ("2026-01-01T01:00:01.250Z", "2026-01-01T01:00:09.000Z")
    assert by_sql["DROP TABLE x"].status == FAILED
    [cut] = bad
    assert (cut.line, cut.reason) == (
        11,
        "command never completed (no 'Completed executing' or 'FAILED' line)",
    )
    assert cut.raw.endswith("INSERT INTO t")


# ---- format detection and the sample --------------------------------------------------------------------


def test_detect_format_and_unknown_input() -> None:
    assert detect_format(["", '{"sql": "x"}']) == "jsonl"
    assert detect_format(_spark_log()) == "spark-events"
    assert detect_format(["garbage", *HIVE_LOG.splitlines()]) == "hive-log"
    assert detect_format(["hello", "world"]) is None
    [bad] = list(read_text("hello\nworld\n", "x.txt"))
    assert isinstance(bad, BadRecord) and "not a known log format" in bad.reason
    with pytest.raises(IngestError, match="unknown log format"):
        reader_for("csv")


def _read_folder(sample: SampleSummary, folder: str) -> tuple[list[QueryRecord], list[BadRecord]]:
    items = []
    for path in files_of(sample, folder):
        items.extend(read_text(path.read_text(encoding="utf-8"), str(path)))
    return _split(items)


def _run_identity(record: QueryRecord) -> tuple:
    return record.start_time, record.user, record.host, record.cluster, record.job


def test_the_three_formats_of_the_sample_agree(sample: SampleSummary) -> None:
    audit, audit_bad = _read_folder(sample, "query-log")
    assert len(audit_bad) == sample.garbage["jsonl"]
    assert len(audit) + len(audit_bad) == sample.records
    assert sum(r.status == FAILED for r in audit) <= sample.failed
    for folder, engine in (("spark-events", "spark"), ("hive-log", "hive")):
        records, bad = _read_folder(sample, folder)
        assert records and all(r.engine == engine for r in records)
        assert all(b.reason for b in bad)
        audit_runs = {_run_identity(r) for r in audit if r.engine == engine}
        # runs whose application events were damaged lack provenance; the others must be in the audit log,
        # unless the audit log's own line for them was damaged
        complete = [r for r in records if None not in _run_identity(r)]
        assert len(complete) > 0.9 * len(records)
        missing = {_run_identity(r) for r in complete} - audit_runs
        assert len(missing) <= len(audit_bad)


# ---- hostile input ------------------------------------------------------------------------------------

DEEP_JSON = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    "value",
    [
        "1e20",
        "Infinity",
        "-Infinity",
        "NaN",
        "253402300800000",
        "true",
        '"not-a-time"',
        '"10000-01-01T00:00:00Z"',
    ],
)
def test_jsonl_rejects_times_that_are_no_time(value: str) -> None:
    line = '{"sql": "INSERT INTO t SELECT 1", "start_time": ' + value + "}"
    (bad,) = jsonl.read([line], "q.jsonl")
    assert isinstance(bad, BadRecord) and bad.reason.startswith("bad start_time:"), bad


def test_jsonl_normalises_iso_times_with_zones_to_utc() -> None:
    line = json.dumps({"sql": "INSERT INTO t SELECT 1", "end_time": "2026-01-01 08:00:00+08:00"})
    (record,) = jsonl.read([line], "q.jsonl")
    assert record.end_time == "2026-01-01T00:00:00.000Z"


def test_jsonl_rejects_nested_provenance_and_deep_json() -> None:
    nested = json.dumps({"sql": "INSERT INTO t SELECT 1", "user": {"name": "ann"}})
    records = list(jsonl.read([nested, DEEP_JSON, json.dumps({"sql": "INSERT INTO t SELECT 2"})], "q.jsonl"))
    assert [type(r).__name__ for r in records] == ["BadRecord", "BadRecord", "QueryRecord"]
    assert records[0].reason == "bad user: expected text, found dict"
    assert records[1].reason == "JSON nested too deep to read"


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        (
            {"Event": START, "executionId": 1, "description": "INSERT INTO t SELECT 1", "time": "x"},
            "not Unix",
        ),
        ({"Event": END, "executionId": 1, "time": 1e20}, "outside the years"),
        (
            {
                "Event": "SparkListenerJobStart",
                "Properties": {"spark.sql.execution.id": "x", "spark.jobGroup.id": "g"},
            },
            "malformed",
        ),
        ({"Event": "SparkListenerEnvironmentUpdate", "Spark Properties": ["x"]}, "malformed"),
    ],
)
def test_spark_events_reject_malformed_events(event: dict, reason: str) -> None:
    records = list(spark_events.read([json.dumps(event), DEEP_JSON], "app.log"))
    assert [type(r).__name__ for r in records] == ["BadRecord", "BadRecord"]
    assert reason in records[0].reason and records[1].reason == "JSON nested too deep to read"


def test_line_numbers_count_newlines_only() -> None:
    """\\r\\n ends a line; \\x0b, \\x1c and \\u2028 (which str.splitlines breaks on) stay inside it."""
    lines = [
        json.dumps({"sql": "INSERT INTO t SELECT 'a\x0bb'"}, ensure_ascii=False),
        json.dumps({"sql": "INSERT INTO t SELECT 'c\u2028d\x1ce'"}, ensure_ascii=False),
        '{"sql": cut',
    ]
    records = list(read_text("\r\n".join(lines) + "\r\n", "q.jsonl"))
    assert [type(r).__name__ for r in records] == ["QueryRecord", "QueryRecord", "BadRecord"]
    assert records[1].source == "q.jsonl:2" and "\u2028" in records[1].sql
    assert (records[2].line, records[2].raw) == (3, '{"sql": cut')
