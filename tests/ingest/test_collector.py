"""The Kafka collector against a real broker: every format in, poison to the dead-letter topic, commits after writes."""

from __future__ import annotations

import base64
import io
import json
import zlib

import pytest

from lineage_platform.export import export_openlineage
from lineage_platform.graph import connect
from lineage_platform.ingest.collector import Collector, CollectorOptions
from lineage_platform.ingest.events.native import query_event
from tests.export.lineage_snapshot import snapshot
from tests.export.test_openlineage_export import lineage_graph
from tests.ingest.test_events_atlas import bytes_of, ctas_notification, envelope, split
from tests.ingest.test_events_openlineage import spark_event
from tests.kafka_broker import committed, new_topic, produce, read_topic

pytestmark = [pytest.mark.slow, pytest.mark.broker]


def collect(
    bootstrap: str,
    topic: str,
    g: object,
    group: str,
    dead_letters: str | None = None,
    split_timeout: float = 300,
) -> object:
    options = CollectorOptions(
        split_timeout=split_timeout,
        bootstrap_servers=bootstrap,
        topics=(topic,),
        group_id=group,
        dead_letter_topic=dead_letters,
        max_poll_interval_ms=3000,
        session_timeout_ms=3000,
        idle_timeout=1.5,
    )
    return Collector(options, g=g).run()


def names(g: object, label: str) -> set[str]:
    return set(g.V().has_label(label).values("qualifiedName").to_list())


def test_all_formats_are_applied_and_poison_goes_to_the_dead_letter_topic(kafka_broker: str) -> None:
    topic, dead_letters = new_topic(kafka_broker, "hooks"), new_topic(kafka_broker, "dead")
    sideways = spark_event()
    sideways["outputs"][0]["facets"]["columnLineage"]["dataset"][0]["transformations"][0]["type"] = "SIDEWAYS"
    first, second, third = split(envelope(ctas_notification()), 3, compress=True)
    good = [
        json.dumps(query_event("INSERT INTO dwd.t SELECT a, b FROM ods.s", user="alice")).encode(),
        bytes_of(first),
        bytes_of(second),
        json.dumps(spark_event()).encode(),
        bytes_of(third),
    ]
    poison = {
        b"\x13\x37 not json at all": "not valid JSON",
        b'{"format": "lineage-platform", "version": 1, "kind": "query", "sql": "INSERT INTO': "not valid JSON",
        b'{"eventKind": "SOMETHING"}': "unknown event type",
        json.dumps(sideways).encode(): "transformation type 'SIDEWAYS'",
        json.dumps(query_event("INSERT INTO t SELEC FROM")).encode(): "SQL does not parse",
    }
    produce(kafka_broker, topic, good[:2] + list(poison) + good[2:])
    g = connect("memory:")

    stats = collect(kafka_broker, topic, g, "all-formats", dead_letters)

    assert (stats.records, stats.applied, stats.dead_lettered, stats.pending_parts) == (10, 3, 5, 0)
    assert stats.lag == 0
    assert committed(kafka_broker, "all-formats", topic) == [10]
    assert {"dwd.t", "sales.daily", "ods.customers", "dwd.orders"} <= names(g, "table")
    assert names(g, "file") == {"hdfs://nn1:8020/warehouse/reports/revenue"}
    assert len(names(g, "run")) == 3
    letters = read_topic(kafka_broker, dead_letters)
    assert [letter.value for letter in letters] == list(poison)
    for letter, expected in zip(letters, poison.values()):
        headers = dict(letter.headers)
        assert expected in headers["reason"].decode()
        assert headers["topic"].decode() == topic and int(headers["offset"]) >= 2


def test_commit_stops_before_an_incomplete_split_message(kafka_broker: str) -> None:
    topic = new_topic(kafka_broker, "atlas")
    first, second, third = split(envelope(ctas_notification()), 3, compress=False)
    before = json.dumps(query_event("INSERT INTO a.one SELECT x FROM a.src")).encode()
    after = json.dumps(query_event("INSERT INTO a.two SELECT x FROM a.src")).encode()
    produce(kafka_broker, topic, [before, bytes_of(first), bytes_of(second), after])
    g = connect("memory:")

    stats = collect(kafka_broker, topic, g, "split")
    assert (stats.applied, stats.pending_parts) == (2, 2)
    assert committed(kafka_broker, "split", topic) == [1]  # the first part is read again after a restart
    assert "sales.daily" not in names(g, "table")

    produce(kafka_broker, topic, [bytes_of(third)])
    stats = collect(kafka_broker, topic, g, "split")
    assert (stats.records, stats.pending_parts) == (4, 0)
    assert committed(kafka_broker, "split", topic) == [5]
    assert {"sales.daily", "a.one", "a.two"} <= names(g, "table")


def test_split_message_missing_a_part_is_given_up_after_the_split_timeout(kafka_broker: str) -> None:
    topic, dead_letters = new_topic(kafka_broker, "atlas"), new_topic(kafka_broker, "dead")
    first, second, _ = split(envelope(ctas_notification()), 3, compress=True)
    event = json.dumps(query_event("INSERT INTO a.three SELECT x FROM a.src")).encode()
    produce(kafka_broker, topic, [bytes_of(first), event, bytes_of(second)])
    g = connect("memory:")

    stats = collect(kafka_broker, topic, g, "give-up", dead_letters, split_timeout=0.5)

    assert (stats.applied, stats.dead_lettered, stats.pending_parts) == (1, 2, 0)
    assert committed(kafka_broker, "give-up", topic) == [3]
    letters = read_topic(kafka_broker, dead_letters)
    assert [letter.value for letter in letters] == [bytes_of(first), bytes_of(second)]
    assert (
        "incomplete split Atlas message b5a9_3: 2 of 3 parts" in dict(letters[0].headers)["reason"].decode()
    )


def test_export_collected_from_three_partitions_rebuilds_the_same_graph(kafka_broker: str) -> None:
    source = lineage_graph()
    out = io.StringIO()
    export_openlineage(source, out)
    topic = new_topic(kafka_broker, "exported", partitions=3)
    lines = out.getvalue().splitlines()
    for n, line in enumerate(lines):
        produce(kafka_broker, topic, [line.encode()], partition=n % 3)
    target = connect("memory:")

    stats = collect(kafka_broker, topic, target, "round-trip")

    assert (stats.records, stats.applied, stats.dead_lettered) == (len(lines), len(lines), 0)
    assert committed(kafka_broker, "round-trip", topic, partitions=3) == [3, 2, 2]
    assert snapshot(target) == snapshot(source)


def test_collect_command_applies_a_udf_rules_file(kafka_broker: str, tmp_path) -> None:
    from lineage_platform.cli import invoke

    topic = new_topic(kafka_broker, "udf")
    sql = "INSERT INTO dwd.o SELECT lookup_dim(id, tag) AS l FROM ods.t"
    produce(kafka_broker, topic, [json.dumps(query_event(sql, job="dim_job")).encode()])
    rules = tmp_path / "rules.yaml"
    rules.write_text("functions:\n  lookup_dim: {flow_args: [0]}\n")

    def sources(group: str, *rules_option: str) -> set[str]:
        graph = f"embedded:{tmp_path / group}"
        options = ["--bootstrap-servers", kafka_broker, "--topic", topic, "--group", group, "--graph", graph]
        result = invoke(["collect", *options, "--idle-timeout", "1.5", "--no-progress", *rules_option])
        assert result.success, result.exception
        column = connect(graph).V().has("qualifiedName", "dwd.o.l")
        return set(column.in_("flowsTo").values("qualifiedName").to_list())

    assert sources("without-rules") == {"ods.t.id", "ods.t.tag"}
    assert sources("with-rules", "--udf-rules", str(rules)) == {"ods.t.id"}


def gzip_bomb(inflated_mib: int) -> bytes:
    """An Atlas envelope whose GZIP message inflates to ``inflated_mib`` MiB (about 1 KB compressed per MiB)."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b" " * 2**20
    body = b"".join(deflater.compress(chunk) for _ in range(inflated_mib)) + deflater.flush()
    return bytes_of(envelope(base64.b64encode(body).decode(), msgCompressionKind="GZIP", msgId="bomb"))


def test_deep_json_and_a_gzip_bomb_are_dead_lettered_and_the_collector_goes_on(kafka_broker: str) -> None:
    topic, dead_letters = new_topic(kafka_broker, "hostile"), new_topic(kafka_broker, "dead")
    deep = b'{"a": ' * 100_000 + b"1" + b"}" * 100_000
    bomb = gzip_bomb(400)
    good = json.dumps(query_event("INSERT INTO dwd.after SELECT a FROM ods.s")).encode()
    produce(kafka_broker, topic, [deep, bomb, good])
    g = connect("memory:")

    stats = collect(kafka_broker, topic, g, "hostile", dead_letters)

    assert (stats.records, stats.applied, stats.dead_lettered) == (3, 1, 2)
    assert committed(kafka_broker, "hostile", topic) == [3]
    assert "dwd.after" in names(g, "table")
    reasons = [dict(letter.headers)["reason"].decode() for letter in read_topic(kafka_broker, dead_letters)]
    assert "JSON nested too deep to read" in reasons[0]
    assert f"inflates to more than {64 * 2**20} bytes" in reasons[1]
