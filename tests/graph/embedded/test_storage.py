"""DurableLog: round trips, SCNs, torn tails, corruption, the process lock, checkpoints and read_since."""

from __future__ import annotations

import errno
import logging
import struct
import subprocess
import sys
import uuid
import zlib
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from lineage_platform.errors import StoreCorruptError, StoreError, StoreLockedError
from lineage_platform.graph.embedded.storage import DurableLog, LogTail, read_since
from lineage_platform.graph.embedded.storage_format import (
    RECORD_HEADER_SIZE,
    SEGMENT_HEADER_SIZE,
    SEGMENT_MAGIC,
    encode_record,
)


def tx(n: int) -> list[tuple]:
    """A transaction touching vertex ``n`` with values of every type the engine stores."""
    return [
        ("addV", n, "table"),
        ("addVP", n, f"{n}-q", "qualifiedName", f"db.t{n}"),
        ("setMeta", n, f"{n}-q", "createTime", datetime(2026, 1, n % 28 + 1, tzinfo=UTC)),
        ("addE", f"e{n}", "usedBy", n, n + 1),
        ("setEP", f"e{n}", "weights", {"d": Decimal("1.5"), "ids": {uuid.UUID(int=n)}, "l": [n, 2.5, True]}),
    ]


def open_recovered(path: Path, **options: object) -> tuple[DurableLog, object, list[list[tuple]]]:
    store = DurableLog(path, **options)
    state, replay = store.recover()
    return store, state, list(replay)


def only_segment(path: Path) -> Path:
    (segment,) = sorted(path.glob("wal-*.log"))
    return segment


def test_append_and_recover_round_trip(tmp_path: Path) -> None:
    with DurableLog(tmp_path / "store") as store:
        assert store.recover()[0] is None
        assert [store.append(tx(n)) for n in (1, 2, 3)] == [1, 2, 3]

    store, state, replay = open_recovered(tmp_path / "store")
    assert state is None
    assert replay == [tx(1), tx(2), tx(3)]
    assert store.last_scn == 3
    store.close()


def test_scns_keep_rising_across_checkpoints_and_reopens(tmp_path: Path) -> None:
    with DurableLog(tmp_path) as store:
        store.recover()
        store.append(tx(1))
        store.append(tx(2))
        store.checkpoint({"vertices": [1, 2]})
        assert store.append(tx(3)) == 3

    with DurableLog(tmp_path) as store:
        state, replay = store.recover()
        assert state == {"vertices": [1, 2]}
        assert list(replay) == [tx(3)]
        store.checkpoint({"vertices": [1, 2, 3]})
        assert store.append(tx(4)) == 4

    store, state, replay = open_recovered(tmp_path)
    assert state == {"vertices": [1, 2, 3]}
    assert replay == [tx(4)]
    assert store.append(tx(5)) == 5
    store.close()


def test_checkpoint_without_new_commits_rewrites_nothing(tmp_path: Path) -> None:
    with DurableLog(tmp_path) as store:
        store.recover()
        store.append(tx(1))
        store.checkpoint("one")
        (snapshot,) = tmp_path.glob("snapshot-*.snap")
        written = snapshot.stat()
        store.checkpoint("one")
    with DurableLog(tmp_path) as store:
        store.recover()
        store.checkpoint("one")
        assert store.append(tx(2)) == 2
    assert snapshot.stat().st_ino == written.st_ino
    assert sorted(p.name for p in tmp_path.glob("wal-*")) == [
        "wal-00000000000000000001.log",
        "wal-00000000000000000002.log",
    ]


def test_checkpoint_keeps_only_the_newest_snapshot(tmp_path: Path) -> None:
    with DurableLog(tmp_path) as store:
        store.recover()
        for n in range(1, 4):
            store.append(tx(n))
            store.checkpoint(n)
    assert [p.name for p in tmp_path.glob("snapshot-*")] == ["snapshot-00000000000000000003.snap"]


def test_should_checkpoint_after_enough_log_bytes(tmp_path: Path) -> None:
    with DurableLog(tmp_path, checkpoint_bytes=2_000) as store:
        store.recover()
        while not store.should_checkpoint():
            store.append(tx(store.last_scn + 1))
        assert 2_000 < sum(p.stat().st_size for p in tmp_path.glob("wal-*.log")) < 3_000
        store.checkpoint("state")
        assert not store.should_checkpoint()

    with DurableLog(tmp_path, checkpoint_bytes=2_000) as store:
        store.recover()
        assert not store.should_checkpoint()


def test_torn_last_record_is_cut_at_every_byte_offset(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with DurableLog(tmp_path) as store:
        store.recover()
        store.append(tx(1))
        store.append(tx(2))
        last_record_start = only_segment(tmp_path).stat().st_size
        store.append([("dropE", "e2")])
    segment = only_segment(tmp_path)
    pristine = segment.read_bytes()

    for cut in range(last_record_start + 1, len(pristine)):
        segment.write_bytes(pristine[:cut])
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            store, _, replay = open_recovered(tmp_path, sync=False)
        assert replay == [tx(1), tx(2)], f"cut at {cut}"
        assert f"offset {last_record_start}" in caplog.text
        assert segment.stat().st_size == last_record_start
        assert store.append([("dropV", 4)]) == 3
        store.close()
        store, _, replay = open_recovered(tmp_path, sync=False)
        assert replay == [tx(1), tx(2), [("dropV", 4)]]
        store.close()


def test_zero_filled_tail_from_a_machine_crash_is_cut(tmp_path: Path) -> None:
    with DurableLog(tmp_path) as store:
        store.recover()
        store.append(tx(1))
    with only_segment(tmp_path).open("ab") as file:
        file.write(bytes(4096))
    store, _, replay = open_recovered(tmp_path)
    assert replay == [tx(1)]
    store.close()


def record_offsets(segment: Path) -> list[int]:
    """Start offsets of the records of a segment, found by walking the length fields."""
    data = segment.read_bytes()
    offsets, offset = [], SEGMENT_HEADER_SIZE
    while offset < len(data):
        offsets.append(offset)
        (length,) = struct.unpack_from("<I", data, offset)
        offset += RECORD_HEADER_SIZE + length
    return offsets


@pytest.mark.parametrize("where", ["length", "scn", "payload"])
def test_flipped_byte_in_the_middle_is_reported_as_corruption(tmp_path: Path, where: str) -> None:
    with DurableLog(tmp_path) as store:
        store.recover()
        for n in (1, 2, 3):
            store.append(tx(n))
    segment = only_segment(tmp_path)
    middle = record_offsets(segment)[1]
    position = middle + {"length": 0, "scn": 5, "payload": RECORD_HEADER_SIZE + 10}[where]
    data = bytearray(segment.read_bytes())
    data[position] ^= 0x40
    segment.write_bytes(bytes(data))

    with pytest.raises(StoreCorruptError) as caught, DurableLog(tmp_path) as store:
        store.recover()
    assert str(segment) in caught.value.message
    assert f"offset {middle}" in caught.value.message
    assert "lineage graph export" in caught.value.hint
    assert segment.read_bytes() == bytes(data), "a corrupt store must not be modified"


def test_damaged_snapshot_is_reported(tmp_path: Path) -> None:
    with DurableLog(tmp_path) as store:
        store.recover()
        store.append(tx(1))
        store.checkpoint(list(range(1000)))
    (snapshot,) = tmp_path.glob("snapshot-*.snap")
    data = bytearray(snapshot.read_bytes())
    data[len(data) // 2] ^= 1
    snapshot.write_bytes(bytes(data))
    with (
        pytest.raises(StoreCorruptError, match=r"snapshot-0+1\.snap"),
        DurableLog(tmp_path) as store,
    ):
        store.recover()


def test_unknown_format_version_is_a_clear_error(tmp_path: Path) -> None:
    head = struct.pack("<8sHQ", SEGMENT_MAGIC, 99, 1)
    (tmp_path / "wal-00000000000000000001.log").write_bytes(head + struct.pack("<I", zlib.crc32(head)))
    with pytest.raises(StoreError, match="format version 99") as caught, DurableLog(tmp_path) as store:
        store.recover()
    assert not isinstance(caught.value, StoreCorruptError)
    assert "upgrade" in caught.value.hint


def test_snapshot_of_an_unknown_format_version_is_a_clear_error(tmp_path: Path) -> None:
    with DurableLog(tmp_path) as store:
        store.recover()
        store.append(tx(1))
        store.checkpoint("one")
    (snapshot,) = tmp_path.glob("snapshot-*.snap")
    data = bytearray(snapshot.read_bytes())
    assert data[8:10] == (2).to_bytes(2, "little")  # snapshots are written in format 2
    data[8:10] = (3).to_bytes(2, "little")
    snapshot.write_bytes(bytes(data))
    with (
        pytest.raises(
            StoreError, match="format version 3; this lineage-platform reads version 1 and 2"
        ) as caught,
        DurableLog(tmp_path) as store,
    ):
        store.recover()
    assert not isinstance(caught.value, StoreCorruptError)
    assert "upgrade" in caught.value.hint


def test_missing_segment_is_reported(tmp_path: Path) -> None:
    with DurableLog(tmp_path, retain_bytes=0) as store:
        store.recover()
        store.append(tx(1))
        store.checkpoint("one")
        store.append(tx(2))
        store.checkpoint("two")
        store.append(tx(3))
    (tmp_path / "snapshot-00000000000000000002.snap").unlink()
    with pytest.raises(StoreCorruptError, match="resumes at SCN 3"), DurableLog(tmp_path) as store:
        store.recover()


def test_second_open_in_another_process_is_refused(tmp_path: Path) -> None:
    holder_code = (
        "import sys; from lineage_platform.graph.embedded.storage import DurableLog;"
        f"s = DurableLog({str(tmp_path)!r}); print('ready', flush=True); sys.stdin.read()"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", holder_code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(StoreLockedError) as caught:
            DurableLog(tmp_path)
        assert f"process {holder.pid}" in caught.value.message
        assert "lineage graph serve" in caught.value.hint
    finally:
        holder.communicate("")
    with DurableLog(tmp_path) as store:
        store.recover()


def test_second_open_in_the_same_process_is_refused(tmp_path: Path) -> None:
    with DurableLog(tmp_path) as store:
        store.recover()
        with pytest.raises(StoreLockedError):
            DurableLog(tmp_path)
    DurableLog(tmp_path).close()


def test_store_path_that_is_a_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "graph").write_text("not a directory")
    with pytest.raises(StoreError, match="cannot open graph store") as caught:
        DurableLog(tmp_path / "graph")
    assert "embedded:PATH" in caught.value.hint


def test_append_needs_recover_and_an_open_store(tmp_path: Path) -> None:
    store = DurableLog(tmp_path)
    with pytest.raises(StoreError, match="not ready"):
        store.append(tx(1))
    store.recover()
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.append(tx(1))


def test_leftovers_of_an_interrupted_checkpoint_are_ignored(tmp_path: Path) -> None:
    with DurableLog(tmp_path) as store:
        store.recover()
        store.append(tx(1))
    (tmp_path / "snapshot-00000000000000000001.snap.tmp").write_bytes(b"half a snapshot")
    store, state, replay = open_recovered(tmp_path)
    assert (state, replay) == (None, [tx(1)])
    assert not list(tmp_path.glob("*.tmp"))
    store.close()


def test_read_since_spans_checkpoints_while_segments_are_retained(tmp_path: Path) -> None:
    with DurableLog(tmp_path) as store:
        store.recover()
        for n in (1, 2, 3):
            store.append(tx(n))
        store.checkpoint("three")
        store.append(tx(4))
        store.append(tx(5))
        assert [scn for scn, _ in read_since(tmp_path, 0)] == [1, 2, 3, 4, 5]
        assert list(read_since(tmp_path, 3)) == [(4, tx(4)), (5, tx(5))]
        assert list(read_since(tmp_path, 5)) == []


def test_read_since_reports_records_dropped_by_retention(tmp_path: Path) -> None:
    with DurableLog(tmp_path, retain_bytes=0) as store:
        store.recover()
        store.append(tx(1))
        store.append(tx(2))
        store.checkpoint("two")
        store.append(tx(3))
    with pytest.raises(StoreError, match="oldest retained SCN is 3"):
        list(read_since(tmp_path, 1))
    assert list(read_since(tmp_path, 2)) == [(3, tx(3))]


def test_read_since_stops_before_a_record_still_being_written(tmp_path: Path) -> None:
    with DurableLog(tmp_path) as store:
        store.recover()
        store.append(tx(1))
        store.append(tx(2))
    segment = only_segment(tmp_path)
    whole = segment.read_bytes()
    segment.write_bytes(whole[:-7])
    assert [scn for scn, _ in read_since(tmp_path, 0)] == [1]
    assert segment.stat().st_size == len(whole) - 7, "a reader must not repair the log"


def test_unstorable_value_is_refused_without_touching_the_log(tmp_path: Path) -> None:
    with DurableLog(tmp_path) as store:
        store.recover()
        with pytest.raises(StoreError, match="transaction 1 holds a value the store cannot save"):
            store.append([("setEP", "e1", "callback", lambda: None)])
        assert store.append(tx(1)) == 1
    store, _, replay = open_recovered(tmp_path)
    assert replay == [tx(1)]
    store.close()


def test_read_since_on_a_missing_store_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no graph store at"):
        list(read_since(tmp_path / "nowhere", 0))


class DiskFullWhilePickling:
    """Stands in for a graph state whose snapshot hits a full disk half-way through."""

    def __reduce__(self) -> tuple:
        raise OSError(errno.ENOSPC, "No space left on device")


def test_failed_checkpoint_leaves_the_store_usable(tmp_path: Path) -> None:
    with DurableLog(tmp_path) as store:
        store.recover()
        store.append(tx(1))
        store.checkpoint("one")
        store.append(tx(2))
        with pytest.raises(StoreError, match="could not write snapshot") as caught:
            store.checkpoint(["x" * 100_000, DiskFullWhilePickling()])
        assert "still safe in the log" in caught.value.hint
        assert not list(tmp_path.glob("*.tmp"))
        assert store.append(tx(3)) == 3
    store, state, replay = open_recovered(tmp_path)
    assert (state, replay) == ("one", [tx(2), tx(3)])
    store.close()


def test_crash_between_snapshot_and_new_segment_keeps_appending_to_the_old_one(tmp_path: Path) -> None:
    with DurableLog(tmp_path) as store:
        store.recover()
        store.append(tx(1))
        store.append(tx(2))
        store.checkpoint("two")
    (tmp_path / "wal-00000000000000000003.log").unlink()

    store, state, replay = open_recovered(tmp_path)
    assert (state, replay) == ("two", [])
    assert store.append(tx(3)) == 3
    store.close()
    store, state, replay = open_recovered(tmp_path)
    assert (state, replay) == ("two", [tx(3)])
    store.checkpoint("three")
    assert store.append(tx(4)) == 4
    store.close()
    assert [scn for scn, _ in read_since(tmp_path, 0)] == [1, 2, 3, 4]


def test_log_tail_reads_only_what_was_appended_since_the_last_poll(tmp_path: Path) -> None:
    with DurableLog(tmp_path) as store:
        store.recover()
        tail = LogTail(tmp_path, 0)
        assert list(tail.poll()) == []
        store.append(tx(1))
        store.append(tx(2))
        assert list(tail.poll()) == [(1, tx(1)), (2, tx(2))]
        assert list(tail.poll()) == []
        store.append(tx(3))
        store.checkpoint("three")
        store.append(tx(4))
        assert list(tail.poll()) == [(3, tx(3)), (4, tx(4))]
        assert tail.scn == 4


def test_log_tail_waits_for_a_record_being_appended(tmp_path: Path) -> None:
    with DurableLog(tmp_path) as store:
        store.recover()
        store.append(tx(1))
    tail = LogTail(tmp_path, 0)
    assert [scn for scn, _ in tail.poll()] == [1]
    record = encode_record(2, tx(2))
    with only_segment(tmp_path).open("ab") as segment:
        segment.write(record[:30])
        segment.flush()
        assert list(tail.poll()) == []
        segment.write(record[30:])
    assert list(tail.poll()) == [(2, tx(2))]


def test_log_tail_reports_a_gap_between_segments(tmp_path: Path) -> None:
    with DurableLog(tmp_path) as store:
        store.recover()
        store.append(tx(1))
        store.checkpoint("one")
        store.append(tx(2))
        store.checkpoint("two")
        store.append(tx(3))
    (tmp_path / "wal-00000000000000000002.log").unlink()
    tail = LogTail(tmp_path, 0)
    with pytest.raises(StoreCorruptError, match="a segment is missing"):
        list(tail.poll())
    assert tail.scn == 1


def test_log_tail_moves_past_a_segment_deleted_after_it_was_read(tmp_path: Path) -> None:
    with DurableLog(tmp_path, retain_bytes=0) as store:
        store.recover()
        store.append(tx(1))
        tail = LogTail(tmp_path, 0)
        assert [scn for scn, _ in tail.poll()] == [1]
        store.checkpoint("one")
        store.append(tx(2))
        assert not (tmp_path / "wal-00000000000000000001.log").exists()
        assert list(tail.poll()) == [(2, tx(2))]


class FullDisk:
    """The store's file-write seam on a device with ``room`` bytes left: writes beyond fail with ENOSPC after
    writing what fits (as a real full disk does); ``room = None`` frees the space."""

    def __init__(self, write_all: object, room: int | None) -> None:
        self._write_all = write_all
        self.room = room

    def __call__(self, fd: int, data: bytes) -> None:
        if self.room is not None and len(data) > self.room:
            self._write_all(fd, data[: self.room])
            self.room = 0
            raise OSError(errno.ENOSPC, "No space left on device")
        self._write_all(fd, data)


def test_the_log_recovers_once_a_full_disk_has_room_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from lineage_platform.graph.embedded import storage

    disk = FullDisk(storage._write_all, room=None)
    monkeypatch.setattr(storage, "_write_all", disk)
    with DurableLog(tmp_path) as store, caplog.at_level(logging.INFO):
        store.recover()
        assert store.append(tx(1)) == 1
        disk.room = 100  # a record of tx(2) is larger: half of it reaches the file
        for _ in range(3):
            with pytest.raises(StoreError, match="No space left on device") as caught:
                store.append(tx(2))
            assert "commits succeed again once the log can be written" in caught.value.hint
        assert len([r for r in caplog.records if "cannot write the log" in r.message]) == 1
        disk.room = None
        assert store.append(tx(2)) == 2
        assert store.append(tx(3)) == 3
        assert any("writable again after 3 failed commit(s)" in r.message for r in caplog.records)
    store, _state, replay = open_recovered(tmp_path)
    assert replay == [tx(1), tx(2), tx(3)]
    store.close()


def test_a_full_disk_fails_the_commit_and_the_engine_keeps_committing_afterwards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gremlin_python.process.graph_traversal import __

    from lineage_platform.graph.embedded import storage
    from lineage_platform.graph.embedded.engine import EmbeddedGraph

    disk = FullDisk(storage._write_all, room=None)
    monkeypatch.setattr(storage, "_write_all", disk)
    with EmbeddedGraph(tmp_path) as graph:
        graph.execute(__.add_v("table").property("name", "a").bytecode)
        disk.room = 10
        with pytest.raises(StoreError, match="could not write transaction 2"):
            graph.execute(__.add_v("table").property("name", "lost").bytecode)
        disk.room = None
        graph.execute(__.add_v("table").property("name", "b").bytecode)
        names = [t.object for t in graph.execute(__.V().values("name").bytecode)]
        assert names == ["a", "b"]
    with EmbeddedGraph(tmp_path) as graph:
        assert [t.object for t in graph.execute(__.V().values("name").bytecode)] == ["a", "b"]
