"""Row-group level reads of Java-written encrypted files: row ranges seek through the row index and equal
the source, row-group statistics skip groups without losing a matching row, and selective reads decrypt
only a fraction of the bytes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from orc_test_data import CODECS, ENCRYPTED, PII_COLUMNS, SECRET_COLUMNS, OrcFixture, as_source, unlocked

from lineage_platform.errors import SecurityError
from lineage_platform.security.kms import LocalKeyStore
from lineage_platform.security.orc import EncryptedOrcReader
from lineage_platform.security.orc import reader as reader_module
from lineage_platform.security.orc.pushdown import parse_where, row_filter
from lineage_platform.security.orc.read_stats import ReadStats
from lineage_platform.security.orc.row_index import StripeRowIndex

pytestmark = [pytest.mark.slow, pytest.mark.spark]
SALARY = 17  # position in the source rows


def _ranges(reader: EncryptedOrcReader) -> list[tuple[int, int]]:
    """Starts mid-group, at group and stripe boundaries, spanning stripes, single rows, the file's end."""
    second, third = reader.tail.stripes[1], reader.tail.stripes[2]
    stride = reader.tail.row_index_stride
    assert second.rows > 2 * stride  # several row groups per stripe
    return [
        (second.first_row + 17, second.first_row + 420),  # inside one group
        (second.first_row + stride, second.first_row + stride + 1),  # one row, at a group boundary
        (second.first_row + stride - 3, second.first_row + 2 * stride + 5),  # across a group boundary
        (second.first_row + 1500, third.first_row + 700),  # across a stripe boundary
        (third.first_row, third.first_row + stride),  # exactly one group
        (reader.tail.rows - 5, reader.tail.rows),  # the last, short group
    ]


@pytest.mark.parametrize("codec", CODECS)
def test_row_ranges_seek_and_equal_the_source_for_every_codec(
    orc_files: OrcFixture, codec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader_module, "SEEK_SHARE", 1.0)  # every partial stripe is read by seeking
    reader = unlocked(orc_files, codec)
    reader.read(columns=["id"])
    for start, stop in _ranges(reader):
        got = reader.rows(rows=(start, stop))
        assert as_source(got, orc_files.columns) == orc_files.rows[start:stop], (start, stop)
        assert reader.last_read.rows_decoded < 2 * reader.tail.row_index_stride + stop - start


def test_large_ranges_read_whole_stripes_and_slice(orc_files: OrcFixture) -> None:
    reader = unlocked(orc_files, "zlib")
    start, stop = 700, reader.tail.rows - 300
    assert as_source(reader.rows(rows=(start, stop)), orc_files.columns) == orc_files.rows[start:stop]
    assert reader.last_read.stripes == len(reader.tail.stripes)


@pytest.mark.parametrize("codec", ["none", "zstd"])
def test_a_predicate_on_one_row_group_decrypts_a_fraction_of_the_file(
    orc_files: OrcFixture, codec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader_module, "SEEK_SHARE", 0.5)  # the test file's stripes hold 2 full groups
    reader = unlocked(orc_files, codec)
    full = reader.read()
    everything = reader.last_read
    stripe = reader.tail.stripes[2]
    low = stripe.first_row + 1010  # salary is 50000 + 2.5 * id, encrypted: its clear statistics decide
    where = f"salary >= {50000 + 2.5 * low} AND salary < {50000 + 2.5 * (low + 40)}"
    got = reader.read(where=where)
    assert reader.last_read.row_groups == 1 and reader.last_read.stripes == 1
    assert reader.last_read.bytes_decrypted * 4 < everything.bytes_decrypted
    assert got.to_pylist() == row_filter(full, parse_where(where)).to_pylist()
    assert [r["id"] for r in got.to_pylist()] == [
        r[0] for r in orc_files.rows[low : low + 40] if r[SALARY] is not None
    ]
    assert isinstance(everything, ReadStats) and everything.rows_decoded == reader.tail.rows


WHERE = [
    "id >= 3333 AND id < 3340",
    "num < 100",
    "score > 7000",
    "amount >= 100 AND amount < 120",
    "name = 'name-6001-xxxxxx'",
    "day < '1995-01-01'",
    "at > '2024-01-10 00:00:00'",
    "tiny = 7",
    "salary IN (50100.0, 60002.5, 70000.0)",
    "ssn = '4567-28-4567'",
    "email LIKE 'user77%'",
    "dob >= '2000-01-01'",
    "ssn IS NULL AND id > 9000",
    "salary > 99999",
]


@pytest.mark.parametrize(("codec", "seek_share"), [("none", 1.0), ("zlib", 1.0), ("lz4", 0.05)])
def test_row_group_pushdown_never_drops_a_matching_row(
    orc_files: OrcFixture, codec: str, seek_share: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader_module, "SEEK_SHARE", seek_share)  # seek, or read stripes whole and slice
    clear = unlocked(orc_files, codec)
    masked = EncryptedOrcReader(orc_files.files[codec])
    for reader in (clear, masked):
        full = reader.read()
        for where in WHERE:
            assert reader.read(where=where).to_pylist() == row_filter(full, parse_where(where)).to_pylist(), (
                where
            )
    clear.read(where="id >= 3333 AND id < 3340")
    assert clear.last_read.row_groups == (1 if seek_share == 1.0 else 3)  # groups skipped, or their stripe
    assert clear.read(where="salary > 99999").num_rows == 0 and clear.last_read.row_groups == 0


def test_masked_columns_stay_masked_when_seeking(
    orc_files: OrcFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader_module, "SEEK_SHARE", 1.0)
    path = orc_files.files["snappy"]
    reader = EncryptedOrcReader(path, LocalKeyStore(orc_files.keystore))
    reader.unlock(PII_COLUMNS)  # secret columns stay masked
    masked = EncryptedOrcReader(path).read(columns=list(SECRET_COLUMNS))
    for start, stop in _ranges(reader):
        got = reader.read(columns=list(ENCRYPTED), rows=(start, stop))
        pii = as_source(got.select(list(PII_COLUMNS)).to_pylist(), list(PII_COLUMNS))
        assert pii == [row[15:19] for row in orc_files.rows[start:stop]]
        assert got.select(list(SECRET_COLUMNS)).to_pylist() == masked.slice(start, stop - start).to_pylist()
        assert got.column("profile").to_pylist() == [None] * (stop - start)  # nullified by default


@pytest.mark.parametrize("codec", ["none", "zstd"])
def test_a_corrupted_row_index_is_an_error_naming_the_column(
    orc_files: OrcFixture, codec: str, tmp_path: Path
) -> None:
    corrupted = tmp_path / "corrupted.orc"
    shutil.copy(orc_files.files[codec], corrupted)
    reader = EncryptedOrcReader(corrupted, LocalKeyStore(orc_files.keystore))
    reader.unlock(["salary"])
    stripe = reader.tail.stripes[1]
    salary = reader.tail.column_named("salary").id
    index = StripeRowIndex(reader.tail, stripe, ReadStats())
    [stream] = [
        s for s in index.layout.streams if s.column == salary and s.kind == 6 and s.variant is not None
    ]
    with open(corrupted, "r+b") as handle:
        handle.seek(stripe.offset + stream.start)
        handle.write(os.urandom(stream.length))
    with pytest.raises(SecurityError, match="column salary: the row index of stripe 1 is corrupted"):
        reader.read(columns=["id", "salary"], rows=(stripe.first_row + 10, stripe.first_row + 20))
    assert reader.read(columns=["id", "salary"], rows=(10, 20)).num_rows == 10  # other stripes still read
