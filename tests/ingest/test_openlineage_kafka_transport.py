"""OpenLineage's own Python client, through its Kafka transport (confluent-kafka), into `lineage collect`."""

from __future__ import annotations

from pathlib import Path

import pytest
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import RunState

from lineage_platform.cli import invoke
from lineage_platform.graph import connect
from tests.ingest.test_http_receiver import assert_the_run_succeeded, spark_event
from tests.kafka_broker import new_topic, read_topic

pytestmark = [pytest.mark.slow, pytest.mark.broker]
kafka_transport = pytest.importorskip("openlineage.client.transport.kafka")
pytest.importorskip(
    "confluent_kafka", reason="the client's Kafka transport needs confluent-kafka (dev extra)"
)


def test_events_sent_by_the_clients_kafka_transport_are_collected(kafka_broker: str, tmp_path: Path) -> None:
    topic, dead_letters = new_topic(kafka_broker, "openlineage"), new_topic(kafka_broker, "dead")
    config = kafka_transport.KafkaConfig(
        topic=topic, config={"bootstrap.servers": kafka_broker, "acks": "all"}, flush=True
    )
    transport = kafka_transport.KafkaTransport(config)
    client = OpenLineageClient(transport=transport)
    client.emit(spark_event(RunState.START, "2026-01-06T02:00:05.120Z"))
    client.emit(spark_event(RunState.COMPLETE, "2026-01-06T02:03:41.877Z"))
    assert transport.close(timeout=30)  # every event acknowledged by the broker
    records = read_topic(kafka_broker, topic)
    assert [record.key for record in records] == [b"run:spark-prod/orders_daily_job"] * 2  # the client's key

    graph = f"embedded:{tmp_path / 'graph'}"
    options = ["--bootstrap-servers", kafka_broker, "--topic", topic, "--group", "ol-kafka-transport"]
    options += [
        "--graph",
        graph,
        "--dead-letter-topic",
        dead_letters,
        "--idle-timeout",
        "1.5",
        "--no-progress",
    ]
    result = invoke(["collect", *options])
    assert result.success, result.exception
    assert read_topic(kafka_broker, dead_letters, timeout_ms=1000) == []

    g = connect(graph)
    tables = set(g.V().has_label("table").values("qualifiedName").to_list())
    assert {"dwd.orders", "dws.orders_daily"} <= tables  # Spark's path datasets resolved by their symlinks
    assert_the_run_succeeded(g)
    total = (
        g.V().has("qualifiedName", "dws.orders_daily.total").in_("flowsTo").values("qualifiedName").to_list()
    )
    assert total == ["dwd.orders.amount"]
