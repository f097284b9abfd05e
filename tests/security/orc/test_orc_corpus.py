"""Reading the committed corpus file (ORC Java through PySpark, see write_corpus.py): damage that used to
crash or print a traceback is a one-line error naming file, stripe and column; no KMS means masked."""

from __future__ import annotations

import json
from pathlib import Path

from fuzz_worker import SOURCE, run
from orc_mutants import mutate
from orc_test_data import ENCRYPTED
from write_corpus import TEST_KEYS

from lineage_platform.cli import invoke
from lineage_platform.security.kms import LocalKeyStore
from lineage_platform.security.orc import EncryptedOrcReader
from lineage_platform.security.orc.plain import read_stripe_bytes, read_stripe_footer
from lineage_platform.security.orc.tail import read_tail

DATA = 1


def test_a_corrupted_stripe_copy_of_a_wrapped_key_is_an_error_not_a_crash(policy: Path) -> None:
    # the stripe copy of ssn's key (variant 3) had been used unchecked: garbage reached ORC C++ (SIGSEGV)
    specs = [
        {"kind": "key", "stripe": 0, "variant": v, "byte": 5, "region": "stripe 0 key"} for v in range(7)
    ]
    reports = run(specs, policy)
    assert [r["outcome"] for r in reports] == ["error"] * 7
    named = set()
    for report in reports:
        path, _, message = report["message"].partition(": ")
        assert path.endswith("mutant.orc") and "\n" not in message
        column, _, rest = message.partition(", ")
        assert rest.startswith("stripe 0: the stripe's local key differs from the file's")
        named.add(column)
    assert named == {f"column {c}" for c in ENCRYPTED}


def test_a_flipped_byte_in_a_compressed_data_stream_names_file_stripe_and_column(policy: Path) -> None:
    tail = read_tail(SOURCE)
    stripe = tail.stripes[1]
    raw = read_stripe_bytes(tail, stripe)
    layout = read_stripe_footer(tail, stripe, raw[stripe.index_length + stripe.data_length :])
    ssn = tail.column_named("ssn").id
    [stream] = [s for s in layout.streams if (s.column, s.kind) == (ssn, DATA) and s.variant is not None]
    spec = {"kind": "flip", "at": stripe.offset + stream.start + 3, "xor": 0x40, "region": "ssn data"}
    [report] = run([spec], policy)
    assert report["outcome"] == "error", report  # was a raw ArrowException traceback
    message = report["message"]
    assert "mutant.orc: stripe 1, column ssn: the data cannot be decoded" in message and "\n" not in message


def test_without_a_kms_granted_encrypted_columns_come_back_masked(
    policy: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "rows.jsonl"
    args = ["orc", "read", str(SOURCE), "--user", "ann", "--policy", str(policy), "--table", "hr.people"]
    result = invoke([*args, "--columns", "id,ssn,email", "--format", "jsonl", "--output", str(out)])
    assert result.success, result.exception  # was: "columns ... are encrypted and no KMS is configured"
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 3000 and all(r["ssn"] is None for r in rows)  # ORC's nullify mask
    assert all(len(r["email"]) == 64 for r in rows if r["email"])  # sha256 mask
    assert "clear: id; masked: ssn, email" in capsys.readouterr().err


def test_the_mutants_change_what_they_claim(policy: Path) -> None:
    data, tail = SOURCE.read_bytes(), read_tail(SOURCE)
    damaged = mutate(data, tail, {"kind": "key", "stripe": 0, "variant": 0, "byte": 2})
    mutant = policy.with_name("mutant.orc")
    mutant.write_bytes(damaged)
    changed = read_tail(mutant)
    assert changed.stripes[0].encrypted_local_keys[0] != tail.stripes[0].encrypted_local_keys[0]
    assert changed.stripes[0].encrypted_local_keys[1:] == tail.stripes[0].encrypted_local_keys[1:]
    assert changed.variants[0].encrypted_key == tail.variants[0].encrypted_key


def test_decoded_values_are_checked_against_the_stripe_statistics(policy: Path) -> None:
    # a flip in ssn's encrypted data of stripe 2 that zlib and ORC C++ decode without complaint (found by the
    # fuzz test): only the statistics check notices that the values are not the ones written
    [report] = run([{"kind": "flip", "at": 170316, "xor": 68, "region": "stripe 2 encrypted data"}], policy)
    assert report["outcome"] == "error", report
    assert "mutant.orc: stripe 2, column ssn: the decoded data does not match the file" in report["message"]


def test_statistics_of_some_columns_are_read_alone_and_clear_once_unlocked(tmp_path: Path) -> None:
    def reader(unlock: bool) -> EncryptedOrcReader:
        store = LocalKeyStore(LocalKeyStore.write(tmp_path / "keys.json", TEST_KEYS))
        opened = EncryptedOrcReader(SOURCE, store)
        if unlock:
            opened.unlock(ENCRYPTED)
        return opened

    every = reader(True).stripe_statistics()
    ssn, name = reader(True).tail.column_named("ssn").id, reader(True).tail.column_named("name").id
    some = reader(True).stripe_statistics([ssn, name])  # only these two are parsed and decrypted
    assert some == [{c: stripe[c] for c in (ssn, name)} for stripe in every]
    masked = reader(False).stripe_statistics([ssn, name])
    assert [s[name] for s in masked] == [s[name] for s in some]  # unencrypted: the Metadata's entries
    assert all(s[ssn].maximum is None for s in masked)  # ORC's nullify mask: no values
    assert all(s[ssn].values > 0 and s[ssn].maximum is not None for s in some)  # the writer's clear ones
