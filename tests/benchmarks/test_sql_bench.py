"""End to end: the accuracy benchmark runs an adapter in a subprocess and prints the side-by-side table."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.bench_sql_accuracy import main
from benchmarks.sql_corpus.corpus import load_corpus
from benchmarks.sql_peers.runner import Tool, run_tool


def test_accuracy_table_for_one_case_and_one_tool(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--case", "select_002", "--tool", "sqlglot.lineage"]) == 0
    out = capsys.readouterr().out
    assert "SQL lineage accuracy on 1 hand-written cases" in out
    row = next(line for line in out.splitlines() if line.startswith("sqlglot.lineage"))
    assert row.split()[2:] == ["0", "1.000", "1.000", "1.000", "1.000", "1.000", "1.000", "n/a", "0.667"]


def test_missing_interpreter_is_reported_not_raised() -> None:
    tool = Tool("ghost", "benchmarks.sql_peers.sqlglot_adapter", Path("/nonexistent/python"))
    run = run_tool(tool, load_corpus()[:1])
    assert run.results is None
    assert "make peers-venv" in (run.failure or "")


def test_dialect_corpus_prints_a_per_dialect_row_per_tool(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--corpus", "dialects", "--case", "ts_010", "--tool", "sqlglot.lineage"]) == 0
    out = capsys.readouterr().out
    assert "SQL lineage accuracy on 1 hand-written cases (dialects corpus)" in out
    row = next(line for line in out.splitlines() if line.startswith("tsql "))
    assert row.split() == ["tsql", "1", "1.000", "/", "0.667"]
