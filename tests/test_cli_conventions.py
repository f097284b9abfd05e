"""CLI conventions: -h everywhere, env vars named per command where meanings differ, results on stdout and
progress on stderr, full width when piped, one line for a server that is down, a table traced column by column."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from lineage_platform.cli import cli, invoke
from lineage_platform.errors import GraphError
from tests.test_cli import _walk

FIXTURES = Path(__file__).parent / "fixtures"
LINEAGE = str(Path(sys.executable).with_name("lineage"))
LONG_TABLE = "warehouse_with_a_rather_long_database_name.report_table_named_at_length_for_the_finance_team"
LOAD = f"""
from lineage_platform.graph import close_all, connect
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.sql import extract_lineage
g = connect(__import__('sys').argv[1])
LineageWriter(g).write(extract_lineage(open(__import__('sys').argv[2]).read()
    + "INSERT OVERWRITE TABLE {LONG_TABLE} SELECT dept FROM default.avgsalary;"))
close_all()
"""


def test_dash_h_is_help_on_every_command() -> None:
    runner = CliRunner()
    for path, _command in _walk(cli):
        result = runner.invoke(cli, [*path, "-h"], prog_name="lineage")
        assert result.exit_code == 0, (path, result.output)
        assert result.output.startswith(f"Usage: lineage {' '.join(path)}".rstrip()), path


def test_an_env_var_shared_by_several_commands_means_the_same_on_each() -> None:
    kinds: dict[str, set] = {}
    for _path, command in _walk(cli):
        for param in command.params:
            if isinstance(param, click.Option) and param.envvar:
                choices = tuple(param.type.choices) if isinstance(param.type, click.Choice) else ()
                kinds.setdefault(str(param.envvar), set()).add((param.type.name, choices))
    assert {name for name, seen in kinds.items() if len(seen) > 1} == set()
    for name in (
        "LINEAGE_NETFLOW_INGEST_ENGINE",
        "LINEAGE_NETFLOW_QUERY_ENGINE",
        "LINEAGE_SQL_LINEAGE_FORMAT",
        "LINEAGE_ORC_READ_FORMAT",
    ):
        assert name in kinds
    assert "LINEAGE_ENGINE" not in kinds and "LINEAGE_FORMAT" not in kinds


def test_another_commands_env_var_does_not_break_sql_lineage() -> None:
    sql = "INSERT INTO TABLE db.b SELECT x FROM db.a;"
    env = {"LINEAGE_ORC_READ_FORMAT": "jsonl", "LINEAGE_NETFLOW_INGEST_ENGINE": "spark"}
    text = CliRunner().invoke(cli, ["sql", "lineage"], input=sql, env=env)
    assert text.exit_code == 0, text.output
    assert "db.a.x" in text.output and "db.b.x" in text.output
    as_json = CliRunner().invoke(
        cli, ["sql", "lineage"], input=sql, env={"LINEAGE_SQL_LINEAGE_FORMAT": "json"}
    )
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.output)[0]["outputs"]


def test_trace_options_come_from_their_env_vars(tmp_path: Path) -> None:
    url = f"embedded:{tmp_path / 'graph'}"
    subprocess.run([sys.executable, "-c", LOAD, url, FIXTURES / "dag_provenance_paper.sql"], check=True)
    runner = CliRunner()
    by_flags = runner.invoke(cli, ["trace", "default.empinfo", "--down", "--format", "json", "--graph", url])
    by_env = runner.invoke(
        cli,
        ["trace", "default.empinfo", "--graph", url],
        env={"LINEAGE_TRACE_DIRECTION": "down", "LINEAGE_TRACE_FORMAT": "json"},
    )
    upstream = runner.invoke(cli, ["trace", "default.empinfo", "--format", "json", "--graph", url])
    assert by_flags.exit_code == by_env.exit_code == upstream.exit_code == 0, by_env.output
    assert json.loads(by_env.output) == json.loads(by_flags.output) != json.loads(upstream.output)
    assert "default.avgsalary" in by_env.output and "default.avgsalary" not in upstream.output
    flag_wins = runner.invoke(
        cli, ["trace", "default.empinfo", "--up", "--graph", url], env={"LINEAGE_TRACE_DIRECTION": "down"}
    )
    assert "default.employee" in flag_wins.output and "default.avgsalary" not in flag_wins.output
    sideways = runner.invoke(
        cli, ["trace", "default.empinfo", "--graph", url], env={"LINEAGE_TRACE_DIRECTION": "sideways"}
    )
    assert (
        sideways.exit_code == 2
        and "LINEAGE_TRACE_DIRECTION='sideways' is none of up, down, both" in sideways.output
    )


def test_a_table_traced_at_column_level_shows_its_columns_lineage(tmp_path: Path) -> None:
    url = f"embedded:{tmp_path / 'graph'}"
    subprocess.run([sys.executable, "-c", LOAD, url, FIXTURES / "dag_provenance_paper.sql"], check=True)
    result = CliRunner().invoke(cli, ["trace", "default.avgsalary", "--level", "column", "--graph", url])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "default.avgsalary" and len(lines) > 1
    assert "├─ default.avgsalary.avg_salary" in lines and "└─ default.avgsalary.dept" in lines
    assert any("▲ default.employee.salary" in line for line in lines)


@pytest.mark.parametrize(
    "args",
    [
        ["trace", "db.t"],
        ["impact", "db.t"],
        ["ttl", "advise", "db.t"],
        ["labels", "propagate"],
        ["graph", "export", "out.json"],
    ],
    ids=lambda args: " ".join(args[:2]),
)
def test_a_server_that_is_down_is_one_platform_error(args: list[str], tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    result = invoke([*args, "--graph", f"ws://127.0.0.1:{port}/gremlin"])
    assert not result.success
    assert isinstance(result.exception, GraphError)
    assert str(result.exception).startswith(f"cannot reach the graph server at ws://127.0.0.1:{port}/gremlin")
    assert "\n" not in str(result.exception)


@pytest.mark.slow
def test_piped_output_is_full_width_and_only_results_go_to_stdout(tmp_path: Path) -> None:
    url = f"embedded:{tmp_path / 'graph'}"
    subprocess.run([sys.executable, "-c", LOAD, url, FIXTURES / "dag_provenance_paper.sql"], check=True)
    env = {k: v for k, v in __import__("os").environ.items() if k != "COLUMNS"}

    impact = subprocess.run(
        [LINEAGE, "impact", "default.avgsalary", "--graph", url], capture_output=True, text=True, env=env
    )
    assert impact.returncode == 0, impact.stderr
    assert LONG_TABLE in impact.stdout and "…" not in impact.stdout  # one row, not cut at 80 columns
    assert max(len(line) for line in impact.stdout.splitlines()) > 80

    exported = subprocess.run(
        [LINEAGE, "graph", "export", str(tmp_path / "g.json"), "--graph", url], capture_output=True, text=True
    )
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.startswith("exported ") and exported.stdout.count("\n") == 1  # the result only
    assert "vertices" in exported.stderr and "100.0%" in exported.stderr  # the progress bars
