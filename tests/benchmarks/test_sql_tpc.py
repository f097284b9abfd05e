"""The TPC completeness benchmark over query files of our own, against the TPC-H schema catalog."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.bench_sql_tpc import as_write, main


def test_bare_select_is_wrapped_as_an_insert_and_insert_kept() -> None:
    assert as_write("q1", "-- note\nSELECT 1;") == "INSERT INTO out_q1 -- note\nSELECT 1"
    assert as_write("q2", "WITH a AS (SELECT 1) INSERT INTO t SELECT * FROM a") == (
        "WITH a AS (SELECT 1) INSERT INTO t SELECT * FROM a"
    )


def test_counts_queries_with_unresolved_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "good.sql").write_text(
        "SELECT n_name, sum(o_totalprice) AS spend FROM orders JOIN customer ON c_custkey = o_custkey "
        "JOIN nation ON n_nationkey = c_nationkey GROUP BY n_name"
    )
    (tmp_path / "bad.sql").write_text(
        "SELECT no_such_column FROM orders JOIN customer ON c_custkey = o_custkey"
    )
    assert main(["--suite", "tpch", "--queries", str(tmp_path), "--dialect", "postgres", "-v"]) == 0
    out = capsys.readouterr().out
    assert "tpch (postgres): 1/2 queries give column lineage with nothing unresolved" in out
    assert "bad.sql: column 'no_such_column' is ambiguous or unknown" in out
