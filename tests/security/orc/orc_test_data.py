"""The test table for encrypted ORC files: schema, deterministic rows with nulls, encryption and masks."""

from __future__ import annotations

import datetime
import decimal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orc_test_kms import LocalHadoopKms

from lineage_platform.security.kms import LocalKeyStore
from lineage_platform.security.orc import EncryptedOrcReader

CODECS = ("none", "zlib", "snappy", "zstd", "lz4")
ROWS = 10_000
SCHEMA = (
    "id bigint, flag boolean, tiny tinyint, small smallint, num int, ratio float, score double, "
    "amount decimal(12,2), name string, blob binary, day date, at timestamp, nums array<int>, "
    "props map<string,int>, place struct<city:string,zip:int>, ssn string, email string, salary double, "
    "dob date, profile struct<city:string,rating:int>, tags array<string>, attrs map<string,string>"
)
ENCRYPT = "pii:ssn,email,salary,dob;secret:profile,tags,attrs"
MASKS = "nullify:ssn;sha256:email;redact:dob"
PII_COLUMNS = ("ssn", "email", "salary", "dob")
SECRET_COLUMNS = ("profile", "tags", "attrs")
ENCRYPTED = PII_COLUMNS + SECRET_COLUMNS


def source_row(i: int) -> tuple[Any, ...]:
    """Row ``i`` of the test table: deterministic values, each column null on its own every-7th rows."""
    values = (
        i % 3 == 0,
        i % 100 - 50,
        i * 7 % 30000 - 15000,
        i * 13 - 20000,
        i / 4,
        i * 1.25 - 100,
        decimal.Decimal(i * 37 - 50000) / 100,
        f"name-{i}-{'x' * (i % 9)}",
        bytes([i % 256, (i * 3) % 256]),
        datetime.date(1990, 1, 1) + datetime.timedelta(days=i * 3),
        datetime.datetime(2024, 1, 1, 12, 0) + datetime.timedelta(seconds=i * 97, microseconds=i * 11),
        [i, i + 1, None][: i % 4],
        {f"k{i % 5}": i, "z": None} if i % 2 else {},
        {"city": f"city{i % 11}", "zip": None if i % 5 == 0 else 1000 + i},
        f"{i:03d}-{i % 89:02d}-{i % 9973:04d}",
        f"user{i}@example.com",
        50000 + i * 2.5,
        datetime.date(1960, 1, 1) + datetime.timedelta(days=i * 5),
        {"city": f"town{i % 13}", "rating": None if i % 4 == 0 else i % 10},
        [f"t{i % 6}", f"u{i % 4}"][: i % 3],
        {"tier": f"gold{i % 3}"} if i % 2 == 0 else {},
    )
    return (i, *(None if (i + n) % 7 == 0 else v for n, v in enumerate(values, start=1)))


@dataclass
class OrcFixture:
    """The written files, their source rows and the key material."""

    files: dict[str, Path]
    rows: list[tuple[Any, ...]]
    columns: list[str]
    kms: LocalHadoopKms
    keystore: Path
    keys: dict[str, list[bytes]]


def normal(value: Any) -> Any:
    """Arrow's map form (list of pairs) as a dict, recursively, so rows compare with the source."""
    if isinstance(value, list) and value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
        return {k: normal(v) for k, v in value}
    if isinstance(value, list):
        return [normal(v) for v in value]
    if isinstance(value, dict):
        return {k: normal(v) for k, v in value.items()}
    return value


def as_source(rows: list[dict[str, Any]], columns: list[str]) -> list[tuple[Any, ...]]:
    """Decoded rows in the form of the source rows (empty maps as dicts)."""
    return [tuple(normal(row[c]) if row[c] != [] else _empty_like(c) for c in columns) for row in rows]


def _empty_like(column: str) -> Any:
    return {} if column in ("props", "attrs") else []


def unlocked(orc_files: OrcFixture, codec: str) -> EncryptedOrcReader:
    """A reader of the ``codec`` file with every key unlocked."""
    reader = EncryptedOrcReader(orc_files.files[codec], LocalKeyStore(orc_files.keystore))
    assert reader.unlock(ENCRYPTED) == list(ENCRYPTED)
    return reader
