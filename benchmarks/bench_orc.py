"""Decrypting ORC reads against pyorc/pyarrow reading the same data unencrypted, in one run.

Spark (ORC Java) writes one table twice, plain and with half of its columns encrypted (two keys), then:

* baseline pyorc: rows as Python tuples from the plain file; baseline pyarrow: an Arrow table of it;
* project: every key unlocked, clear values as an Arrow table and as Python rows;
* the share of the project's read spent in AES-CTR;
* selective reads (one row group by predicate, a 500-row range) against the full decrypting read: time and
  bytes decrypted.

    .venv/bin/python benchmarks/bench_orc.py                 # 200,000 rows, < 2 minutes
    .venv/bin/python benchmarks/bench_orc.py --rows 2000000  # bigger
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.orc as pa_orc
import pyorc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "security" / "orc"))  # the local Hadoop KMS Spark writes through

from orc_test_kms import LocalHadoopKms  # noqa: E402

from lineage_platform.ingest.spark import session  # noqa: E402
from lineage_platform.security.kms import LocalKeyStore  # noqa: E402
from lineage_platform.security.orc import plain as plain_module  # noqa: E402
from lineage_platform.security.orc.reader import EncryptedOrcReader  # noqa: E402

ENCRYPTED = ("ssn", "email", "salary", "notes")


def _write(spark: Any, rows: int, folder: Path, kms: LocalHadoopKms) -> tuple[Path, Path]:
    frame = (
        spark.range(rows)
        .selectExpr(
            "id",
            "cast(id % 1000 as int) as dept",
            "concat('name-', id) as name",
            "id * 1.5 as score",
            "concat(lpad(cast(id % 1000 as string), 3, '0'), '-', cast(id % 97 as string)) as ssn",
            "concat('user', id, '@example.com') as email",
            "50000 + id * 0.25 as salary",
            "repeat(concat('note', cast(id % 13 as string)), 4) as notes",
        )
        .coalesce(1)
    )
    # ORC Java keeps the key provider of its first writer: both writes name the KMS
    options = {
        "compression": "zstd",
        "hadoop.security.key.provider.path": kms.hadoop_uri,
        "orc.key.provider": "hadoop",
    }
    frame.write.format("orc").options(**options).save(str(folder / "plain"))
    encryption = {"orc.encrypt": "pii:ssn,email,salary;secret:notes", "orc.mask": "sha256:email"}
    frame.write.format("orc").options(**options, **encryption).save(str(folder / "encrypted"))
    return next((folder / "plain").glob("*.orc")), next((folder / "encrypted").glob("*.orc"))


def _best(fn: Callable[[], Any], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _pyorc_rows(path: Path) -> int:
    with open(path, "rb") as handle:
        return sum(1 for _ in pyorc.Reader(handle))


def _selective(path: Path, store: LocalKeyStore, rows: int) -> dict[str, Any]:
    """Seconds and bytes decrypted: the full read, one row group by predicate, a small row range."""
    reader = EncryptedOrcReader(path, store)
    reader.unlock(ENCRYPTED)
    middle = rows // 2
    reads = {
        "full": {},
        "one row group (where: id in 10 rows)": {"where": f"id >= {middle} AND id < {middle + 10}"},
        "row range of 500 rows": {"rows": (middle + 123, middle + 623)},
    }
    out: dict[str, Any] = {}
    for name, options in reads.items():
        seconds = _best(lambda options=options: reader.read(**options))
        table = reader.read(**options)
        stats = reader.last_read
        out[name] = (
            (seconds, stats.bytes_decrypted)
            if name == "full"
            else (seconds, stats.bytes_decrypted, table.num_rows)
        )
    return out


def main() -> None:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=int(os.environ.get("LINEAGE_BENCH_ORC_ROWS", 200_000)))
    args = parser.parse_args()
    keys = {"pii": [os.urandom(16)], "secret": [os.urandom(32)]}
    kms = LocalHadoopKms(keys).start()
    spark = session("local[2]")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        plain, encrypted = _write(spark, args.rows, folder, kms)
        store = LocalKeyStore(LocalKeyStore.write(folder / "keys.json", keys))
        megabytes = pa_orc.ORCFile(str(plain)).read().nbytes / 1e6  # decoded (Arrow) size
        file_megabytes = encrypted.stat().st_size / 1e6

        def project_arrow() -> Any:
            reader = EncryptedOrcReader(encrypted, store)
            reader.unlock(ENCRYPTED)
            return reader.read()

        aes_seconds = [0.0]
        real_decrypt = plain_module.ctr_decrypt

        def timed_decrypt(*a: Any) -> bytes:
            start = time.perf_counter()
            try:
                return real_decrypt(*a)
            finally:
                aes_seconds[0] += time.perf_counter() - start

        assert project_arrow().num_rows == args.rows
        selective = _selective(encrypted, store, args.rows)
        results = {
            "pyorc rows, plain file (baseline)": _best(lambda: _pyorc_rows(plain), 1),
            "pyarrow table, plain file (baseline)": _best(lambda: pa_orc.ORCFile(str(plain)).read()),
            "project: decrypt -> Arrow table": _best(project_arrow),
            "project: decrypt -> Python rows": _best(lambda: project_arrow().to_pylist(), 1),
        }
        plain_module.ctr_decrypt = timed_decrypt
        total = _best(project_arrow, 1)
        plain_module.ctr_decrypt = real_decrypt
    kms.stop()
    spark.stop()
    baseline_rows, baseline_arrow = (
        results["pyorc rows, plain file (baseline)"],
        results["pyarrow table, plain file (baseline)"],
    )
    print(f"{args.rows:,} rows, {megabytes:.1f} MB decoded, {file_megabytes:.1f} MB zstd ORC file")
    print(f"encrypted columns: {', '.join(ENCRYPTED)} (keys pii: AES-128, secret: AES-256)")
    print(f"{'reader':42} {'seconds':>8} {'rows/s':>12} {'MB/s':>8} {'vs pyorc':>9} {'vs pyarrow':>10}")
    for name, seconds in results.items():
        print(
            f"{name:42} {seconds:8.3f} {args.rows / seconds:12,.0f} {megabytes / seconds:8.1f} "
            f"{baseline_rows / seconds:8.2f}x {baseline_arrow / seconds:9.2f}x"
        )
    print(f"share of the project's Arrow read spent in AES-CTR: {aes_seconds[0] / total:.1%}")
    full_seconds, full_bytes = selective.pop("full")
    print(
        f"{'selective read (all columns)':42} {'seconds':>8} {'rows':>8} {'MB decrypted':>13} {'time':>7} {'bytes':>7}"
    )
    print(f"{'full decrypting read':42} {full_seconds:8.4f} {args.rows:8,} {full_bytes / 1e6:13.2f}")
    for name, (seconds, decrypted, rows) in selective.items():
        print(
            f"{name:42} {seconds:8.4f} {rows:8,} {decrypted / 1e6:13.2f} "
            f"{full_seconds / seconds:6.1f}x {full_bytes / max(decrypted, 1):6.1f}x less"
        )


if __name__ == "__main__":
    main()
