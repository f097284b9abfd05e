"""`lineage ingest sample` and the checks `lineage ingest logs` makes before starting Spark."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from lineage_platform.cli import cli, invoke
from lineage_platform.errors import IngestError


def test_sample_command_writes_the_logs_and_reports(tmp_path: Path) -> None:
    out = tmp_path / "logs"
    result = CliRunner().invoke(
        cli, ["ingest", "sample", str(out), "--tables", "20", "--statements", "80", "--seed", "5"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith("80 query records over ")
    assert set(json.loads((out / "catalog.json").read_text())) == {"ods", "dwd", "dws", "ads"}
    assert sum(1 for _ in (out / "query-log").glob("*.jsonl")) >= 2


def test_sample_command_refuses_a_used_directory(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("")
    result = invoke(["ingest", "sample", str(tmp_path), "--statements", "5"])
    assert not result.success and isinstance(result.exception, IngestError)
    assert result.exception.hint


def test_logs_command_rejects_an_unknown_format_before_starting(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text("{}\n")
    result = CliRunner().invoke(cli, ["ingest", "logs", str(tmp_path), "--format", "csv"])
    assert result.exit_code == 2 and "csv" in result.output


def test_logs_command_needs_log_files(tmp_path: Path) -> None:
    result = invoke(["ingest", "logs", str(tmp_path), "--state-dir", str(tmp_path / "state")])
    assert not result.success and isinstance(result.exception, IngestError)
    assert "no log files" in str(result.exception)
