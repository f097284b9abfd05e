"""The hook emitter: never blocks the instrumented job, drops with a count when full, flushes on exit."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from lineage_platform.ingest.hook import HookEmitter
from tests.kafka_broker import new_topic, read_topic


def test_emit_never_blocks_and_counts_drops_when_the_broker_is_unreachable() -> None:
    emitter = HookEmitter("127.0.0.1:9", "nowhere", queue_size=10, close_timeout=0.2)
    started = time.perf_counter()
    accepted = [emitter.emit(f"INSERT INTO a.b SELECT {n} FROM a.c", user="etl") for n in range(500)]
    elapsed = time.perf_counter() - started
    assert elapsed < 0.25, f"500 emits took {elapsed:.3f}s"
    assert 10 <= sum(accepted) <= 11  # the queue, plus the event the sender thread may hold
    assert emitter.stats.dropped == 500 - sum(accepted)
    emitter.close(timeout=0.2)
    assert emitter.emit("INSERT INTO a.b SELECT 1 FROM a.c") is False


@pytest.mark.slow
@pytest.mark.broker
def test_emitted_events_reach_the_topic(kafka_broker: str) -> None:
    topic = new_topic(kafka_broker, "emit")
    emitter = HookEmitter(kafka_broker, topic)
    for n in range(50):
        assert emitter.emit(f"INSERT INTO a.b SELECT x FROM a.c{n}", job="nightly", status="SUCCEEDED")
    assert emitter.flush(timeout=10)
    emitter.close()
    assert (emitter.stats.sent, emitter.stats.failed, emitter.stats.dropped) == (50, 0, 0)
    events = [json.loads(record.value) for record in read_topic(kafka_broker, topic)]
    assert [event["sql"] for event in events] == [f"INSERT INTO a.b SELECT x FROM a.c{n}" for n in range(50)]
    assert events[0]["run"] == {"job": "nightly", "status": "SUCCEEDED"}


@pytest.mark.slow
@pytest.mark.broker
def test_queued_events_are_flushed_when_the_process_exits(kafka_broker: str) -> None:
    topic = new_topic(kafka_broker, "exit")
    script = (
        "from lineage_platform.ingest import hook\n"
        f"hook.configure({kafka_broker!r}, {topic!r})\n"
        "for n in range(200):\n"
        "    hook.emit(f'INSERT INTO a.b SELECT {n} FROM a.c', user='etl')\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    assert len(read_topic(kafka_broker, topic)) == 200
