"""The adapter side of the peer protocol: stdlib only, so it runs in the peers' own venv too.

An adapter is ``python -m benchmarks.sql_peers.<tool>_adapter``. It reads one JSON request on stdin::

    {"catalog": {db: {table: {column: type}}}, "passes": 1,
     "cases": [{"id": "cte_001", "sql": "...", "default_db": "dwd" | null, "dialect": "hive"}, ...]}

and writes one JSON answer on stdout::

    {"tool": "sqllineage", "version": "1.5.9", "pass_seconds": [0.8, ...],
     "results": {"cte_001": {"statements": [STATEMENT, ...], "error": null | "message"}}}

where each STATEMENT is the tool's lineage of one statement of the case's script, in normalized form::

    {"inputs": ["ods.orders"], "outputs": ["dws.x"],
     "strong": [["ods.orders.amount", "dws.x.total"]], "weak": [["ods.orders.dt", "dws.x"]]}

Names are lower-case; a plain SELECT writes to ``$result``; a weak edge's target is a dataset. ``dialect`` is
sqlglot's name for the case's SQL dialect (``hive``, ``spark``, ``trino``, ``postgres``, ``snowflake``,
``mysql``, ``tsql``, ``bigquery``); each adapter maps it onto its tool's own name. Every pass analyses every
case; only the tool's own work sits inside the timed region.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

Statement = dict[str, list[Any]]
Analyse = Callable[[str, "str | None", dict, str], list[Statement]]

RESULT = "$result"


def split_statements(sql: str) -> list[str]:
    """Split a script on ``;`` outside quotes and comments; drop statements that hold only comments."""
    statements: list[str] = []
    current: list[str] = []
    has_code = False
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch in "'\"`":
            end = i + 1
            while end < n and sql[end] != ch:
                end += 2 if sql[end] == "\\" else 1
            current.append(sql[i : end + 1])
            has_code = True
            i = end + 1
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            end = n if end < 0 else end
            current.append(sql[i:end])
            i = end
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            end = n if end < 0 else end + 2
            current.append(sql[i:end])
            i = end
        elif ch == ";":
            if has_code:
                statements.append("".join(current).strip())
            current, has_code = [], False
            i += 1
        else:
            current.append(ch)
            has_code = has_code or not ch.isspace()
            i += 1
    if has_code:
        statements.append("".join(current).strip())
    return statements


def statement(
    inputs: list[str], outputs: list[str], strong: list[tuple[str, str]], weak: list[tuple[str, str]]
) -> Statement:
    """Build one normalized statement record, lower-casing every name and dropping duplicates."""

    def names(values: list[str]) -> list[str]:
        return sorted({value.lower() for value in values})

    def pairs(values: list[tuple[str, str]]) -> list[list[str]]:
        return sorted([list(pair) for pair in {(s.lower(), t.lower()) for s, t in values}])

    return {"inputs": names(inputs), "outputs": names(outputs), "strong": pairs(strong), "weak": pairs(weak)}


def run_adapter(tool: str, version: str, analyse: Analyse) -> None:
    """Serve one request from stdin with ``analyse(sql, default_db, catalog, dialect)``; answer on stdout."""
    request = json.load(sys.stdin)
    catalog, cases = request["catalog"], request["cases"]
    results: dict[str, dict[str, Any]] = {}
    pass_seconds: list[float] = []
    for _ in range(max(1, int(request.get("passes", 1)))):
        started = time.perf_counter()
        for case in cases:
            try:
                results[case["id"]] = {
                    "statements": analyse(
                        case["sql"], case.get("default_db"), catalog, case.get("dialect") or "hive"
                    ),
                    "error": None,
                }
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # a failure on one case is a measured outcome, not a crash; Rust
                # panics in openlineage-sql arrive as pyo3's PanicException, a BaseException
                results[case["id"]] = {"statements": [], "error": f"{type(exc).__name__}: {exc}"[:300]}
        pass_seconds.append(time.perf_counter() - started)
    json.dump(
        {"tool": tool, "version": version, "pass_seconds": pass_seconds, "results": results}, sys.stdout
    )
