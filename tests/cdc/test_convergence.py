"""End to end over a real broker: random workloads, relays and subscribers that die and restart; the mirror
always ends up holding exactly the graph."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gremlin_python.process.anonymous_traversal import traversal

from lineage_platform.cdc.avro import encode_event
from lineage_platform.cdc.channel import open_producer
from lineage_platform.cdc.checkpoint import RelayCheckpoint
from lineage_platform.cdc.content import GraphContent
from lineage_platform.cdc.errors import ChangeCaptureError, SchemaVersionError
from lineage_platform.cdc.framing import transaction_messages
from lineage_platform.cdc.log_capture import LogCapture
from lineage_platform.cdc.mirror import SqliteMirror
from lineage_platform.cdc.outbox import OUTBOX_LABEL, Outbox, OutboxCapture
from lineage_platform.cdc.relay import Relay
from lineage_platform.cdc.service import log_relay, mirror_subscriber
from lineage_platform.graph.connect import EmbeddedRemoteConnection, open_embedded
from lineage_platform.graph.writer import LineageWriter
from tests.cdc.workload import CDC_LABELS, by_key, open_store, run_workload, statements
from tests.kafka_broker import new_topic, produce

pytestmark = [pytest.mark.slow, pytest.mark.broker]


class _CrashingCheckpoint(RelayCheckpoint):
    """A relay 'killed' after the broker took its events but before it saved the checkpoint."""

    def save(self, scn: int) -> None:
        raise KeyboardInterrupt("relay killed")


def _assert_mirror_matches(subscriber, graph) -> None:  # type: ignore[no-untyped-def]
    expected = GraphContent.from_state(graph.graph.export_state())
    assert subscriber.sink.content().differences(expected) == {}


def test_mirror_converges_through_relay_and_subscriber_crashes(kafka_broker: str, tmp_path: Path) -> None:
    rng = random.Random(12)
    store, checkpoint, mirror = tmp_path / "store", tmp_path / "relay.json", tmp_path / "mirror.db"
    topic = new_topic(kafka_broker, "cdc-converge", partitions=3)
    graph, g = open_store(store)
    run_workload(g, rng, 60)
    relay = log_relay(store, kafka_broker, topic, checkpoint)
    relay.catch_up()
    relay.close()
    subscriber = mirror_subscriber(mirror, kafka_broker, topic, store=store)  # snapshot + catch-up
    for _round in range(3):
        run_workload(g, rng, 60)
        crashing = Relay(
            LogCapture(store, RelayCheckpoint(checkpoint, relay.source.name).load()),
            kafka_broker,
            topic,
            _CrashingCheckpoint(checkpoint, relay.source.name),
        )
        with pytest.raises(KeyboardInterrupt):
            crashing.publish_batch()
        crashing.close()
        subscriber.poll(max_records=25)
        subscriber.close()  # killed between two commits: it resumes from its last one
        run_workload(g, rng, 30)
        relay = log_relay(store, kafka_broker, topic, checkpoint)  # sends the crashed batch again
        relay.catch_up()
        relay.close()
        subscriber = mirror_subscriber(mirror, kafka_broker, topic, store=store)
        subscriber.run_until_idle(0.5)
        _assert_mirror_matches(subscriber, graph)
    assert subscriber.summary.duplicates > 0
    subscriber.close()
    graph.close()


def test_a_damaged_or_newer_event_stops_the_subscriber_at_its_place(
    kafka_broker: str, tmp_path: Path
) -> None:
    graph, g = open_store(tmp_path / "store")
    g.add_v("table").iterate()
    topic = new_topic(kafka_broker, "cdc-damaged", partitions=1)
    relay = log_relay(tmp_path / "store", kafka_broker, topic, tmp_path / "relay.json")
    relay.catch_up()
    relay.close()
    produce(kafka_broker, topic, [b"\x04rest-of-a-version-2-event"])
    subscriber = mirror_subscriber(tmp_path / "mirror.db", kafka_broker, topic, since_scn=0)
    with pytest.raises(SchemaVersionError, match=rf"{topic}\[0\] offset 1"):
        subscriber.run_until_idle(0.5)
    subscriber.close()
    produce(kafka_broker, topic, [b"\x02\xff"])
    graph.close()
    with pytest.raises(ChangeCaptureError):
        mirror_subscriber(tmp_path / "mirror2.db", kafka_broker, topic, since_scn=1).run_until_idle(0.5)


def test_a_missing_topic_or_snapshot_is_explained(kafka_broker: str, tmp_path: Path) -> None:
    with pytest.raises(ChangeCaptureError, match="does not exist"):
        mirror_subscriber(tmp_path / "m.db", kafka_broker, "cdc-no-such-topic", since_scn=0)
    topic = new_topic(kafka_broker, "cdc-empty")
    with pytest.raises(ChangeCaptureError, match="no snapshot yet"):
        mirror_subscriber(tmp_path / "m2.db", kafka_broker, topic)


def _lineage(*args: str) -> list[str]:
    return [str(Path(sys.executable).with_name("lineage")), "cdc", *args]


def test_mirror_converges_when_the_relay_and_mirror_processes_are_killed(
    kafka_broker: str, tmp_path: Path
) -> None:
    rng = random.Random(5)
    store = tmp_path / "store"
    topic = new_topic(kafka_broker, "cdc-kill", partitions=2)
    common = ["--bootstrap-servers", kafka_broker, "--topic", topic]
    relay_args = _lineage(
        "relay", "--store", str(store), "--checkpoint", str(tmp_path / "relay.json"), *common
    )
    mirror_args = _lineage("mirror", "--mirror", str(tmp_path / "mirror.db"), "--store", str(store), *common)
    graph, g = open_store(store)
    run_workload(g, rng, 40)
    processes = [subprocess.Popen(relay_args), subprocess.Popen(mirror_args)]
    try:
        for _round in range(3):
            run_workload(g, rng, 80)
            time.sleep(rng.uniform(0.3, 1.0))
            victim = rng.randrange(2)
            processes[victim].send_signal(signal.SIGKILL)
            processes[victim].wait()
            processes[victim] = subprocess.Popen([relay_args, mirror_args][victim])
    finally:
        for process in processes:
            process.send_signal(signal.SIGKILL)
            process.wait()
    run_workload(g, rng, 20)
    subprocess.run([*relay_args, "--once"], check=True, timeout=60)
    subprocess.run([*mirror_args, "--once"], check=True, timeout=60)
    expected = GraphContent.from_state(graph.graph.export_state())
    graph.close()
    assert SqliteMirror(tmp_path / "mirror.db", topic).content().differences(expected) == {}


def test_the_outbox_relay_feeds_a_mirror_over_kafka(kafka_broker: str, tmp_path: Path) -> None:
    graph = open_embedded(None)
    g = traversal().with_remote(EmbeddedRemoteConnection(graph))
    writer = LineageWriter(g, batch_size=9, outbox=Outbox())
    topic = new_topic(kafka_broker, "cdc-outbox", partitions=2)
    checkpoint = RelayCheckpoint(tmp_path / "relay.json", "outbox:test")
    writer.write(statements(6))
    relay = Relay(OutboxCapture(g), kafka_broker, topic, checkpoint)
    relay.catch_up()
    writer.write(statements(4, offset=6))
    relay.catch_up()
    relay.close()
    assert g.V().has_label(OUTBOX_LABEL).count().next() == 0
    subscriber = mirror_subscriber(tmp_path / "mirror.db", kafka_broker, topic, since_scn=0)
    summary = subscriber.run_until_idle(0.5)
    assert summary.last_scn == checkpoint.load() > 1
    state = graph.graph.export_state()
    cdc_ids = {vid for vid, label in state[2] if label in CDC_LABELS}
    assert by_key(subscriber.sink.content(), set()) == by_key(GraphContent.from_state(state), cdc_ids)
    subscriber.close()


def _send_first_messages(brokers: str, topic: str, events: list, count: int) -> None:
    """What a relay that died half-way through a transaction left on the topic: its first ``count`` messages."""
    producer = open_producer(brokers)
    try:
        for message in list(transaction_messages(events))[:count]:
            producer.send(topic, key=message.key, value=message.value, headers=message.headers)
        producer.flush()
    finally:
        producer.close()


def test_a_transaction_larger_than_a_message_reaches_the_mirror_whole(
    kafka_broker: str, tmp_path: Path
) -> None:
    """A 5 MB property in a transaction with other changes: the relay chunks it, the mirror holds all of the
    transaction or none of it and records its SCN only when whole, through a relay that died half-way and a
    subscriber restarted between chunks. Failed before: the relay stopped on MessageSizeTooLargeError and the
    mirror kept the other half of the transaction with its SCN."""
    store, checkpoint, mirror = tmp_path / "store", tmp_path / "relay.json", tmp_path / "mirror.db"
    topic = new_topic(kafka_broker, "cdc-large", partitions=3)
    graph, g = open_store(store)
    run_workload(g, random.Random(3), 20)
    relay = log_relay(store, kafka_broker, topic, checkpoint)
    relay.catch_up()
    relay.close()
    subscriber = mirror_subscriber(mirror, kafka_broker, topic, store=store)
    subscriber.run_until_idle(0.5)
    before = GraphContent.from_state(graph.graph.export_state())
    assert subscriber.sink.content() == before
    big = random.Random(4).randbytes(5 * 2**20 // 2).hex() + "é"
    tx = g.tx()
    gtx = tx.begin()
    gtx.add_v("table").property("qualifiedName", "db.big").as_("t").add_v("column").property(
        "qualifiedName", "db.big.doc"
    ).property("doc", big).add_e("hasColumn").from_("t").property("strength", "strong").iterate()
    tx.commit()
    after = GraphContent.from_state(graph.graph.export_state())
    [(scn, events)] = list(LogCapture(store, RelayCheckpoint(checkpoint, relay.source.name).load()).poll(10))
    assert len(encode_event(next(e for e in events if e.value == big))) > 5 * 2**20

    _send_first_messages(kafka_broker, topic, events, 4)  # the relay died after four of the messages
    for _ in range(6):
        subscriber.poll(max_records=1)
        assert subscriber.sink.content() == before
        assert all(position.scn < scn for position in subscriber.sink.load()[1].values())
    relay = log_relay(store, kafka_broker, topic, checkpoint)  # restarted: sends the whole transaction
    assert relay.catch_up().last_scn == scn
    relay.close()
    for poll in range(40):
        if poll == 3:
            subscriber.close()  # killed between chunks: resumes from the first record still waiting
            subscriber = mirror_subscriber(mirror, kafka_broker, topic, store=store)
        subscriber.poll(max_records=1)
        content = subscriber.sink.content()
        assert content in (before, after)
        recorded = max(position.scn for position in subscriber.sink.load()[1].values())
        assert (recorded >= scn) == (content == after)
    subscriber.run_until_idle(0.5)
    _assert_mirror_matches(subscriber, graph)
    assert subscriber.summary.last_scn == scn
    subscriber.close()
    graph.close()
