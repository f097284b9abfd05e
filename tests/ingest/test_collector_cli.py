"""Collector set-up errors a person can act on (the broker-backed runs are in test_collector*.py)."""

from __future__ import annotations

import pytest

from lineage_platform.errors import ConfigError
from lineage_platform.graph import connect
from lineage_platform.ingest.collector import Collector, CollectorOptions


def test_unreachable_broker_says_what_to_check() -> None:
    options = CollectorOptions(bootstrap_servers="127.0.0.1:9", topics=("hooks",), connect_timeout_ms=300)
    with pytest.raises(ConfigError, match=r"no Kafka broker answers at 127\.0\.0\.1:9") as error:
        Collector(options, g=connect("memory:")).run()
    assert "--bootstrap-servers" in error.value.hint


def test_a_topic_is_required() -> None:
    with pytest.raises(ConfigError, match="no topic to collect from"):
        Collector(CollectorOptions(bootstrap_servers="127.0.0.1:9", topics=()), g=connect("memory:"))
