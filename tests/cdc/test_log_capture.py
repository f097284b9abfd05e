"""Capturing from the embedded store's log: order, labels across restarts, retention and damage."""

from __future__ import annotations

from pathlib import Path

import pytest

from lineage_platform.cdc.checkpoint import RelayCheckpoint
from lineage_platform.cdc.errors import BootstrapRequired, ChangeCaptureError
from lineage_platform.cdc.log_capture import LogCapture
from lineage_platform.errors import StoreCorruptError, StoreError
from lineage_platform.graph.embedded.memgraph import MemGraph
from lineage_platform.graph.embedded.storage import DurableLog
from tests.cdc.workload import open_store


def _capture_all(capture: LogCapture) -> list:
    return [event for _, events in capture.poll(10**6) for event in events]


def test_events_follow_a_store_another_writer_holds_open(tmp_path: Path) -> None:
    graph, g = open_store(tmp_path / "store")
    try:
        table = g.add_v("table").property("qualifiedName", "db.orders").next()
        capture = LogCapture(tmp_path / "store")
        first = _capture_all(capture)
        g.V(table.id).property("qualifiedName", "db.orders_v2").iterate()
        g.V(table.id).drop().iterate()
        second = _capture_all(capture)
    finally:
        graph.close()
    assert [(e.scn, e.op, e.label, e.key, e.value) for e in first] == [
        (1, "addV", "table", None, None),
        (1, "addVP", "table", "qualifiedName", "db.orders"),
    ]
    ops = [(e.op, e.label, e.value) for e in second]
    assert ops[-1] == ("dropV", "table", None)
    assert ("addVP", "table", "db.orders_v2") in ops
    assert [e.position for e in first + second] == sorted(e.position for e in first + second)
    assert capture.scn == 3


@pytest.mark.parametrize("checkpoint_between", [False, True], ids=["from-log", "from-snapshot"])
def test_a_resumed_capture_knows_the_labels_of_older_elements(
    tmp_path: Path, checkpoint_between: bool
) -> None:
    graph, g = open_store(tmp_path / "store")
    v = g.add_v("column").property("qualifiedName", "db.t.c").next()
    w = g.add_v("table").property("qualifiedName", "db.t").next()
    g.V(w.id).as_("t").V(v.id).add_e("hasColumn").from_("t").iterate()
    if checkpoint_between:
        graph.close()
        graph, g = open_store(tmp_path / "store")
    edge = g.E().next()
    g.V(v.id).property("qualifiedName", "db.t.c2").iterate()
    g.E(edge.id).property("strength", "weak").iterate()
    graph.close()
    events = _capture_all(LogCapture(tmp_path / "store", after_scn=3))
    assert {(e.op, e.label) for e in events} == {
        ("dropVP", "column"),
        ("addVP", "column"),
        ("setEP", "hasColumn"),
    }


def _store_with_pruned_log(path: Path) -> None:
    """A store whose first transactions were checkpointed and their log segments deleted."""
    log = DurableLog(path, sync=False, retain_bytes=0)
    graph = MemGraph()
    log.recover()
    for n in range(1, 4):
        ops = [("addV", n, "table")]
        graph.apply(ops)
        log.append(ops)
    log.checkpoint(graph.export_state())
    log.append([("addV", 4, "file")])
    log.close()


def test_a_capture_behind_the_retained_log_is_told_to_bootstrap(tmp_path: Path) -> None:
    _store_with_pruned_log(tmp_path / "store")
    with pytest.raises(BootstrapRequired, match="after SCN 1") as raised:
        _capture_all(LogCapture(tmp_path / "store", after_scn=1))
    assert "oldest retained SCN is 4" in str(raised.value)
    assert "bootstrap" in raised.value.hint
    assert [e.element_id for e in _capture_all(LogCapture(tmp_path / "store", after_scn=3))] == [4]


@pytest.mark.parametrize(
    "damage",
    [lambda data: data[:-3] + bytes([data[-3] ^ 0xFF]) + data[-2:], lambda data: data[:-5]],
    ids=["flipped-byte", "truncated"],
)
def test_a_damaged_closed_segment_stops_capture_with_its_place(tmp_path: Path, damage) -> None:  # type: ignore[no-untyped-def]
    graph, g = open_store(tmp_path / "store")
    for n in range(3):
        g.add_v("table").property("qualifiedName", f"db.t{n}").iterate()
    graph.close()  # checkpoints: the first segment is closed and kept for capture
    graph, g = open_store(tmp_path / "store")
    g.add_v("table").iterate()
    graph.close()
    first_segment = sorted((tmp_path / "store").glob("wal-*.log"))[0]
    first_segment.write_bytes(damage(first_segment.read_bytes()))
    with pytest.raises(StoreCorruptError, match=first_segment.name):
        _capture_all(LogCapture(tmp_path / "store"))


def test_a_missing_store_is_reported(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no graph store"):
        LogCapture(tmp_path / "nowhere")


def test_the_relay_checkpoint_survives_and_belongs_to_one_source(tmp_path: Path) -> None:
    checkpoint = RelayCheckpoint(tmp_path / "relay.json", "log:/a")
    assert checkpoint.load() == 0
    checkpoint.save(41)
    checkpoint.save(42)
    assert RelayCheckpoint(tmp_path / "relay.json", "log:/a").load() == 42
    assert not list(tmp_path.glob("*.tmp"))
    with pytest.raises(ChangeCaptureError, match="belongs to 'log:/a'"):
        RelayCheckpoint(tmp_path / "relay.json", "log:/b").load()
    (tmp_path / "relay.json").write_text("{trunc")
    with pytest.raises(ChangeCaptureError, match="unreadable"):
        checkpoint.load()
