"""The Kafka side of change capture: topic set-up, a producer that keeps per-key order, a plain consumer."""

from __future__ import annotations

from typing import Any

from lineage_platform.cdc.errors import ChangeCaptureError

DEFAULT_PARTITIONS = 4


def kafka_error(action: str, brokers: str, exc: Exception) -> ChangeCaptureError:
    """The error for a failed Kafka operation, saying what to check."""
    return ChangeCaptureError(
        f"could not {action} on Kafka at {brokers}: {exc!r}",
        hint="check --brokers (host:port) and that the broker is running; nothing was marked as published",
    )


def ensure_topic(brokers: str, topic: str, partitions: int = DEFAULT_PARTITIONS) -> None:
    """Create ``topic`` with ``partitions`` partitions unless it exists."""
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic
    from kafka.errors import KafkaError, TopicAlreadyExistsError

    try:
        admin = KafkaAdminClient(bootstrap_servers=brokers)
    except KafkaError as exc:
        raise kafka_error("connect", brokers, exc) from exc
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)])
    except TopicAlreadyExistsError:
        pass
    except KafkaError as exc:
        raise kafka_error(f"create topic {topic}", brokers, exc) from exc
    finally:
        admin.close()


def open_producer(brokers: str) -> Any:
    """A producer that never reorders one key's messages: all replicas ack, one request in flight, retries."""
    from kafka import KafkaProducer
    from kafka.errors import KafkaError

    try:
        return KafkaProducer(
            bootstrap_servers=brokers,
            acks="all",
            retries=5,
            max_in_flight_requests_per_connection=1,
            linger_ms=5,
            batch_size=512 * 1024,
        )
    except KafkaError as exc:
        raise kafka_error("connect a producer", brokers, exc) from exc


def open_consumer(brokers: str) -> Any:
    """A consumer without a group: the subscriber assigns partitions and keeps its own offsets."""
    from kafka import KafkaConsumer
    from kafka.errors import KafkaError

    try:
        return KafkaConsumer(
            bootstrap_servers=brokers,
            group_id=None,
            enable_auto_commit=False,
            max_partition_fetch_bytes=4 << 20,
            fetch_max_wait_ms=50,  # an empty fetch returns after 50 ms instead of 500: lower end-to-end lag
        )
    except KafkaError as exc:
        raise kafka_error("connect a consumer", brokers, exc) from exc
