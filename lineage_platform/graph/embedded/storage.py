"""Durable local storage for the embedded graph engine: a write-ahead log plus snapshots, under a process lock.

The engine keeps the graph in memory. Every committed transaction is appended to the log as one record (its
op tuples) and fsynced before the commit is acknowledged; now and then the engine hands over the whole graph
state, which becomes a snapshot, and the log starts a new segment. Opening a store loads the newest snapshot
and replays the records committed after it.

Layout of a store directory (bytes: :mod:`.storage_format`)::

    LOCK                            flock()ed by the one process that has the store open; holds its PID
    snapshot-<scn>.snap             the graph state after transaction <scn> (only the newest is kept)
    wal-<base scn>.log              log segments; the first record of a segment carries <base scn>

Sequence numbers (SCNs) count committed transactions from 1, without gaps, across checkpoints and restarts.

Retention: a checkpoint makes every older segment redundant for recovery. Those closed segments are kept for
change-capture readers (:class:`LogTail`, :func:`read_since`) while their total size stays within ``retain_bytes``; the oldest
are deleted first. A reader that falls further behind gets a :class:`StoreError` naming the oldest SCN still
retained and must re-seed from a snapshot or an export.
"""

from __future__ import annotations

import fcntl
import logging
import os
import pickle
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from lineage_platform.errors import StoreCorruptError, StoreError, StoreLockedError
from lineage_platform.graph.embedded.storage_format import (
    RECORD_HEADER_SIZE,
    RESTORE_HINT,
    TornTail,
    decode_ops,
    decode_segment_header,
    encode_record,
    encode_segment_header,
    read_snapshot,
    scan_records,
    write_snapshot,
)
from lineage_platform.private_files import FILE_MODE, open_private, private_dir

log = logging.getLogger(__name__)

MiB = 1024 * 1024
DEFAULT_CHECKPOINT_BYTES = 64 * MiB
DEFAULT_RETAIN_BYTES = 256 * MiB
LOCK_FILE = "LOCK"
_SEGMENT_PREFIX, _SEGMENT_SUFFIX = "wal-", ".log"
_SNAPSHOT_PREFIX, _SNAPSHOT_SUFFIX = "snapshot-", ".snap"
_TEMP_SUFFIX = ".tmp"
_SNAPSHOT_BUFFER = 4 * MiB


@dataclass(frozen=True)
class _Segment:
    base_scn: int
    path: Path


def _segment_path(directory: Path, base_scn: int) -> Path:
    return directory / f"{_SEGMENT_PREFIX}{base_scn:020d}{_SEGMENT_SUFFIX}"


def _snapshot_path(directory: Path, scn: int) -> Path:
    return directory / f"{_SNAPSHOT_PREFIX}{scn:020d}{_SNAPSHOT_SUFFIX}"


def _numbered_files(directory: Path, prefix: str, suffix: str) -> list[tuple[int, Path]]:
    """Files named ``<prefix><number><suffix>``, sorted by number."""
    found = []
    for path in directory.glob(f"{prefix}*{suffix}"):
        number = path.name[len(prefix) : -len(suffix)]
        if number.isdigit():
            found.append((int(number), path))
    return sorted(found)


def _list_segments(directory: Path) -> list[_Segment]:
    return [
        _Segment(base, path) for base, path in _numbered_files(directory, _SEGMENT_PREFIX, _SEGMENT_SUFFIX)
    ]


def _segments_after(segments: list[_Segment], scn: int) -> list[_Segment]:
    """The segments that may hold records with an SCN above ``scn`` (the last segment always qualifies)."""
    return [
        segment
        for segment, successor in zip(segments, [*segments[1:], None])
        if successor is None or successor.base_scn > scn + 1
    ]


def _successor(segments: list[_Segment], segment: _Segment) -> _Segment | None:
    """The segment after ``segment`` in a sorted listing, if any."""
    return next((candidate for candidate in segments if candidate.base_scn > segment.base_scn), None)


def _check_segment_header(segment: _Segment, data: bytes, expected_base: int | None) -> int:
    """The base SCN in the header opening ``data``, checked against the file name (and ``expected_base``)."""
    base = decode_segment_header(data, segment.path)
    if base != segment.base_scn:
        raise StoreCorruptError(
            f"{segment.path}: header says the segment starts at SCN {base}, its name says {segment.base_scn}",
            hint=RESTORE_HINT,
        )
    if expected_base is not None and base != expected_base:
        raise StoreCorruptError(
            f"{segment.path}: segment starts at SCN {base} but the log before it ends at SCN {expected_base - 1} "
            "(a segment is missing)",
            hint=RESTORE_HINT,
        )
    return base


def _sync_file(fd: int) -> None:
    """Flush a file's data to stable storage; on macOS fsync() stops at the drive's cache, F_FULLFSYNC does not."""
    if hasattr(fcntl, "F_FULLFSYNC"):
        fcntl.fcntl(fd, fcntl.F_FULLFSYNC)
    else:
        os.fdatasync(fd)


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _acquire_lock(directory: Path) -> int:
    """Open and exclusively flock() the store's lock file, recording our PID in it."""
    fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise StoreLockedError(
            f"graph store {directory} is already open for writing by process {holder}",
            hint="stop that process, or share one graph between processes by running `lineage graph serve` on "
            "this store and connecting to the server's ws:// URL",
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


class DurableLog:
    """The write-ahead log and snapshots of one store directory, open for writing by this process only.

    Call :meth:`recover` once after opening, then :meth:`append` each committed transaction and
    :meth:`checkpoint` whenever :meth:`should_checkpoint` says so. ``sync=False`` skips the per-append fsync
    (a machine crash may then lose the latest transactions, never the store); checkpoints always sync.
    Not thread-safe: the caller serialises commits (the engine does so under its graph lock).
    """

    def __init__(
        self,
        path: Path,
        *,
        sync: bool = True,
        checkpoint_bytes: int = DEFAULT_CHECKPOINT_BYTES,
        retain_bytes: int = DEFAULT_RETAIN_BYTES,
    ) -> None:
        self.path = Path(path)
        self._sync = sync
        self._checkpoint_bytes = checkpoint_bytes
        self._retain_bytes = retain_bytes
        try:
            private_dir(self.path)
            self._lock_fd: int | None = _acquire_lock(self.path)
        except OSError as exc:
            raise StoreError(
                f"cannot open graph store {self.path}: {exc}",
                hint="point the graph URL (embedded:PATH) at a directory this user can create and write",
            ) from exc
        for leftover in self.path.glob(f"*{_TEMP_SUFFIX}"):
            leftover.unlink()
        self._segment: _Segment | None = None
        self._segment_fd: int | None = None
        self._next_scn = 0
        self._snapshot_scn: int | None = None
        self._snapshot_size = 0
        self._bytes_since_checkpoint = 0
        # a segment whose torn tail (from a failed append) must be cut before the next append, and its size
        self._torn: tuple[_Segment, int] | None = None
        self._failed_appends = 0  # consecutive appends that failed (disk full, I/O error)

    @property
    def last_scn(self) -> int:
        """SCN of the newest committed transaction (0 for an empty store); valid after :meth:`recover`."""
        return self._next_scn - 1

    def recover(self) -> tuple[object | None, Iterator[list[tuple]]]:
        """Load the newest snapshot and the op lists committed after it, in commit order.

        A record torn by a crash at the end of the log is truncated away with a warning; any other damage
        raises :class:`StoreCorruptError` naming the file and offset.
        """
        self._require_open()
        snapshots = _numbered_files(self.path, _SNAPSHOT_PREFIX, _SNAPSHOT_SUFFIX)
        state, snapshot_scn = None, 0
        if snapshots:
            snapshot_scn, state = read_snapshot(snapshots[-1][1])
            self._snapshot_scn = snapshot_scn
            self._snapshot_size = snapshots[-1][1].stat().st_size
        pending = self._scan_log(snapshot_scn)
        self._bytes_since_checkpoint = sum(RECORD_HEADER_SIZE + len(payload) for payload in pending)
        return state, (decode_ops(payload) for payload in pending)

    def _scan_log(self, snapshot_scn: int) -> list[memoryview]:
        """Validate the segments recovery needs, cut a torn tail, open the last segment for appending."""
        segments = _segments_after(_list_segments(self.path), snapshot_scn)
        pending: list[memoryview] = []
        next_scn = snapshot_scn + 1
        for index, segment in enumerate(segments):
            data = segment.path.read_bytes()
            base = _check_segment_header(
                segment, data, expected_base=max(next_scn, snapshot_scn + 1) if index else None
            )
            if index == 0 and base > snapshot_scn + 1:
                raise StoreCorruptError(
                    f"{segment.path}: log resumes at SCN {base} but the snapshot ends at SCN {snapshot_scn}",
                    hint=RESTORE_HINT,
                )
            next_scn = base
            for item in scan_records(data, segment.path, base):
                if isinstance(item, TornTail):
                    self._cut_torn_tail(segment, item, is_last=index == len(segments) - 1)
                    break
                if item.scn > snapshot_scn:
                    pending.append(item.payload)
                next_scn = item.scn + 1
        self._next_scn = max(next_scn, snapshot_scn + 1)
        if segments:
            self._open_segment(segments[-1])
        else:
            self._start_segment(self._next_scn)
        return pending

    @staticmethod
    def _cut_torn_tail(segment: _Segment, tail: TornTail, *, is_last: bool) -> None:
        if not is_last:
            raise StoreCorruptError(
                f"{segment.path}: {tail.reason} at offset {tail.offset} in a segment that is not the last one",
                hint=RESTORE_HINT,
            )
        log.warning(
            "%s: %s at offset %d (a crash interrupted the last commit); truncating it",
            segment.path,
            tail.reason,
            tail.offset,
        )
        with segment.path.open("r+b") as file:
            file.truncate(tail.offset)
            _sync_file(file.fileno())

    def append(self, ops: list[tuple]) -> int:
        """Durably log one committed transaction and return its SCN."""
        fd = self._require_segment()
        scn = self._next_scn
        try:
            record = encode_record(scn, ops)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            raise StoreError(
                f"transaction {scn} holds a value the store cannot save: {exc}",
                hint="store only str, int, float, bool, datetime, UUID, Decimal and lists, sets or dicts of them",
            ) from exc
        size = os.fstat(fd).st_size
        try:
            _write_all(fd, record)
            if self._sync:
                _sync_file(fd)
        except OSError as exc:
            self._failed_append(size, exc)
            raise StoreError(
                f"could not write transaction {scn} to {self.path}: {exc}",
                hint="free disk space or fix the device; the transaction was not committed, earlier ones are "
                "safe, and commits succeed again once the log can be written",
            ) from exc
        if self._failed_appends:
            log.warning(
                "%s: the log is writable again after %d failed commit(s)", self.path, self._failed_appends
            )
            self._failed_appends = 0
        self._next_scn += 1
        self._bytes_since_checkpoint += len(record)
        return scn

    def _failed_append(self, size: int, exc: OSError) -> None:
        """Cut what a failed append left at the end of the segment, so the log stays valid and the next append
        can try again; if even that fails, the cut is retried before the next append."""
        self._failed_appends += 1
        if self._failed_appends == 1:
            log.error(
                "%s: cannot write the log (%s); commits fail until it can be written again", self.path, exc
            )
        assert self._segment is not None and self._segment_fd is not None
        try:
            os.ftruncate(self._segment_fd, size)
        except OSError:
            self._torn = (self._segment, size)
            self._close_segment()

    def _cut_torn_append(self) -> None:
        """Reopen the segment a failed append left torn and cut it back to its last complete record."""
        assert self._torn is not None
        segment, size = self._torn
        try:
            fd = os.open(segment.path, os.O_WRONLY | os.O_APPEND)
        except OSError as exc:
            raise StoreError(
                f"the log of {self.path} cannot be reopened after a failed write: {exc}",
                hint="free disk space or fix the device; commits succeed again once the log can be written",
            ) from exc
        try:
            os.ftruncate(fd, size)
        except OSError as exc:
            os.close(fd)
            raise StoreError(
                f"the log of {self.path} cannot be repaired after a failed write: {exc}",
                hint="free disk space or fix the device; commits succeed again once the log can be written",
            ) from exc
        self._segment, self._segment_fd, self._torn = segment, fd, None

    def should_checkpoint(self) -> bool:
        """True once the log written since the last snapshot outweighs the snapshot (and ``checkpoint_bytes``)."""
        return self._bytes_since_checkpoint > max(self._checkpoint_bytes, self._snapshot_size)

    def checkpoint(self, state: object) -> None:
        """Atomically persist ``state`` (the graph after the last appended SCN, as ``MemGraph.export_columns()``
        gives it) and start a new log segment.

        Does nothing when the newest snapshot already covers the last appended SCN.
        """
        self._require_segment()
        scn = self.last_scn
        if scn == self._snapshot_scn:
            return
        target = _snapshot_path(self.path, scn)
        temporary = target.with_name(target.name + _TEMP_SUFFIX)
        try:
            with open_private(temporary, "wb", buffering=_SNAPSHOT_BUFFER) as file:
                write_snapshot(file, scn, state)
                file.flush()
                _sync_file(file.fileno())
            os.replace(temporary, target)
            _fsync_directory(self.path)
        except OSError as exc:
            temporary.unlink(missing_ok=True)
            raise StoreError(
                f"could not write snapshot {target}: {exc}",
                hint="free disk space; every committed transaction is still safe in the log, and the next "
                "checkpoint tries again",
            ) from exc
        self._snapshot_scn = scn
        self._snapshot_size = target.stat().st_size
        self._bytes_since_checkpoint = 0
        if self._segment is None or self._segment.base_scn != scn + 1:
            try:
                self._start_segment(scn + 1)
            except OSError as exc:  # the snapshot is in place; appends go on in the current segment
                raise StoreError(
                    f"could not start a new log segment in {self.path}: {exc}",
                    hint="free disk space; commits are still logged, and the next checkpoint tries again",
                ) from exc
        self._drop_unneeded_files(scn)

    def _drop_unneeded_files(self, snapshot_scn: int) -> None:
        """Delete older snapshots, and closed segments beyond the retention budget (oldest first)."""
        for scn, path in _numbered_files(self.path, _SNAPSHOT_PREFIX, _SNAPSHOT_SUFFIX):
            if scn < snapshot_scn:
                path.unlink()
        retained = 0
        for segment in reversed(_list_segments(self.path)):
            if segment == self._segment:
                continue
            retained += segment.path.stat().st_size
            if retained > self._retain_bytes:
                segment.path.unlink()

    def _start_segment(self, base_scn: int) -> None:
        """Create a segment atomically (header written, synced, renamed into place) and switch to it."""
        segment = _Segment(base_scn, _segment_path(self.path, base_scn))
        temporary = segment.path.with_name(segment.path.name + _TEMP_SUFFIX)
        with open_private(temporary, "wb") as file:
            file.write(encode_segment_header(base_scn))
            file.flush()
            _sync_file(file.fileno())
        os.replace(temporary, segment.path)
        _fsync_directory(self.path)
        self._open_segment(segment)

    def _open_segment(self, segment: _Segment) -> None:
        self._close_segment()
        self._segment_fd = os.open(segment.path, os.O_WRONLY | os.O_APPEND)
        self._segment = segment

    def _close_segment(self) -> None:
        if self._segment_fd is not None:
            os.close(self._segment_fd)
        self._segment_fd = None
        self._segment = None

    def _require_open(self) -> None:
        if self._lock_fd is None:
            raise StoreError(f"the store {self.path} is closed", hint="open it again with DurableLog(path)")

    def _require_segment(self) -> int:
        self._require_open()
        if self._torn is not None:
            self._cut_torn_append()
        if self._segment_fd is None:
            raise StoreError(
                f"the log of {self.path} is not ready for writing",
                hint="call recover() once after opening the store (and reopen it after a write error)",
            )
        return self._segment_fd

    def close(self) -> None:
        """Close the log and release the process lock; safe to call twice."""
        self._close_segment()
        if self._lock_fd is not None:
            os.ftruncate(self._lock_fd, 0)
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> DurableLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class LogTail:
    """Follows a store's committed transactions from an SCN on, as a change-capture relay needs.

    Reads without taking the store's lock while the owning process keeps writing. Each :meth:`poll` yields
    the records complete at that moment and remembers the segment and byte offset where it stopped, so the
    next poll reads only what was appended since, moving on to newer segments across checkpoints. A record
    still being appended is left for a later poll. Records deleted by retention (see the module docstring)
    raise :class:`StoreError` naming the oldest SCN still retained.
    """

    def __init__(self, path: Path, scn: int) -> None:
        self.path = Path(path)
        self.scn = scn
        self._segment: _Segment | None = None
        self._offset = 0
        self._next_scn: int | None = None

    def poll(self) -> Iterator[tuple[int, list[tuple]]]:
        """Yield ``(scn, ops)`` for each committed record after :attr:`scn` (updated as records are yielded)."""
        if not self.path.is_dir():
            raise StoreError(
                f"no graph store at {self.path}", hint="pass the directory of an embedded graph store"
            )
        while True:
            # Listed before reading: a segment with a successor here is closed, so what it holds is final.
            segments = _list_segments(self.path)
            if self._segment is None and not self._start_segment(segments):
                return
            successor = _successor(segments, self._segment)
            complete = yield from self._read_new_records(closed=successor is not None)
            if complete is None:
                self._skip_deleted_segment()
            elif complete and successor is not None:
                self._segment, self._offset = successor, 0
            else:
                return

    def _start_segment(self, segments: list[_Segment]) -> bool:
        """Position at the start of the segment holding the record after :attr:`scn`; False if there is none."""
        candidates = _segments_after(segments, self.scn)
        if not candidates:
            return False
        if candidates[0].base_scn > self.scn + 1:
            _raise_not_retained(self.path, self.scn, candidates[0].base_scn)
        self._segment, self._offset = candidates[0], 0
        return True

    def _skip_deleted_segment(self) -> None:
        """Move past a segment that retention deleted after this tail had read all of it, or report the loss."""
        successor = _successor(_list_segments(self.path), self._segment)
        if successor is None or successor.base_scn != self._next_scn:
            _raise_not_retained(self.path, self.scn, successor.base_scn if successor else None)
        self._segment, self._offset = successor, 0

    def _read_new_records(self, *, closed: bool) -> Generator[tuple[int, list[tuple]], None, bool | None]:
        """Yield the new records of the current segment.

        Returns True if the segment ends on a record boundary, False if it ends in a record still being
        written, None if the segment was deleted.
        """
        segment = self._segment
        try:
            with segment.path.open("rb") as file:
                file.seek(self._offset)
                data = file.read()
        except FileNotFoundError:
            return None
        if self._offset == 0:
            self._next_scn = _check_segment_header(segment, data, self._next_scn)
        for item in scan_records(data, segment.path, self._next_scn, origin=self._offset):
            if isinstance(item, TornTail):
                if closed:
                    raise StoreCorruptError(
                        f"{segment.path}: {item.reason} at offset {item.offset}", hint=RESTORE_HINT
                    )
                return False
            self._offset, self._next_scn = item.end, item.scn + 1
            if item.scn > self.scn:
                self.scn = item.scn
                yield item.scn, decode_ops(item.payload)
        return True


def read_since(path: Path, scn: int) -> Iterator[tuple[int, list[tuple]]]:
    """The committed ``(scn, ops)`` records after ``scn`` that are complete now (one :meth:`LogTail.poll`).

    Pass 0 to start from the oldest retained record. A relay that keeps polling should hold one
    :class:`LogTail` instead, which does not re-read what it has already seen.
    """
    return LogTail(path, scn).poll()


def oldest_retained_scn(path: Path) -> int | None:
    """The first SCN of the oldest log segment retention left in the store at ``path`` (None: no segment)."""
    segments = _list_segments(Path(path))
    return segments[0].base_scn if segments else None


def _raise_not_retained(directory: Path, scn: int, oldest: int | None) -> NoReturn:
    oldest_text = f"; the oldest retained SCN is {oldest}" if oldest is not None else ""
    raise StoreError(
        f"transactions after SCN {scn} are no longer retained in {directory}{oldest_text}",
        hint="re-seed the consumer from a `lineage graph export`, or open the store with a larger retain_bytes",
    )
