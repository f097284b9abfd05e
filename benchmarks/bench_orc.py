"""Decrypting ORC reads against pyorc/pyarrow reading the same data unencrypted, in one run.

Spark (ORC Java) writes one table twice, plain and with half of its columns encrypted (two keys), then:

* baseline pyorc: rows as Python tuples from the plain file; baseline pyarrow: an Arrow table of it;
* project: every key unlocked, clear values as an Arrow table and as Python rows;
* the share of the project's read spent in AES-CTR;
* selective reads (one row group by predicate, a 500-row range) against the full decrypting read: time and
  bytes decrypted.

``--nested`` instead writes a table of struct, map and list columns (all of them encrypted) in about
``--stripes`` stripes and compares pyorc's rows of the plain file with the project's rows of the encrypted
one (every key unlocked): wall and CPU seconds (best of ``--repeat`` rounds that run every reader in turn, so
that the load of a shared machine hits them alike), rows/s, the ratios, and the time per stripe of each.

    .venv/bin/python benchmarks/bench_orc.py                 # 200,000 rows, < 2 minutes
    .venv/bin/python benchmarks/bench_orc.py --rows 2000000  # bigger
    .venv/bin/python benchmarks/bench_orc.py --nested --stripes 59
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

from lineage_platform.gc_pause import gc_paused  # noqa: E402
from lineage_platform.ingest.spark import session  # noqa: E402
from lineage_platform.security.kms import LocalKeyStore  # noqa: E402
from lineage_platform.security.orc.crypto import CtrCipher  # noqa: E402
from lineage_platform.security.orc.reader import EncryptedOrcReader  # noqa: E402

ENCRYPTED = ("ssn", "email", "salary", "notes")
NESTED_ENCRYPTED = ("place", "props", "nums", "profile", "tags", "attrs")
NESTED_COLUMNS = (
    "id",
    "concat('name-', id) as name",
    "named_struct('city', concat('city', id % 11), 'zip', cast(id as int)) as place",
    "map(concat('k', id % 5), cast(id as int), 'z', cast(id % 7 as int)) as props",
    "array(cast(id as int), cast(id + 1 as int), cast(id % 3 as int)) as nums",
    "named_struct('city', concat('town', id % 13), 'rating', cast(id % 10 as int)) as profile",
    "array(concat('t', id % 6), concat('u', id % 4)) as tags",
    "map('tier', concat('gold', id % 3)) as attrs",
)


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


def _write_nested(
    spark: Any, rows: int, per_stripe: int, folder: Path, kms: LocalHadoopKms
) -> tuple[Path, Path]:
    """The nested table written plain and encrypted (zstd), each in stripes of ``per_stripe`` rows."""
    frame = spark.range(rows).selectExpr(*NESTED_COLUMNS).coalesce(1)
    options = {
        "compression": "zstd",
        "hadoop.security.key.provider.path": kms.hadoop_uri,
        "orc.key.provider": "hadoop",
        "orc.rows.between.memory.checks": 100,
    }
    encryption = {"orc.encrypt": "pii:place,props,nums;secret:profile,tags,attrs"}
    plain = _write_stripes(frame, options, per_stripe, folder / "plain")
    return plain, _write_stripes(frame, {**options, **encryption}, per_stripe, folder / "encrypted")


def _write_stripes(frame: Any, options: dict[str, Any], per_stripe: int, folder: Path) -> Path:
    """``frame`` written with ``options`` in stripes of ``per_stripe`` rows (``orc.stripe.row.count``; ORC
    checks it between Spark's 1,024-row batches, so ``per_stripe`` is a multiple of 1,024)."""
    frame.write.format("orc").options(**options, **{"orc.stripe.row.count": per_stripe}).save(str(folder))
    return next(folder.glob("*.orc"))


def _nested(args: argparse.Namespace) -> None:
    """Rows of nested columns: pyorc on the plain file against the project on the encrypted one. The row
    count is ``--rows`` rounded to ``--stripes`` stripes of a multiple of 1,024 rows."""
    per_stripe = max(1, round(args.rows / args.stripes / 1024)) * 1024
    args.rows = per_stripe * args.stripes
    keys = {"pii": [os.urandom(16)], "secret": [os.urandom(32)]}
    kms = LocalHadoopKms(keys).start()
    spark = session("local[2]")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        plain, encrypted = _write_nested(spark, args.rows, per_stripe, folder, kms)
        store = LocalKeyStore(LocalKeyStore.write(folder / "keys.json", keys))

        def project(iterate: bool) -> int:
            reader = EncryptedOrcReader(encrypted, store)
            reader.unlock(NESTED_ENCRYPTED)
            return sum(1 for _ in reader.iter_rows()) if iterate else len(reader.rows())

        assert project(True) == project(False) == args.rows
        readers = {
            "pyorc rows as tuples, plain file": (lambda: _pyorc_rows(plain), plain),
            "pyorc rows as dicts, plain file": (lambda: _pyorc_rows(plain, dicts=True), plain),
            "project: iter_rows(), encrypted file": (lambda: project(True), encrypted),
            "pyorc rows as dicts, a list (GC paused)": (lambda: _pyorc_list(plain), plain),
            "project: rows(), a list": (lambda: project(False), encrypted),
        }
        timed = _rounds({name: fn for name, (fn, _) in readers.items()}, args.repeat)
        stripes = {name: _stripes(path) for name, (_, path) in readers.items()}
    kms.stop()
    spark.stop()
    print(
        f"{args.rows:,} rows, {', '.join(NESTED_ENCRYPTED)} encrypted (pii: AES-128, secret: AES-256), zstd; "
        f"best of {args.repeat} interleaved rounds"
    )
    print(f"{'reader':40} {'stripes':>7} {'seconds':>8} {'CPU s':>7} {'rows/s':>10} {'CPU ms/stripe':>13}")
    for name, (wall, cpu) in timed.items():
        count = stripes[name]
        print(
            f"{name:40} {count:7} {wall:8.3f} {cpu:7.3f} {args.rows / wall:10,.0f} {cpu * 1000 / count:13.2f}"
        )
    for clock, at in (("seconds", 0), ("CPU", 1)):
        tuples, dicts = (
            timed["pyorc rows as tuples, plain file"][at],
            timed["pyorc rows as dicts, plain file"][at],
        )
        iterated, listed = (
            timed["project: iter_rows(), encrypted file"][at],
            timed["project: rows(), a list"][at],
        )
        pyorc_list = timed["pyorc rows as dicts, a list (GC paused)"][at]
        print(
            f"{clock}: iter_rows() vs pyorc tuples {tuples / iterated:.2f}x, vs pyorc dicts {dicts / iterated:.2f}x; "
            f"rows() vs pyorc's list {pyorc_list / listed:.2f}x; "
            f"beyond pyorc dicts {(iterated - dicts) * 1000 / args.stripes:.2f} ms/stripe"
        )


def _rounds(readers: dict[str, Callable[[], Any]], repeat: int) -> dict[str, tuple[float, float]]:
    """Best wall and CPU seconds of each reader over ``repeat`` rounds that run every reader once in turn (on
    a shared machine a change of load then hits all readers alike)."""
    best = dict.fromkeys(readers, (float("inf"), float("inf")))
    for _ in range(repeat):
        for name, fn in readers.items():
            wall, cpu = time.perf_counter(), time.process_time()
            fn()
            spent = time.perf_counter() - wall, time.process_time() - cpu
            best[name] = (min(best[name][0], spent[0]), min(best[name][1], spent[1]))
    return best


def _pyorc_list(path: Path) -> int:
    """pyorc's rows of ``path`` as a list of dicts, built with the cyclic garbage collector paused as
    ``rows()`` does (with it running, full collections over the growing list dominate); like ``rows()``'s,
    the list outlives the pause."""
    with open(path, "rb") as handle:
        reader = pyorc.Reader(handle, struct_repr=pyorc.StructRepr.DICT)
        with gc_paused():
            rows = reader.read()
    return len(rows)


def _stripes(path: Path) -> int:
    return pa_orc.ORCFile(str(path)).nstripes


def _best(fn: Callable[[], Any], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _pyorc_rows(path: Path, dicts: bool = False) -> int:
    """Rows pyorc decodes from ``path`` (iterated), structs as tuples (its default) or as dicts."""
    with open(path, "rb") as handle:
        reader = pyorc.Reader(handle, struct_repr=pyorc.StructRepr.DICT if dicts else pyorc.StructRepr.TUPLE)
        return sum(1 for _ in reader)


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
    parser.add_argument("--nested", action="store_true", help="struct, map and list columns, rows only")
    parser.add_argument("--stripes", type=int, default=59, help="stripes of the --nested files (about)")
    parser.add_argument("--repeat", type=int, default=5, help="rounds of the --nested readers (best kept)")
    args = parser.parse_args()
    if args.nested:
        _nested(args)
        return
    keys = {"pii": [os.urandom(16)], "secret": [os.urandom(32)]}
    kms = LocalHadoopKms(keys).start()
    spark = session("local[2]")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        plain, encrypted = _write(spark, args.rows, folder, kms)
        store = LocalKeyStore(LocalKeyStore.write(folder / "keys.json", keys))
        megabytes = pa_orc.ORCFile(str(plain)).read().nbytes / 1e6  # decoded (Arrow) size
        file_megabytes = encrypted.stat().st_size / 1e6

        def project_reader() -> EncryptedOrcReader:
            reader = EncryptedOrcReader(encrypted, store)
            reader.unlock(ENCRYPTED)
            return reader

        def project_arrow() -> Any:
            return project_reader().read()

        aes_seconds = [0.0]
        real_decrypt = CtrCipher.decrypt

        def timed_decrypt(self: CtrCipher, *a: Any) -> bytes:
            start = time.perf_counter()
            try:
                return real_decrypt(self, *a)
            finally:
                aes_seconds[0] += time.perf_counter() - start

        assert project_arrow().num_rows == args.rows
        selective = _selective(encrypted, store, args.rows)
        results = {
            "pyorc rows, plain file (baseline)": _best(lambda: _pyorc_rows(plain), 1),
            "pyarrow table, plain file (baseline)": _best(lambda: pa_orc.ORCFile(str(plain)).read()),
            "project: decrypt -> Arrow table": _best(project_arrow),
            "project: decrypt -> Python rows": _best(lambda: project_reader().rows(), 1),
        }
        CtrCipher.decrypt = timed_decrypt  # type: ignore[method-assign]
        total = _best(project_arrow, 1)
        CtrCipher.decrypt = real_decrypt  # type: ignore[method-assign]
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
