"""SQL lineage completeness on TPC-DS / TPC-H query texts: how many give column lineage with nothing unresolved.

The query texts are not shipped here (their licence is the TPC's): point ``--queries`` at a directory of
``*.sql`` files, one query each (a bare SELECT is wrapped as ``INSERT INTO out_<file> SELECT …``). Without
``--queries`` the TPC-DS texts that the ``sqllineage`` package ships are used when the peers venv has it
(``make peers-venv``). The schemas are facts of the specifications, kept in ``benchmarks/catalogs/``.

    python benchmarks/bench_sql_tpc.py [--suite tpcds|tpch] [--queries DIR] [--dialect spark] [-v]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lineage_platform.model import StatementLineage
from lineage_platform.sql import Catalog, extract_lineage
from lineage_platform.sql.schema_file import load_schema

CATALOGS = Path(__file__).resolve().parent / "catalogs"
PEERS_TPCDS = "lib/python3.*/site-packages/sqllineage/data/tpcds"
_BARE_QUERY = re.compile(r"^\s*(?:--[^\n]*\n\s*)*(?:WITH|SELECT|\()", re.I)


def default_queries(root: Path) -> Path | None:
    """The TPC-DS query directory of the sqllineage package in the peers venv, if installed."""
    return next(iter(sorted((root / ".venv-peers").glob(PEERS_TPCDS))), None)


def as_write(name: str, sql: str) -> str:
    """The query as a statement that writes a table (bare SELECTs become ``INSERT INTO out_<name>``)."""
    if _BARE_QUERY.match(sql) and not re.search(r"\binsert\s+into\b", sql, re.I):
        return f"INSERT INTO out_{name} {sql.strip().rstrip(';')}"
    return sql


def complete(records: list[StatementLineage]) -> bool:
    """Every writing statement has a column edge and no statement reports an issue."""
    writes = [r for r in records if r.outputs and r.operation != "DROP"]
    return bool(writes) and not any(r.errors for r in records) and all(r.column_edges for r in writes)


def main(argv: list[str] | None = None) -> int:
    """Run every query file; print how many are complete, then (``-v``) each incomplete one's issues."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", choices=("tpcds", "tpch"), default="tpcds", help="schema catalog to use")
    parser.add_argument("--queries", type=Path, help="directory of *.sql query files")
    parser.add_argument("--dialect", default="spark", help="sqlglot dialect of the query texts")
    parser.add_argument("-v", "--verbose", action="store_true", help="list the incomplete queries' issues")
    args = parser.parse_args(argv)
    directory = args.queries or default_queries(Path(__file__).resolve().parent.parent)
    if directory is None or not directory.is_dir():
        print("no query directory: pass --queries DIR (or run `make peers-venv` for the TPC-DS texts)")
        return 2
    catalog = Catalog(load_schema(CATALOGS / f"{args.suite}.json"), dialect=args.dialect)
    files = sorted(directory.glob("*.sql"))
    started = time.perf_counter()
    incomplete: dict[str, list[str]] = {}
    for path in files:
        sql = as_write(path.stem, path.read_text(encoding="utf-8"))
        records = extract_lineage(sql, schema=catalog, dialect=args.dialect, default_db=args.suite)
        if not complete(records):
            incomplete[path.name] = [e.message for r in records for e in r.errors] or ["no column edges"]
    elapsed = time.perf_counter() - started
    print(
        f"{args.suite} ({args.dialect}): {len(files) - len(incomplete)}/{len(files)} queries give column lineage "
        f"with nothing unresolved; {elapsed:.2f} s"
    )
    for name, issues in incomplete.items() if args.verbose else ():
        print(f"  {name}: {'; '.join(issues)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
