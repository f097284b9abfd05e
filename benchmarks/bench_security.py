"""Permission extraction and masking rewrite latency vs parsing alone, and resource block sizes.

Part 1 runs over the SQL corpus (benchmarks/sql_corpus/*.yaml with its catalog). Per statement it times
the baseline — sqlglot parsing the statement — and this project's resource block extraction and masking
rewrites (after and before; SELECT statements only), each `--repeat` times, and prints medians and the
ratio to the parse time. Statements the extractor refuses (scripts, DDL, untraceable) are counted.

Part 2 runs the semantic oracle over the sample warehouse queries in DuckDB and compares the cells the
extracted blocks grant with table-level and column-only privileges on the same queries.

    python benchmarks/bench_security.py [--repeat N] [--customers N]
    (or LINEAGE_BENCH_REPEAT / LINEAGE_BENCH_CUSTOMERS; defaults 3 and 200)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import duckdb
import sqlglot

from benchmarks.sql_corpus.corpus import load_catalog, load_corpus
from lineage_platform.errors import SecurityError
from lineage_platform.security.duckdb_masks import install_mask_functions
from lineage_platform.security.masking import mask_query
from lineage_platform.security.masking_rules import MaskingPolicy, MaskRule
from lineage_platform.security.resource_blocks import extract_resource_blocks
from tools.security.oracle import check_query
from tools.security.sample_warehouse import SAMPLE_QUERIES, SAMPLE_SCHEMA, create_sample_warehouse

SENSITIVE_NAMES = {
    "phone": "show_last",
    "email": "hash",
    "id_card": "redact",
    "user_name": "hash",
    "birthday": "year",
}


def masking_policy(catalog: dict) -> MaskingPolicy:
    """Mask every catalog column named like personal data."""
    rules = {
        f"{db}.{table}.{column}": MaskRule(SENSITIVE_NAMES[column])
        for db, tables in catalog.items()
        for table, columns in tables.items()
        for column in columns
        if column in SENSITIVE_NAMES
    }
    return MaskingPolicy(rules)


def timed(work: Callable[[], object], repeat: int) -> float | None:
    """Median seconds of ``work``; None when it is refused (SecurityError)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            work()
        except SecurityError:
            return None
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def stage_work(
    sql: str, default_db: str | None, catalog: dict, policy: MaskingPolicy
) -> dict[str, Callable[[], object]]:
    """The timed calls for one statement; masking only for SELECT statements."""
    work: dict[str, Callable[[], object]] = {
        "parse (baseline)": partial(sqlglot.parse, sql, read="hive"),
        "extract blocks": partial(extract_resource_blocks, sql, catalog, "hive", default_db),
    }
    if sqlglot.parse(sql, read="hive")[0].key == "select":
        for mode in ("after", "before"):
            work[f"mask {mode}"] = partial(
                mask_query, sql, {"user:bench"}, policy, mode, schema=catalog, default_db=default_db
            )
    return work


def latency(repeat: int) -> None:
    """Part 1: per-statement latency of parse, extract, mask after, mask before over the corpus."""
    catalog = load_catalog()
    policy = masking_policy(catalog)
    stages: dict[str, list[float]] = {
        "parse (baseline)": [],
        "extract blocks": [],
        "mask after": [],
        "mask before": [],
    }
    refused = dict.fromkeys(stages, 0)
    cases = load_corpus()
    for case in cases:
        work = stage_work(case.sql.strip().rstrip(";"), case.default_db, catalog, policy)
        for stage, run in work.items():
            seconds = timed(run, repeat)
            if seconds is None:
                refused[stage] += 1
            else:
                stages[stage].append(seconds)
    parse = statistics.median(stages["parse (baseline)"])
    print(f"\nLatency per statement over {len(cases)} corpus statements (median of {repeat} runs each)")
    print(f"{'stage':<18} {'timed':>6} {'refused':>8} {'median ms':>10} {'p95 ms':>8} {'x parse':>8}")
    for stage, values in stages.items():
        values.sort()
        median = statistics.median(values)
        p95 = values[int(len(values) * 0.95) - 1]
        print(
            f"{stage:<18} {len(values):>6} {refused[stage]:>8} {median * 1e3:>10.2f} {p95 * 1e3:>8.2f} "
            f"{median / parse:>8.1f}"
        )


def block_sizes(customers: int) -> None:
    """Part 2: oracle verdicts and granted cells: resource blocks vs column-only vs table-level."""
    connection = duckdb.connect()
    create_sample_warehouse(connection, customers=customers)
    install_mask_functions(connection)
    results = [check_query(connection, sql, SAMPLE_SCHEMA) for sql in SAMPLE_QUERIES]
    blocks = sum(r.block_cells for r in results)
    columns = sum(r.column_cells for r in results)
    tables = sum(r.table_cells for r in results)
    preserved = sum(r.preserved for r in results)
    print(
        f"\nSemantic oracle over {len(results)} queries, {customers} customers: {preserved} results unchanged"
    )
    print(f"{'privilege model':<28} {'cells granted':>14} {'x blocks':>9}")
    for name, cells in (
        ("resource blocks", blocks),
        ("column-only (scan columns)", columns),
        ("table-level", tables),
    ):
        print(f"{name:<28} {cells:>14} {cells / blocks:>9.2f}")


def main() -> None:
    """Run both parts with sizes from the arguments or the environment."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=int(os.environ.get("LINEAGE_BENCH_REPEAT", 3)))
    parser.add_argument("--customers", type=int, default=int(os.environ.get("LINEAGE_BENCH_CUSTOMERS", 200)))
    args = parser.parse_args()
    latency(args.repeat)
    block_sizes(args.customers)


if __name__ == "__main__":
    main()
