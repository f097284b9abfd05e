"""Change capture on a remote graph: every product write path fills the outbox, and `lineage cdc relay --graph
ws://…` publishes it over a real broker; a mirror built from the topic alone ends up holding the graph."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from gremlin_python.process.graph_traversal import __
from gremlin_python.process.traversal import P

from lineage_platform.cdc.content import GraphContent
from lineage_platform.cdc.outbox import OUTBOX_LABEL
from lineage_platform.cdc.service import mirror_subscriber, outbox_relay
from lineage_platform.graph import connect, disconnect
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.labels import Declaration, Label, declare, propagate
from lineage_platform.labels.store import drop_edges, read_taggings
from lineage_platform.security.policy import Grant, PolicyStore
from lineage_platform.security.policy_graph import save_policy
from tests.cdc.workload import CDC_LABELS, by_key, statements
from tests.kafka_broker import new_topic

pytestmark = [pytest.mark.slow, pytest.mark.broker]


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[object, str]]:
    """An embedded graph served over the Gremlin Server protocol, with the outbox on for ws:// connections."""
    from lineage_platform.graph.connect import open_embedded
    from lineage_platform.graph.embedded.server import BackgroundServer, ServerSettings

    monkeypatch.setenv("LINEAGE_GRAPH_OUTBOX", "on")
    graph = open_embedded(None)
    server = BackgroundServer(graph, ServerSettings(port=0)).start()
    try:
        yield graph, server.url
    finally:
        server.stop()


def _publish_and_mirror(url: str, broker: str, tmp_path: Path, name: str) -> object:
    topic = new_topic(broker, f"cdc-remote-{name}", partitions=2)
    relay = outbox_relay(url, broker, topic, tmp_path / f"{name}.json")
    try:
        published = relay.catch_up()
    finally:
        relay.close()
    assert published.events > 0
    subscriber = mirror_subscriber(tmp_path / f"{name}.db", broker, topic, since_scn=0)
    try:
        subscriber.run_until_idle(0.5)
        return subscriber.sink.content()
    finally:
        subscriber.close()


def test_writer_labels_and_grants_on_a_served_graph_are_all_published(
    served, kafka_broker: str, tmp_path: Path
) -> None:
    graph, url = served
    g = connect(url)
    try:
        LineageWriter(g, batch_size=9).write(statements(6))  # what the collector and the bulk load run
        declare(g, [Declaration("db.t0.id", (Label("PII"),))], declared_by="test")
        assert propagate(g).added > 0  # PII flows down the chain of tables
        save_policy(
            g,
            PolicyStore(
                [Grant("role:analyst", "db", "t3", frozenset({"id"}))], roles={"analyst": {"ann", "bob"}}
            ),
        )
        declared = [edge_id for edge_id, tagging in read_taggings(g, origin="declared")]
        drop_edges(g, declared)  # removals are published too
        assert g.V().has_label(OUTBOX_LABEL).count().next() > 0
        mirror = _publish_and_mirror(url, kafka_broker, tmp_path, "served")
    finally:
        disconnect(g)
    state = graph.graph.export_state()
    cdc_ids = {vid for vid, label in state[2] if label in CDC_LABELS}
    expected = by_key(GraphContent.from_state(state), cdc_ids)
    assert by_key(mirror, set()) == expected
    labels = {label for _, label in expected[0]}
    assert {"table", "column", "process", "classification", "principal", "grant"} <= labels
    assert {edge[1] for edge in expected[2]} >= {"taggedWith", "memberOf", "holds", "flowsTo"}


def test_writes_to_janusgraph_are_published(
    janusgraph_url: str, kafka_broker: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LINEAGE_GRAPH_OUTBOX", "on")
    g = connect(janusgraph_url)
    try:
        g.V().drop().iterate()
        LineageWriter(g, batch_size=9).write(statements(4))
        declare(g, [Declaration("db.t0.id", (Label("PII"),))], declared_by="test")
        propagate(g)
        save_policy(g, PolicyStore([Grant("user:ann", "db", "t2")]))
        mirror = _publish_and_mirror(janusgraph_url, kafka_broker, tmp_path, "janusgraph")
        vertices = g.V().not_(__.has_label(P.within(*CDC_LABELS))).count().next()
        edges = g.E().count().next()
        tagged = g.V().has("classification", "qualifiedName", "PII").in_("taggedWith").count().next()
    finally:
        disconnect(g)
    assert len(mirror.vertices) == vertices and len(mirror.edges) == edges
    assert sum(1 for edge in mirror.edges if edge[1] == "taggedWith") == tagged > 1
