"""The platform's own hook events: query events are parsed, lineage events checked, bad ones rejected with a reason."""

from __future__ import annotations

import json

import pytest

from lineage_platform.errors import IngestError
from lineage_platform.ingest.events import EventDecoder
from lineage_platform.ingest.events.native import lineage_event, query_event
from lineage_platform.model import RunInfo
from lineage_platform.sql import extract_lineage

POSITION = ("hooks", 2, 41)


def decode(event: object) -> list:
    return EventDecoder().decode(json.dumps(event).encode(), POSITION).items


def test_query_event_becomes_parsed_lineage_with_the_run_provenance() -> None:
    event = query_event(
        "INSERT INTO dwd.orders SELECT id, amount * 100 AS cents FROM ods.orders",
        user="alice",
        start_time="2026-01-05T02:00:00.000Z",
        host="hs2-01",
        cluster="prod",
        engine="hive",
        job="daily_orders",
    )
    [(statement, run)] = decode(event)
    assert statement.operation == "INSERT"
    assert [d.name for d in statement.inputs] == ["ods.orders"]
    assert {(e.source, e.target, e.transform) for e in statement.column_edges} == {
        ("ods.orders.id", "dwd.orders.id", "IDENTITY"),
        ("ods.orders.amount", "dwd.orders.cents", "TRANSFORMATION"),
    }
    assert run == RunInfo(
        status="SUCCEEDED",
        user="alice",
        start_time="2026-01-05T02:00:00.000Z",
        host="hs2-01",
        cluster="prod",
        engine="hive",
        job="daily_orders",
        source="hooks:2:41",
    )


def test_script_variables_and_use_apply_like_in_job_logs() -> None:
    sql = (
        "SET hivevar:day=2026-01-05; USE dwd; INSERT OVERWRITE TABLE t SELECT a FROM ods.s WHERE dt='${day}'"
    )
    [(statement, _)] = decode(query_event(sql, start_time="2026-01-05T02:00:00.000Z"))
    assert [d.name for d in statement.outputs] == ["dwd.t"]
    assert "${bizdate}" in statement.sql
    [(undated, _)] = decode(query_event(sql))  # no run time, no business date: the literal stays
    assert "dt='2026-01-05'" in undated.sql


def test_failed_runs_and_ddl_without_lineage_write_nothing() -> None:
    assert decode(query_event("INSERT INTO a.b SELECT x FROM a.c", status="failed")) == []
    ddl = "ALTER TABLE a.c ADD IF NOT EXISTS PARTITION (dt='2026-01-05'); CREATE DATABASE z; SHOW TABLES; SELECT 1"
    assert decode(query_event(ddl)) == []


def test_plain_select_is_a_process_writing_its_result() -> None:
    [(statement, run)] = decode(query_event("SELECT x AS y FROM a.c WHERE dt = '2026-01-05'", job="report"))
    assert statement.operation == "SELECT" and run.job == "report"
    assert [d.name for d in statement.inputs] == ["a.c"] and [d.name for d in statement.outputs] == [
        "$result"
    ]
    assert ("a.c.x", "$result.y") in {(e.source, e.target) for e in statement.column_edges}


def test_lineage_event_carries_extracted_statements_unchanged() -> None:
    statements = extract_lineage("INSERT INTO db.o SELECT a, sum(b) AS s FROM db.t WHERE c > 1 GROUP BY a")
    run = RunInfo(status="SUCCEEDED", user="bob", job="agg")
    [(statement, decoded_run)] = decode(lineage_event(statements, run))
    assert statement == statements[0]
    assert decoded_run == RunInfo(status="SUCCEEDED", user="bob", job="agg", source="hooks:2:41")


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (b"\x00\xff garbage", "not valid JSON"),
        (b'{"sql": "\xff"}', "not UTF-8"),
        (b'{"format": "lineage-platform", "version": 1, "kind": "qu', "not valid JSON"),
        (b"[1, 2]", "JSON list instead of an object"),
        (b"", "empty record value"),
        (b'{"hello": "world"}', "unknown event type"),
        (
            b'{"format": "lineage-platform", "version": 7, "kind": "query"}',
            "unsupported lineage-platform event version",
        ),
        (
            b'{"format": "lineage-platform", "version": 1, "kind": "mystery"}',
            "unknown lineage-platform event kind",
        ),
        (b'{"format": "lineage-platform", "version": 1, "kind": "query"}', "event.sql is missing"),
    ],
)
def test_unusable_records_are_rejected_with_a_reason(value: bytes, reason: str) -> None:
    with pytest.raises(IngestError, match=reason):
        EventDecoder().decode(value, POSITION)


def test_sql_that_does_not_parse_is_rejected() -> None:
    with pytest.raises(IngestError, match="SQL does not parse"):
        decode(query_event("INSERT INTO db.o SELEC garbage FROM"))


def test_bad_run_fields_are_rejected() -> None:
    event = query_event("INSERT INTO a.b SELECT x FROM a.c")
    event["run"] = {"status": "sort of", "user": "x"}
    with pytest.raises(IngestError, match="unknown run status"):
        decode(event)
    event["run"] = {"colour": "blue"}
    with pytest.raises(IngestError, match="unknown run fields"):
        decode(event)


def test_lineage_event_touching_an_undeclared_table_is_rejected() -> None:
    event = lineage_event(extract_lineage("INSERT INTO db.o SELECT a FROM db.t"))
    event["statements"][0]["column_edges"].append({"source": "db.elsewhere.x", "target": "db.o.a"})
    with pytest.raises(IngestError, match=r"db\.elsewhere\.x.*not among the statement's inputs"):
        decode(event)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"index": "first"}, "malformed event: ValueError"),
        (
            {"inputs": [{"name": "db.t", "kind": "lake"}]},
            r"statements\[0\].inputs\[0\].kind 'lake' is unknown",
        ),
        ({"column_edges": [{"source": "db.t.a", "target": "db.o.a", "strength": "huge"}]}, "strength 'huge'"),
    ],
)
def test_malformed_statements_are_rejected(change: dict, reason: str) -> None:
    event = lineage_event(extract_lineage("INSERT INTO db.o SELECT a FROM db.t"))
    event["statements"][0].update(change)
    with pytest.raises(IngestError, match=reason):
        decode(event)
