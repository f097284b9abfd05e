"""Fuzzing the readers and the event decoder: random and adversarial input is rejected with a reason or
processed; no exception ever escapes. Seeded and bounded (see tests/fuzz.py), so a failure reproduces."""

from __future__ import annotations

import json
import re

import pytest

from lineage_platform.errors import IngestError
from lineage_platform.ingest.events import EventDecoder
from lineage_platform.ingest.events.native import lineage_event, query_event
from lineage_platform.ingest.readers import read_text
from lineage_platform.ingest.records import BadRecord, QueryRecord
from lineage_platform.sql import extract_lineage
from tests.fuzz import cases
from tests.ingest.test_events_atlas import ctas_notification, encoded, envelope, split
from tests.ingest.test_events_openlineage import spark_event
from tests.ingest.test_readers import _spark_log

ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
JSONL = [
    {
        "sql": "INSERT INTO dw.t SELECT a FROM ods.s",
        "user": "ann",
        "start_time": 1767225600000,
        "status": "ok",
    },
    {
        "sql": "SET x=1; INSERT INTO t SELECT 1",
        "end_time": "2026-01-01T00:00:09.000Z",
        "job": "j",
        "host": "h",
    },
]
HIVE_LOG = """2026-01-05 02:13:07,123 INFO  [Thread-42] ql.Driver: Executing command(queryId=q1): user=alice host=h
INSERT OVERWRITE TABLE dwd.t PARTITION (dt='2026-01-05')
SELECT a FROM ods.s
2026-01-05 02:14:11,456 INFO  [Thread-42] ql.Driver: Completed executing command(queryId=q1); Time taken: 1 s
"""


def _check_read(data: bytes, fmt: str) -> None:
    text = data.decode("utf-8", errors="replace")
    for item in read_text(text, "fuzzed.log", fmt):
        if isinstance(item, BadRecord):
            assert item.reason and item.line >= 1
        else:
            assert isinstance(item, QueryRecord) and item.sql
            assert all(t is None or ISO.match(t) for t in (item.start_time, item.end_time)), item


@pytest.mark.parametrize("fmt", ["jsonl", "auto"])
def test_jsonl_reader(fmt: str) -> None:
    for data in cases([*JSONL, "\n".join(json.dumps(doc) for doc in JSONL)], seed=1):
        _check_read(data, fmt)


def test_spark_event_log_reader() -> None:
    events = [json.loads(line) for line in _spark_log()]
    whole = "\n".join(_spark_log())
    for data in cases([*events, whole], seed=2):
        _check_read(data, "spark-events")
        _check_read(b"\n".join([whole.encode(), data]), "spark-events")


def test_hive_log_reader() -> None:
    for data in cases([HIVE_LOG, HIVE_LOG * 3], seed=3):
        _check_read(data, "hive-log")
        _check_read(data, "auto")


def _check_decode(decoder: EventDecoder, data: bytes, offset: int) -> None:
    try:
        decoded = decoder.decode(data, ("fuzz", 0, offset))
    except IngestError as exc:
        assert str(exc)
    else:
        assert decoded.format in ("native", "atlas", "openlineage")


def test_hook_events() -> None:
    statements = extract_lineage("INSERT INTO dw.t SELECT a, b FROM ods.s")
    seeds = [query_event("INSERT INTO dw.t SELECT a FROM ods.s", user="ann"), lineage_event(statements)]
    decoder = EventDecoder()
    for offset, data in enumerate(cases(seeds, seed=4)):
        _check_decode(decoder, data, offset)


def test_openlineage_events() -> None:
    decoder = EventDecoder()
    for offset, data in enumerate(cases([spark_event(), spark_event("START")], seed=5)):
        _check_decode(decoder, data, offset)


def test_atlas_notifications() -> None:
    """Whole, compressed and split notifications; the decoder keeps split parts across records, as in the collector."""
    whole = envelope(ctas_notification())
    compressed = envelope(encoded(whole, True), msgCompressionKind="GZIP")
    seeds = [whole, compressed, *split(whole, 2, compress=True)]
    decoder = EventDecoder()
    for offset, data in enumerate(cases(seeds, seed=6)):
        _check_decode(decoder, data, offset)
