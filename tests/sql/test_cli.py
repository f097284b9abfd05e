"""`lineage sql lineage` through the programmatic CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from lineage_platform.cli import cli, invoke


def test_json_output_from_a_file_with_a_yaml_schema(tmp_path: Path) -> None:
    script = tmp_path / "job.sql"
    script.write_text("INSERT OVERWRITE TABLE dw.o SELECT * FROM src WHERE dt = '${day}';\nSELECT FROM;\n")
    schema = tmp_path / "schema.yaml"
    schema.write_text("ods:\n  src:\n    a: int\n    dt: string\n")
    result = CliRunner().invoke(
        cli,
        [
            "sql",
            "lineage",
            str(script),
            "--schema",
            str(schema),
            "--default-db",
            "ods",
            "--format",
            "json",
            "--var",
            "day=2024-01-01",
        ],
    )
    assert result.exit_code == 0, result.output
    records = json.loads(result.output)
    assert [r["index"] for r in records] == [0, 1]
    assert {(e["source"], e["target"]) for e in records[0]["column_edges"] if e["strength"] == "strong"} == {
        ("ods.src.a", "dw.o.a"),
        ("ods.src.dt", "dw.o.dt"),
    }
    assert records[0]["predicates"] == [
        {"table": "ods.src", "column": "dt", "op": "=", "value": "2024-01-01"}
    ]
    assert records[1]["errors"][0]["kind"] == "parse" and records[1]["errors"][0]["line"] == 2


def test_text_output_from_stdin() -> None:
    result = CliRunner().invoke(cli, ["sql", "lineage", "-", "--format", "text"], input="SELECT a FROM db.t")
    assert result.exit_code == 0, result.output
    assert "db.t.a -> $result.a  strong IDENTITY" in result.output


def test_malformed_schema_file_is_a_clear_error(tmp_path: Path) -> None:
    script = tmp_path / "q.sql"
    script.write_text("SELECT 1")
    schema = tmp_path / "bad.json"
    schema.write_text('{"db": {"t": ["a", "b"]}}')
    outcome = invoke(["sql", "lineage", str(script), "--schema", str(schema)])
    assert not outcome.success
    assert "column mapping" in str(outcome.exception) and outcome.exception.hint


def test_bad_variable_option_says_how_to_write_it(tmp_path: Path) -> None:
    script = tmp_path / "q.sql"
    script.write_text("SELECT 1")
    outcome = invoke(["sql", "lineage", str(script), "--var", "novalue"])
    assert not outcome.success and "NAME=VALUE" in str(outcome.exception)


def test_unknown_output_format_says_which_ones_exist() -> None:
    outcome = invoke(["sql", "lineage", "-", "--format", "xml"])
    assert not outcome.success and "--format json" in str(outcome.exception)


def test_unknown_dialect_is_a_clear_error_naming_close_ones(tmp_path: Path) -> None:
    script = tmp_path / "q.sql"
    script.write_text("SELECT 1")
    outcome = invoke(["sql", "lineage", str(script), "--dialect", "postgress"])
    assert not outcome.success
    assert "Unknown dialect 'postgress'" in str(outcome.exception) and "postgres" in str(outcome.exception)
    assert outcome.exception.hint
