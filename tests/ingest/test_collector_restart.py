"""Killing the collector mid-stream and starting it again applies every event exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lineage_platform.graph import close_all, connect
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.ingest.events import EventDecoder
from lineage_platform.ingest.events.native import query_event
from tests.export.lineage_snapshot import snapshot
from tests.kafka_broker import committed, new_topic, produce

pytestmark = [pytest.mark.slow, pytest.mark.broker]

EVENTS = 240


def events() -> list[bytes]:
    """Distinct statements (each its own process) in runs of a few jobs."""
    return [
        json.dumps(
            query_event(
                f"INSERT INTO dwd.t{n % 12} SELECT c{n} AS c, d FROM ods.s{n % 7} WHERE k = {n}",
                user=f"user{n % 3}",
                job=f"job{n % 5}",
                start_time=f"2026-01-05T02:{n // 60:02d}:{n % 60:02d}.000Z",
            )
        ).encode()
        for n in range(EVENTS)
    ]


def collector(bootstrap: str, topic: str, store: Path, *extra: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-c", "from lineage_platform.cli import main; main()", "collect"]
    command += [
        "--bootstrap-servers",
        bootstrap,
        "--topic",
        topic,
        "--group",
        "restart",
        "--graph",
        f"embedded:{store}",
    ]
    command += ["--dead-letter-topic", "", "--max-records", "8", "--max-poll-interval-ms", "3000", *extra]
    return subprocess.Popen(
        command, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=os.environ.copy()
    )


def test_killed_collector_resumes_and_applies_every_event_once(kafka_broker: str, tmp_path: Path) -> None:
    topic = new_topic(kafka_broker, "restart")
    values = events()
    produce(kafka_broker, topic, values)
    store = tmp_path / "graph"

    first = collector(kafka_broker, topic, store)
    progress = json.loads(first.stderr.readline())  # one batch written and committed
    time.sleep(0.3)
    first.send_signal(signal.SIGKILL)
    first.wait()
    [offset] = committed(kafka_broker, "restart", topic)
    assert progress["applied"] > 0 and 0 < offset < EVENTS, "the collector was killed mid-stream"

    second = collector(kafka_broker, topic, store, "--idle-timeout", "2", "--no-progress")
    _, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    assert committed(kafka_broker, "restart", topic) == [EVENTS]

    expected = connect("memory:")
    decoder, writer = EventDecoder(), LineageWriter(expected)
    for n, value in enumerate(values):
        writer.write_runs(decoder.decode(value, (topic, 0, n)).items)
    collected = connect(f"embedded:{store}")
    try:
        assert snapshot(collected) == snapshot(expected)
        assert len(collected.V().has_label("run").to_list()) == EVENTS
    finally:
        close_all()
