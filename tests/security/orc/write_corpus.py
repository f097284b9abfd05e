"""Write the small encrypted ORC files the corruption fuzz test mutates (committed under ``corpus/``).

ORC Java (inside PySpark) writes the test table of ``orc_test_data`` (first ``ROWS`` rows) with column
encryption, bloom filters, several stripes and row groups, once per codec; the master keys go into
``TEST_KEYS`` (fixed, public test keys: tests write them into a temporary key store). Run again to regenerate:

    PYTHONPATH=. .venv/bin/python tests/security/orc/write_corpus.py
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from orc_test_data import ENCRYPT, MASKS, SCHEMA, source_row
from orc_test_kms import LocalHadoopKms

from lineage_platform.ingest.spark import session

CORPUS = Path(__file__).with_name("corpus")
CODECS = ("zlib",)
ROWS = 3000
TEST_KEYS = {
    "pii": [hashlib.sha256(b"corpus pii").digest()[:16]],
    "secret": [hashlib.sha256(b"corpus secret").digest()],
}
"""Master keys of the corpus files: public test material, never used for real data."""


def main() -> None:
    """Write ``corpus/<codec>.orc``."""
    kms = LocalHadoopKms(TEST_KEYS).start()
    spark = session("local[1]")
    frame = spark.createDataFrame([source_row(i) for i in range(ROWS)], SCHEMA).coalesce(1)
    CORPUS.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        for codec in CODECS:
            target = Path(scratch) / codec
            (
                frame.write.format("orc")
                .option("compression", codec)
                .option("hadoop.security.key.provider.path", kms.hadoop_uri)
                .option("orc.key.provider", "hadoop")
                .option("orc.encrypt", ENCRYPT)
                .option("orc.mask", MASKS)
                .option("orc.bloom.filter.columns", "name,email")
                .option("orc.stripe.size", 64 << 10)
                .option("orc.rows.between.memory.checks", 100)
                .option("orc.row.index.stride", 1000)
                .option("orc.compress.size", 4096)
                .save(str(target))
            )
            [written] = target.glob("*.orc")
            shutil.copy(written, CORPUS / f"{codec}.orc")
    kms.stop()
    spark.stop()


if __name__ == "__main__":
    main()
