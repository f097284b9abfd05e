"""Encrypted ORC files written once per test session by ORC Java through PySpark, plus their keys.

Every codec gets one file of 10,000 rows in several stripes of several 1,000-row groups, with every Spark-writable ORC type, nulls in
every column but ``id``, two master keys (``pii``: 128-bit, rolled once; ``secret``: 256-bit) holding several
columns each, three mask kinds, and bloom filters requested on an encrypted column.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from orc_test_data import CODECS, ENCRYPT, MASKS, ROWS, SCHEMA, OrcFixture, source_row
from orc_test_kms import LocalHadoopKms
from write_corpus import TEST_KEYS

from lineage_platform.security.kms import LocalKeyStore


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """For the corpus files: a policy granting ann every column of hr.people (so every key is fetched and
    used), next to a key store of the corpus keys (``keys.json``)."""
    folder = tmp_path_factory.mktemp("corpus")
    LocalKeyStore.write(folder / "keys.json", TEST_KEYS)
    path = folder / "policy.yaml"
    path.write_text("grants:\n  - to: user:ann\n    database: hr\n    table: people\n")
    return path


@pytest.fixture(scope="session")
def orc_files(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OrcFixture]:
    """All test files, written once."""
    keys = {"pii": [os.urandom(16), os.urandom(16)], "secret": [os.urandom(32)]}
    kms = LocalHadoopKms(keys).start()
    root = tmp_path_factory.mktemp("orc")
    rows = [source_row(i) for i in range(ROWS)]
    frame = spark.createDataFrame(rows, SCHEMA).coalesce(1)
    files = {}
    for codec in CODECS:
        target = root / codec
        (
            frame.write.format("orc")
            .option("compression", codec)
            .option("hadoop.security.key.provider.path", kms.hadoop_uri)
            .option("orc.key.provider", "hadoop")
            .option("orc.encrypt", ENCRYPT)
            .option("orc.mask", MASKS)
            .option("orc.bloom.filter.columns", "name,email")
            .option("orc.stripe.size", 1 << 20)
            .option("orc.rows.between.memory.checks", 500)
            .option("orc.row.index.stride", 1000)
            .save(str(target))
        )
        [files[codec]] = target.glob("*.orc")
    keystore = LocalKeyStore.write(root / "keys.json", keys)
    yield OrcFixture(files, rows, [c.split()[0] for c in SCHEMA.split(", ")], kms, keystore, keys)
    kms.stop()
