"""On-disk format of the embedded store's log segments (version 1) and snapshots (version 2; version 1 is read).

This module only encodes and decodes bytes; :mod:`.storage` decides which files exist and when they are
written. All integers are little-endian.

Log segment (``wal-<base scn>.log``)::

    header  magic b"LPGWAL\\0\\0" | version u16 | base scn u64 | crc32 u32 (of the preceding 18 bytes)
    record  payload length u32 | scn u64 | payload crc32 u32 | header crc32 u32 (of the preceding 16 bytes)
            | payload (a pickled list of op tuples)

The header CRC lets a reader tell a damaged length field from a torn write, so a bit flip in the middle of
the log is never mistaken for the end of it.

Snapshot (``snapshot-<scn>.snap``)::

    magic b"LPGSNAP\\0" | version u16 | scn u64 | payload length u64 | payload crc32 u32 | pickled state

The state is ``MemGraph.export_columns()`` in a version 2 snapshot (laid out by column, so that opening maps
over lists instead of decoding and importing row by row) and ``MemGraph.export_state()`` (rows) in version 1;
``MemGraph.import_state`` takes either.
"""

from __future__ import annotations

import pickle
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from lineage_platform.errors import StoreCorruptError, StoreError
from lineage_platform.gc_pause import gc_paused

SEGMENT_VERSION = 1
SNAPSHOT_VERSION = 2
_SNAPSHOT_VERSIONS_READ = (1, 2)
PICKLE_PROTOCOL = 5

SEGMENT_MAGIC = b"LPGWAL\0\0"
SNAPSHOT_MAGIC = b"LPGSNAP\0"
_SEGMENT_HEADER = struct.Struct("<8sHQ")
_SEGMENT_HEADER_CRC = struct.Struct("<I")
SEGMENT_HEADER_SIZE = _SEGMENT_HEADER.size + _SEGMENT_HEADER_CRC.size
_RECORD_HEAD = struct.Struct("<IQI")
_RECORD_HEAD_CRC = struct.Struct("<I")
RECORD_HEADER_SIZE = _RECORD_HEAD.size + _RECORD_HEAD_CRC.size
_SNAPSHOT_HEADER = struct.Struct("<8sHQQI")

RESTORE_HINT = (
    "restore the store directory from a file-system backup, or import the latest `lineage graph export` "
    "into a new store"
)


def encode_segment_header(base_scn: int) -> bytes:
    """The fixed header that opens a log segment whose first record will carry ``base_scn``."""
    head = _SEGMENT_HEADER.pack(SEGMENT_MAGIC, SEGMENT_VERSION, base_scn)
    return head + _SEGMENT_HEADER_CRC.pack(zlib.crc32(head))


def encode_record(scn: int, ops: list[tuple]) -> bytes:
    """One framed log record holding a committed transaction's ops."""
    payload = pickle.dumps(ops, protocol=PICKLE_PROTOCOL)
    head = _RECORD_HEAD.pack(len(payload), scn, zlib.crc32(payload))
    return head + _RECORD_HEAD_CRC.pack(zlib.crc32(head)) + payload


def decode_ops(payload: bytes | memoryview) -> list[tuple]:
    """The op list stored in a record payload."""
    return pickle.loads(payload)


def _check_version(version: int, path: Path, readable: tuple[int, ...]) -> None:
    if version not in readable:
        known = " and ".join(map(str, readable))
        raise StoreError(
            f"{path} uses store format version {version}; this lineage-platform reads version {known}",
            hint="open the store with the lineage-platform release that wrote it, or upgrade lineage-platform",
        )


def decode_segment_header(data: bytes | memoryview, path: Path) -> int:
    """Validate a segment header and return its base SCN."""
    if len(data) < SEGMENT_HEADER_SIZE:
        raise StoreCorruptError(f"{path}: log segment header is truncated at offset 0", hint=RESTORE_HINT)
    head = bytes(data[: _SEGMENT_HEADER.size])
    magic, version, base_scn = _SEGMENT_HEADER.unpack(head)
    if magic != SEGMENT_MAGIC:
        raise StoreCorruptError(
            f"{path} is not a lineage log segment (bad magic at offset 0)", hint=RESTORE_HINT
        )
    (crc,) = _SEGMENT_HEADER_CRC.unpack_from(data, _SEGMENT_HEADER.size)
    if crc != zlib.crc32(head):
        raise StoreCorruptError(
            f"{path}: log segment header checksum mismatch at offset 0", hint=RESTORE_HINT
        )
    _check_version(version, path, (SEGMENT_VERSION,))
    return base_scn


@dataclass(frozen=True)
class Record:
    """One committed transaction as found in a segment: its SCN, pickled ops and the file offset after it."""

    scn: int
    payload: memoryview
    end: int


@dataclass(frozen=True)
class TornTail:
    """An incomplete record at the end of a segment, left by a crash during an append (or one in progress)."""

    offset: int
    reason: str


def scan_records(
    data: bytes, path: Path, expected_scn: int, *, origin: int = 0
) -> Iterator[Record | TornTail]:
    """Yield the records in ``data``, then a :class:`TornTail` if it ends in a partial write.

    ``data`` holds the segment file's bytes from file offset ``origin`` to its end: the whole file (header
    included) when ``origin`` is 0, else bytes starting at a record boundary. ``expected_scn`` is the SCN the
    first record must carry; each further record carries the next one. Damage that a crashed append cannot
    explain raises :class:`StoreCorruptError` with the file and offset.
    """
    view = memoryview(data)
    offset = SEGMENT_HEADER_SIZE if origin == 0 else 0
    size = len(data)
    while offset < size:
        at = origin + offset
        if size - offset < RECORD_HEADER_SIZE:
            yield TornTail(at, "partial record header")
            return
        head = view[offset : offset + _RECORD_HEAD.size]
        (head_crc,) = _RECORD_HEAD_CRC.unpack_from(view, offset + _RECORD_HEAD.size)
        if head_crc != zlib.crc32(head):
            if data.count(b"\0", offset) == size - offset:
                yield TornTail(at, "zero-filled tail")
                return
            raise StoreCorruptError(
                f"{path}: record header checksum mismatch at offset {at}", hint=RESTORE_HINT
            )
        length, scn, payload_crc = _RECORD_HEAD.unpack(head)
        start = offset + RECORD_HEADER_SIZE
        end = start + length
        if end > size:
            yield TornTail(at, "partial record payload")
            return
        payload = view[start:end]
        if zlib.crc32(payload) != payload_crc:
            if end == size:
                yield TornTail(at, "last record's payload checksum mismatch")
                return
            raise StoreCorruptError(
                f"{path}: record payload checksum mismatch at offset {at}", hint=RESTORE_HINT
            )
        if scn != expected_scn:
            raise StoreCorruptError(
                f"{path}: record at offset {at} has SCN {scn}, expected {expected_scn}", hint=RESTORE_HINT
            )
        yield Record(scn, payload, origin + end)
        expected_scn += 1
        offset = end


class _ChecksummingWriter:
    """A write-only file wrapper that keeps a running CRC32 and byte count of what passes through it."""

    def __init__(self, file: BinaryIO) -> None:
        self._file = file
        self.crc = 0
        self.size = 0

    def write(self, chunk: bytes | memoryview) -> int:
        self.crc = zlib.crc32(chunk, self.crc)
        self.size += len(chunk)
        return self._file.write(chunk)


def write_snapshot(file: BinaryIO, scn: int, state: object) -> None:
    """Write a snapshot of ``state`` taken at ``scn`` to a fresh, seekable binary file (not synced)."""
    file.write(_SNAPSHOT_HEADER.pack(SNAPSHOT_MAGIC, SNAPSHOT_VERSION, scn, 0, 0))
    writer = _ChecksummingWriter(file)
    pickle.dump(state, writer, protocol=PICKLE_PROTOCOL)
    file.seek(0)
    file.write(_SNAPSHOT_HEADER.pack(SNAPSHOT_MAGIC, SNAPSHOT_VERSION, scn, writer.size, writer.crc))
    file.seek(0, 2)


def read_snapshot(path: Path) -> tuple[int, object]:
    """The ``(scn, state)`` stored in a snapshot file, after checking its header and checksum.

    Unpickling runs with the garbage collector paused: a graph snapshot is millions of small tuples, and
    collections triggered while they are created would more than double the load time.
    """
    data = path.read_bytes()
    if len(data) < _SNAPSHOT_HEADER.size:
        raise StoreCorruptError(f"{path}: snapshot header is truncated at offset 0", hint=RESTORE_HINT)
    magic, version, scn, length, crc = _SNAPSHOT_HEADER.unpack_from(data)
    if magic != SNAPSHOT_MAGIC:
        raise StoreCorruptError(
            f"{path} is not a lineage snapshot (bad magic at offset 0)", hint=RESTORE_HINT
        )
    _check_version(version, path, _SNAPSHOT_VERSIONS_READ)
    payload = memoryview(data)[_SNAPSHOT_HEADER.size :]
    if len(payload) != length or zlib.crc32(payload) != crc:
        raise StoreCorruptError(
            f"{path}: snapshot payload (offset {_SNAPSHOT_HEADER.size}, {len(payload)} of {length} bytes) "
            "fails its checksum",
            hint=RESTORE_HINT,
        )
    with gc_paused():
        return scn, pickle.loads(payload)
