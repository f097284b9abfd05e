"""Reading files ORC Java wrote through PySpark: clear values equal the source, masks equal pyorc's view,
seeks and pushdown land on the right rows, permissions decide which keys are fetched, bad input fails loudly."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path
from typing import Any

import pyorc
import pytest
from orc_test_data import CODECS, ENCRYPTED, SECRET_COLUMNS, OrcFixture, as_source, normal, unlocked

from lineage_platform.cli import invoke
from lineage_platform.errors import SecurityError
from lineage_platform.security.kms import HadoopKms, LocalKeyStore
from lineage_platform.security.orc import EncryptedOrcReader, read_as_user
from lineage_platform.security.orc.inspect import describe
from lineage_platform.security.policy import Grant, PolicyStore

pytestmark = [pytest.mark.slow, pytest.mark.spark]
SSN, EMAIL, SALARY = 15, 16, 17  # positions in the source rows


@pytest.mark.parametrize("codec", CODECS)
def test_decrypted_rows_equal_the_source_for_every_codec(orc_files: OrcFixture, codec: str) -> None:
    reader = unlocked(orc_files, codec)
    assert len(reader.tail.stripes) >= 3
    assert {v.algorithm for v in reader.tail.variants} == {1, 2}  # 128- and 256-bit master keys
    assert {v.key_version for v in reader.tail.variants if v.key_name == "pii"} == {1}  # rolled key
    assert as_source(reader.rows(), orc_files.columns) == orc_files.rows


@pytest.mark.parametrize("codec", ["zlib", "lz4"])
def test_without_keys_the_masked_view_equals_pyorc(orc_files: OrcFixture, codec: str) -> None:
    path = orc_files.files[codec]
    mine = EncryptedOrcReader(path).read(columns=["id", *ENCRYPTED]).to_pylist()
    with open(path, "rb") as handle:
        theirs = list(
            pyorc.Reader(handle, column_names=("id", *ENCRYPTED), struct_repr=pyorc.StructRepr.DICT)
        )
    assert [normal(list(r.values())) for r in mine] == [normal(list(r.values())) for r in theirs]
    clear = {r[0]: r for r in orc_files.rows}
    assert all(r["ssn"] is None for r in mine)  # nullify
    sample = mine[11]
    assert sample["email"] != clear[11][EMAIL] and len(sample["email"]) == 64  # sha256 hex
    assert sample["dob"].month == 1 and sample["dob"].day == 1  # redact keeps the year only


def test_row_ranges_and_stripes_land_on_the_right_rows(orc_files: OrcFixture) -> None:
    reader = unlocked(orc_files, "zstd")
    got = reader.read(columns=["id", "ssn", "profile"], rows=(1234, 3210)).to_pylist()
    assert [r["id"] for r in got] == list(range(1234, 3210))
    assert [r["ssn"] for r in got] == [row[SSN] for row in orc_files.rows[1234:3210]]
    second = reader.tail.stripes[1]
    ids = reader.read(columns=["id"], stripes=[1]).column("id").to_pylist()
    assert ids == list(range(second.first_row, second.first_row + second.rows))


def test_where_skips_stripes_by_clear_statistics_and_filters_exactly(orc_files: OrcFixture) -> None:
    reader = unlocked(orc_files, "snappy")
    assert reader.stripes_for("salary < 50010") == [0]  # salary's statistics are encrypted; clear ones decide
    got = reader.read(columns=["id", "salary"], where="salary < 50010 AND id > 1").to_pylist()
    assert got == [{"id": i, "salary": 50000 + i * 2.5} for i in (2, 3)]  # salary is null on rows 0 and 4
    masked = EncryptedOrcReader(orc_files.files["snappy"])
    assert masked.read(columns=["id", "salary"], where="salary < 50010").num_rows == 0  # nullified values


def test_a_user_gets_keys_only_for_permitted_columns(orc_files: OrcFixture) -> None:
    store = PolicyStore(grants=[Grant("user:ann", "hr", "people", frozenset({"id", "ssn", "email"}))])
    kms = orc_files.kms
    kms.requests.clear()
    table, report = read_as_user(
        orc_files.files["zlib"], "ann", store, HadoopKms(kms.hadoop_uri, user="ann"), table="hr.people"
    )
    assert report.clear == ["id", "ssn", "email"] and report.masked == ["salary", "dob", *SECRET_COLUMNS]
    assert "name" in report.hidden and "name" not in table.column_names
    assert table.column("ssn").to_pylist() == [r[SSN] for r in orc_files.rows]
    assert table.column("profile").to_pylist() == [None] * len(orc_files.rows)  # nullified
    assert all("secret" not in request for request in kms.requests)  # never asked for the other key
    with pytest.raises(SecurityError, match="ann may not read name"):
        read_as_user(orc_files.files["zlib"], "ann", store, None, table="hr.people", columns=["id", "name"])


def test_a_wrong_master_key_is_an_error_naming_the_column(orc_files: OrcFixture, tmp_path: Path) -> None:
    wrong = {"pii": [os.urandom(16), os.urandom(16)], "secret": orc_files.keys["secret"]}
    reader = EncryptedOrcReader(
        orc_files.files["none"], LocalKeyStore(LocalKeyStore.write(tmp_path / "k.json", wrong))
    )
    with pytest.raises(SecurityError, match="column ssn: the key pii@1 does not decrypt"):
        reader.unlock(["ssn"])
    assert reader.unlock(["tags"]) == ["tags"]


def test_a_kms_that_is_down_names_the_column(orc_files: OrcFixture) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    reader = EncryptedOrcReader(orc_files.files["zstd"], HadoopKms(f"http://127.0.0.1:{port}/kms", timeout=2))
    with pytest.raises(SecurityError, match=r"column email: cannot unwrap its key pii@1: KMS .* unreachable"):
        reader.unlock(["email"])


def test_truncated_and_corrupted_files_fail_clearly(orc_files: OrcFixture, tmp_path: Path) -> None:
    source = orc_files.files["zstd"]
    data = source.read_bytes()
    truncated = tmp_path / "truncated.orc"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(SecurityError, match="truncated"):
        EncryptedOrcReader(truncated)
    corrupted = tmp_path / "corrupted.orc"
    shutil.copy(source, corrupted)
    reader = EncryptedOrcReader(corrupted, LocalKeyStore(orc_files.keystore))
    stripe = reader.tail.stripes[0]
    footer_at = stripe.offset + stripe.index_length + stripe.data_length
    with open(corrupted, "r+b") as handle:
        handle.seek(footer_at)
        handle.write(b"\xff\xff\xff\xff")
    reader.unlock(["ssn"])
    with pytest.raises(SecurityError, match="stripe 0 footer"):
        reader.read(columns=["ssn"])


def test_inspect_shows_keys_masks_clear_statistics_and_the_bloom_filter_leak(orc_files: OrcFixture) -> None:
    reader = EncryptedOrcReader(orc_files.files["lz4"], LocalKeyStore(orc_files.keystore))
    reader.unlock(["salary"])
    info = describe(reader)
    columns = {c["name"]: c for c in info["columns"]}
    assert columns["ssn"]["key"] == "pii@1" and columns["ssn"]["mask"] == "nullify"
    assert columns["email"]["mask"] == "sha256" and columns["tags"]["key"] == "secret@0"
    assert columns["salary"]["statistics_are"] == "clear"
    salaries = [r[SALARY] for r in orc_files.rows if r[SALARY] is not None]
    assert (columns["salary"]["statistics"]["min"], columns["salary"]["statistics"]["max"]) == (
        min(salaries),
        max(salaries),
    )
    assert columns["ssn"]["statistics_are"] == "masked"
    assert {v["algorithm"] for v in info["variants"]} == {"AES_CTR_128", "AES_CTR_256"}
    assert [w.split(":")[0] for w in info["warnings"]] == ["column email"]


def test_cli_read_and_inspect(
    orc_files: OrcFixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "grants:\n  - to: user:ann\n    database: hr\n    table: people\n    columns: [id, ssn, salary]\n"
    )
    out = tmp_path / "rows.jsonl"
    args = ["orc", "read", str(orc_files.files["zstd"]), "--user", "ann", "--policy", str(policy)]
    args += ["--kms", f"local:{orc_files.keystore}", "--table", "hr.people", "--columns", "id,ssn,email"]
    args += ["--where", "id < 3", "--format", "jsonl", "--output", str(out)]
    result = invoke(args)
    assert result.success, result.exception
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["ssn"] for r in rows] == [orc_files.rows[i][SSN] for i in range(3)]
    assert all(r["email"] != orc_files.rows[r["id"]][EMAIL] for r in rows if r["email"])  # masked
    capsys.readouterr()
    assert invoke(["orc", "inspect", str(orc_files.files["zstd"])]).success
    info = json.loads(capsys.readouterr().out)
    assert info["rows"] == len(orc_files.rows) and info["compression"] == "zstd"


def test_encrypt_table_encrypts_labelled_columns_readably(
    spark: Any, orc_files: OrcFixture, tmp_path: Path
) -> None:
    from lineage_platform.graph import connect
    from lineage_platform.graph.writer import LineageWriter
    from lineage_platform.labels import declare, load_declarations
    from lineage_platform.security.orc.encrypt_table import encrypt_table
    from lineage_platform.sql import extract_lineage

    g = connect("memory:")
    LineageWriter(g).write(
        extract_lineage("INSERT INTO TABLE dw.out SELECT id, ssn, note FROM global_temp.staff")
    )
    labels = tmp_path / "labels.yaml"
    labels.write_text(
        "labels:\n  - name: global_temp.staff.ssn\n    labels: [PII]\n"
        "  - name: global_temp.staff.note\n    labels: [SENSITIVITY=high]\n"
    )
    declare(g, load_declarations(labels))
    rows = [(i, f"{i:09d}", f"note {i}") for i in range(50)]
    spark.createDataFrame(rows, "id bigint, ssn string, note string").createOrReplaceGlobalTempView("staff")
    target = tmp_path / "staff"
    plan = encrypt_table(
        spark, g, "global_temp.staff", str(target), orc_files.kms.hadoop_uri, compression="snappy"
    )
    assert plan.orc_options() == {"orc.encrypt": "pii:ssn;secret:note", "orc.mask": "nullify:ssn,note"}
    read_back = []
    for path in sorted(target.glob("*.orc")):
        reader = EncryptedOrcReader(path, LocalKeyStore(orc_files.keystore))
        assert reader.encrypted_columns == {"ssn": "pii@1", "note": "secret@0"}
        assert reader.read(["ssn"]).column("ssn").null_count == reader.tail.rows  # masked without keys
        reader.unlock(["ssn", "note"])
        read_back += [tuple(r.values()) for r in reader.rows()]
    assert sorted(read_back) == rows


def _write_union_file(spark: Any, kms_uri: str, path: Path, rows: int) -> list[Any]:
    """ORC Java's core writer (through py4j; Spark cannot write unions): ``u`` encrypted under ``pii``."""
    from py4j.java_gateway import get_field, set_field

    jvm = spark._jvm
    conf = jvm.org.apache.hadoop.conf.Configuration(spark._jsc.hadoopConfiguration())
    conf.set("hadoop.security.key.provider.path", kms_uri)
    conf.set("orc.key.provider", "hadoop")
    schema = jvm.org.apache.orc.TypeDescription.fromString("struct<id:bigint,u:uniontype<int,string>>")
    options = (
        jvm.org.apache.orc.OrcFile.writerOptions(conf).setSchema(schema).encrypt("pii:u").masks("nullify:u")
    )
    writer = jvm.org.apache.orc.OrcFile.createWriter(jvm.org.apache.hadoop.fs.Path(str(path)), options)
    batch = schema.createRowBatch(rows)
    ids, union = get_field(batch, "cols")
    id_values, tags, nulls = get_field(ids, "vector"), get_field(union, "tags"), get_field(union, "isNull")
    ints, strings = get_field(union, "fields")
    int_values = get_field(ints, "vector")
    set_field(union, "noNulls", False)
    expected: list[Any] = []
    for i in range(rows):
        id_values[i] = i
        if i % 5 == 0:
            nulls[i] = True
            expected.append(None)
        elif i % 2:
            tags[i], int_values[i] = 0, i * 3
            expected.append(i * 3)
        else:
            tags[i] = 1
            strings.setVal(i, f"s{i}".encode())
            expected.append(f"s{i}")
    set_field(batch, "size", rows)
    writer.addRowBatch(batch)
    writer.close()
    return expected


def test_encrypted_union_columns_decrypt(spark: Any, orc_files: OrcFixture, tmp_path: Path) -> None:
    path = tmp_path / "union.orc"
    expected = _write_union_file(spark, orc_files.kms.hadoop_uri, path, 1000)
    reader = EncryptedOrcReader(path, LocalKeyStore(orc_files.keystore))
    assert reader.read(["u"]).column("u").to_pylist() == [None] * 1000
    reader.unlock(["u"])
    assert reader.read(["u"]).column("u").to_pylist() == expected
    assert reader.read(["u"], rows=(101, 140)).column("u").to_pylist() == expected[101:140]
