"""SQL lineage throughput: sqlglot.lineage (per output column) vs this project's extract_lineage.

Both trace the same generated Hive statements (CTEs, joins, aggregates, windows, unions, LATERAL VIEW) over
the same catalog. The baseline parses each statement once and calls ``sqlglot.lineage.lineage`` for every
output column, which is how sqlglot alone yields column lineage. The project runs ``extract_lineage`` on the
whole script twice: cold (empty statement cache) and warm (the same script again, as a daily job log
repeats yesterday's statements).

    python benchmarks/bench_sql_extract.py [STATEMENTS]      (default 200; or LINEAGE_BENCH_STATEMENTS)
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import sqlglot
from sqlglot.lineage import lineage

from lineage_platform.sql import (
    extract_lineage,
    extractor,
)

TABLES = 20
COLUMNS = ("id", "user_id", "amount", "status", "info", "tags", "dt")
TEMPLATES = (
    "WITH c AS (SELECT user_id, sum(amount) AS total FROM ods.t{a} WHERE dt = '2024-01-{d:02d}' GROUP BY user_id) "
    "INSERT OVERWRITE TABLE dw.o{n} SELECT u.id, u.status, c.total FROM ods.t{b} u JOIN c ON u.user_id = c.user_id",
    "INSERT OVERWRITE TABLE dw.o{n} SELECT id, amount, row_number() OVER (PARTITION BY user_id ORDER BY dt) AS rn "
    "FROM ods.t{a} WHERE status IN ('a', 'b{d}')",
    "INSERT INTO dw.o{n} SELECT id, upper(status) AS s FROM ods.t{a} WHERE amount > {d} "
    "UNION ALL SELECT id, lower(status) AS s FROM ods.t{b} WHERE amount < {d}",
    "INSERT OVERWRITE TABLE dw.o{n} SELECT t.id, get_json_object(t.info, '$.k{d}') AS k, tag FROM ods.t{a} t "
    "LATERAL VIEW explode(split(t.tags, ',')) x AS tag",
    "INSERT OVERWRITE TABLE dw.o{n} SELECT s.user_id, s.n, md5(s.status) AS h FROM "
    "(SELECT user_id, status, count(*) AS n FROM ods.t{a} WHERE dt >= '2024-01-{d:02d}' GROUP BY user_id, status) s",
)


def catalog() -> dict:
    """``ods.t0 … ods.t{TABLES-1}``, all with the same columns."""
    return {"ods": {f"t{i}": dict.fromkeys(COLUMNS, "string") for i in range(TABLES)}}


def statements(count: int) -> list[str]:
    """``count`` distinct statements cycling through the templates."""
    return [
        TEMPLATES[n % len(TEMPLATES)].format(n=n, a=n % TABLES, b=(n * 7 + 3) % TABLES, d=n % 28 + 1)
        for n in range(count)
    ]


def sqlglot_lineage(sqls: list[str], schema: dict) -> int:
    """Baseline: parse once per statement, then ``sqlglot.lineage.lineage`` for each output column."""
    nodes = 0
    for sql in sqls:
        query = sqlglot.parse_one(sql, read="hive").expression
        for column in query.named_selects:
            nodes += sum(1 for _ in lineage(column, query, schema=schema, dialect="hive").walk())
    return nodes


def project(sqls: list[str], schema: dict) -> int:
    """The project: one ``extract_lineage`` call over the whole script."""
    return sum(len(r.column_edges) for r in extract_lineage(";\n".join(sqls), schema=schema, dialect="hive"))


def timed(run: Callable[[], int]) -> tuple[float, int]:
    """Seconds and result of one call."""
    started = time.perf_counter()
    result = run()
    return time.perf_counter() - started, result


def main() -> None:
    """Measure baseline, project cold and project warm on the same statements; print a table."""
    count = int(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("LINEAGE_BENCH_STATEMENTS", 200))
    sqls, schema = statements(count), catalog()
    compiled = sqlglot.parser.__file__.endswith(".so")
    base_seconds, nodes = timed(lambda: sqlglot_lineage(sqls, schema))
    extractor.clear_cache()
    cold_seconds, edges = timed(lambda: project(sqls, schema))
    warm_seconds, _ = timed(lambda: project(sqls, schema))
    print(
        f"SQL lineage throughput, {count} Hive statements (sqlglot {sqlglot.__version__}, compiled={compiled})\n"
    )
    print(f"{'run':<34}{'seconds':>9}{'stmt/s':>9}{'vs baseline':>13}   output")
    rows = (
        ("sqlglot.lineage per column", base_seconds, f"{nodes} lineage nodes"),
        ("extract_lineage, cold cache", cold_seconds, f"{edges} column edges"),
        ("extract_lineage, warm cache", warm_seconds, f"{edges} column edges"),
    )
    for name, seconds, output in rows:
        print(f"{name:<34}{seconds:9.3f}{count / seconds:9.1f}{base_seconds / seconds:12.2f}x   {output}")


if __name__ == "__main__":
    main()
