"""The outbox strategy: the writer records exactly what it committed, in the same transaction."""

from __future__ import annotations

from pathlib import Path

import pytest
from gremlin_python.process.anonymous_traversal import traversal

from lineage_platform.cdc.content import GraphContent
from lineage_platform.cdc.mirror import SqliteMirror
from lineage_platform.cdc.outbox import COUNTER_LABEL, OUTBOX_LABEL, Outbox, OutboxCapture, snapshot_of_graph
from lineage_platform.graph.connect import EmbeddedRemoteConnection, open_embedded
from lineage_platform.graph.writer import LineageWriter
from tests.cdc.workload import CDC_LABELS, by_key, statements


def test_the_outbox_reproduces_what_the_writer_committed(tmp_path: Path) -> None:
    graph = open_embedded(None)
    g = traversal().with_remote(EmbeddedRemoteConnection(graph))
    writer = LineageWriter(g, batch_size=7, outbox=Outbox())
    writer.write(statements(12))
    writer.write(statements(12))  # re-running changes nothing, so adds nothing to the outbox
    capture = OutboxCapture(g)
    mirror = SqliteMirror(tmp_path / "mirror.db", "outbox")
    seqs = []
    for seq, events in capture.poll(3):
        seqs.append(seq)
        mirror.apply(events, {})
    capture.acknowledge(capture.scn)
    for seq, events in capture.poll(100):
        seqs.append(seq)
        mirror.apply(events, {})
    assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) > 3
    writer.write(statements(3, offset=12))
    for _, events in capture.poll(100):
        mirror.apply(events, {})
    capture.acknowledge(capture.scn)
    assert g.V().has_label(OUTBOX_LABEL).count().next() == 0
    state = graph.graph.export_state()
    cdc_ids = {vid for vid, label in state[2] if label in CDC_LABELS}
    assert by_key(mirror.content(), set()) == by_key(GraphContent.from_state(state), cdc_ids)


def test_a_failed_flush_leaves_neither_writes_nor_an_outbox_entry() -> None:
    graph = open_embedded(None)
    g = traversal().with_remote(EmbeddedRemoteConnection(graph))

    class FailingOutbox(Outbox):
        def record(self, g, ops):  # type: ignore[no-untyped-def]
            super().record(g, ops)
            raise RuntimeError("crash before commit")

    with pytest.raises(RuntimeError):
        LineageWriter(g, outbox=FailingOutbox()).write(statements(2))
    assert g.V().count().next() == 0
    assert list(OutboxCapture(g).poll(10)) == []


def test_a_graph_snapshot_plus_later_outbox_entries_rebuild_the_graph(tmp_path: Path) -> None:
    graph = open_embedded(None)
    g = traversal().with_remote(EmbeddedRemoteConnection(graph))
    writer = LineageWriter(g, batch_size=5, outbox=Outbox())
    writer.write(statements(4))
    flushes_before = g.V().has_label(COUNTER_LABEL).values("seq").next()
    snapshot = snapshot_of_graph(g)
    writer.write(statements(3, offset=4))
    mirror = SqliteMirror(tmp_path / "mirror.db", "outbox")
    mirror.bootstrap(snapshot)
    for _, events in OutboxCapture(g, after_seq=snapshot.scn).poll(100):
        mirror.apply(events, {})
    assert snapshot.scn == flushes_before
    state = graph.graph.export_state()
    cdc_ids = {vid for vid, label in state[2] if label in CDC_LABELS}
    assert by_key(mirror.content(), set()) == by_key(GraphContent.from_state(state), cdc_ids)
