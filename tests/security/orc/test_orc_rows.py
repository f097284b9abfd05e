"""Python rows of encrypted ORC files: ``rows``/``iter_rows`` decode through pyorc from one rebuilt plain file;
they equal the Arrow path's rows and pyorc's rows of the same data written unencrypted, and damage found by
the up-front statistics check is a one-line error naming file, stripe and column."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyorc
import pytest
from fuzz_worker import SOURCE
from orc_test_data import ENCRYPTED, SCHEMA, OrcFixture, unlocked
from write_corpus import TEST_KEYS

from lineage_platform.errors import SecurityError
from lineage_platform.security.kms import LocalKeyStore
from lineage_platform.security.orc import EncryptedOrcReader
from lineage_platform.security.orc.plain import PRESENT, read_stripe_bytes, read_stripe_footer
from lineage_platform.security.orc.rows import table_rows
from lineage_platform.security.orc.verify import check_stripes

NESTED = ["id", "nums", "props", "place", "profile", "tags", "attrs"]


def _corpus_reader(path: Path, tmp_path: Path) -> EncryptedOrcReader:
    reader = EncryptedOrcReader(path, LocalKeyStore(LocalKeyStore.write(tmp_path / "keys.json", TEST_KEYS)))
    reader.unlock(ENCRYPTED)
    return reader


def test_rows_equal_the_arrow_paths_rows_stripe_by_stripe(tmp_path: Path) -> None:
    reader = _corpus_reader(SOURCE, tmp_path)
    assert len(reader.tail.stripes) >= 3
    rows = reader.rows()
    assert rows == table_rows(reader.read())  # every type, timestamps and maps included
    assert reader.last_read.stripes == len(reader.tail.stripes)
    second = reader.tail.stripes[1]
    assert list(reader.iter_rows(NESTED, stripes=[1])) == [
        {c: r[c] for c in NESTED} for r in rows[second.first_row : second.first_row + second.rows]
    ]
    assert reader.rows(rows=(5, 9)) == rows[5:9]  # the Arrow path: maps as dicts there too


def test_a_damaged_present_stream_of_an_encrypted_list_is_an_error_naming_stripe_and_column(
    tmp_path: Path,
) -> None:
    data = bytearray(SOURCE.read_bytes())
    reader = _corpus_reader(SOURCE, tmp_path)
    tail, tags = reader.tail, reader.tail.column_named("tags").id
    stripe = tail.stripes[1]
    raw = read_stripe_bytes(tail, stripe)
    layout = read_stripe_footer(tail, stripe, raw[stripe.index_length + stripe.data_length :])
    [stream] = [s for s in layout.streams if (s.column, s.kind) == (tags, PRESENT) and s.variant is not None]
    data[stripe.offset + stream.start + stream.length // 2] ^= 0x10
    mutant = tmp_path / "mutant.orc"
    mutant.write_bytes(bytes(data))
    with pytest.raises(SecurityError) as caught:
        _corpus_reader(mutant, tmp_path).rows(["id", "tags"])
    assert caught.value.message.startswith(f"{mutant}: stripe 1, column tags: ")
    assert "\n" not in caught.value.message
    assert _corpus_reader(mutant, tmp_path).rows(["id"], stripes=[0, 2])  # other stripes still read


@pytest.mark.slow
@pytest.mark.spark
def test_multi_stripe_nested_rows_equal_pyorcs_rows_of_the_plain_twin(
    spark: Any, orc_files: OrcFixture, tmp_path: Path
) -> None:
    reader = unlocked(orc_files, "zstd")
    assert len(reader.tail.stripes) >= 3
    (
        spark.createDataFrame(orc_files.rows, SCHEMA)
        .coalesce(1)
        .write.format("orc")
        .option("compression", "zstd")
        .option("orc.stripe.size", 1 << 20)
        .option("orc.rows.between.memory.checks", 500)
        .save(str(tmp_path / "plain"))
    )
    [plain] = (tmp_path / "plain").glob("*.orc")
    twin = pyorc.Reader(
        io.BytesIO(plain.read_bytes()), column_names=NESTED, struct_repr=pyorc.StructRepr.DICT
    )
    assert reader.rows(NESTED) == list(twin)


@pytest.mark.slow
@pytest.mark.spark
def test_stripes_whose_footers_list_other_streams_are_rebuilt_each_by_its_own_plan(
    spark: Any, orc_files: OrcFixture, tmp_path: Path
) -> None:
    # nulls in the first stripe only: its footer lists PRESENT streams that the later stripes' footers lack
    frame = spark.range(3 * 2048).selectExpr(
        "id",
        "if(id < 100, null, concat('v', id)) as note",
        "named_struct('a', if(id < 50, null, id), 'b', concat('b', id % 7)) as st",
    )
    options = {
        "compression": "zstd",
        "hadoop.security.key.provider.path": orc_files.kms.hadoop_uri,
        "orc.key.provider": "hadoop",
        "orc.stripe.row.count": 2048,
        "orc.rows.between.memory.checks": 100,
    }
    frame.coalesce(1).write.format("orc").options(**options).save(str(tmp_path / "plain"))
    encryption = {"orc.encrypt": "pii:note;secret:st"}
    frame.coalesce(1).write.format("orc").options(**options, **encryption).save(str(tmp_path / "encrypted"))
    [plain], [encrypted] = (tmp_path / "plain").glob("*.orc"), (tmp_path / "encrypted").glob("*.orc")
    reader = EncryptedOrcReader(encrypted, LocalKeyStore(orc_files.keystore))
    reader.unlock(["note", "st"])
    tail = reader.tail
    shapes = set()
    for stripe in tail.stripes:
        raw = read_stripe_bytes(tail, stripe)
        layout = read_stripe_footer(tail, stripe, raw[stripe.index_length + stripe.data_length :])
        shapes.add(tuple((s.column, s.kind, s.variant) for s in layout.streams))
    assert len(tail.stripes) == 3 and len(shapes) > 1
    twin = pyorc.Reader(io.BytesIO(plain.read_bytes()), struct_repr=pyorc.StructRepr.DICT)
    assert reader.rows() == list(twin)
    assert list(reader.iter_rows(stripes=[2, 0])) == reader.rows(stripes=[0, 2])


@pytest.mark.parametrize(
    "name", ["id", "num"]
)  # no nulls: one numpy pass over every stripe; nulls: per stripe
def test_integer_bounds_of_each_stripe_are_checked(tmp_path: Path, name: str) -> None:
    reader = _corpus_reader(SOURCE, tmp_path)
    tail, column = reader.tail, reader.tail.column_named(name).id
    stripes = list(range(len(tail.stripes)))
    statistics = reader.stripe_statistics([column])
    table = reader.read([name])
    assert (table.column(name).null_count == 0) == (name == "id")
    check_stripes(tail, stripes, table, [name], statistics)  # the true values pass
    values = table.column(name).to_pylist()
    values[tail.stripes[1].first_row + 5] = statistics[1][column].maximum + 1
    damaged = pa.table({name: pa.array(values, table.column(name).type)})
    with pytest.raises(
        SecurityError, match=f"stripe 1, column {name}: the decoded data does not match the file"
    ):
        check_stripes(tail, stripes, damaged, [name], statistics)
