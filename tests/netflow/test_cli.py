"""`lineage netflow …` end to end on an embedded graph: generate, choose, ingest (with rejects), query, maintain."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from lineage_platform.cli import cli
from lineage_platform.graph import close_all


@pytest.fixture()
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("LINEAGE_GRAPH_URL", f"embedded:{tmp_path / 'graph'}")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def invoke(*args: str, code: int = 0) -> str:
        result = runner.invoke(cli, ["netflow", *args], catch_exceptions=False)
        close_all()  # each CLI call is its own process in real use: release the embedded store
        assert result.exit_code == code, result.output
        return result.output

    yield invoke
    close_all()


def test_the_whole_cycle_from_the_command_line(run, tmp_path: Path) -> None:
    assert "20000 records over 2 h" in run("generate", "flows.parquet", "--records", "20000", "--hours", "2")
    run("generate", "more.csv", "--records", "500", "--hours", "2", "--seed", "3")
    with (tmp_path / "more.csv").open("a") as handle:
        handle.write("broken line\n")
    (tmp_path / "log.sql").write_text(
        "SELECT * FROM flows WHERE dst_ip = '1.1.1.1';" * 3
        + "SELECT * FROM flows WHERE dst_port = 443;" * 2
        + "SELECT * FROM flows WHERE src_ip = '2.2.2.2';"
    )
    # 8 cells: clustering on dst_port too lets its queries read a third of a bucket instead of all of it
    assert "clustering attributes: dst_ip,dst_port" in run("choose", "log.sql")
    assert "clustering attributes: dst_ip\n" in run("choose", "log.sql", "--threshold", "0.4")

    out = run(
        "ingest",
        "flows.parquet",
        "more.csv",
        "--workload",
        "log.sql",
        "--root",
        "parts",
        "--rejects",
        "bad.csv",
        "--strict",
        code=1,
    )
    assert "20500 records into" in out and "1 malformed records set aside in bad.csv" in out
    wall, pipeline = re.search(r"in ([\d.]+) s .*records/s wall; writer pipeline ([\d.]+) s", out).groups()
    assert float(wall) >= float(pipeline) > 0  # the whole command's time, and the writers' share of it
    assert re.search(r"cell balance: up to \d+\.\d\dx more records .*; \d+ empty cells", out)
    assert "broken line" in (tmp_path / "bad.csv").read_text()
    # ~10 k records/h: one bucket a day holds the 8 cells the layout wants at least
    assert "8 cells per time bucket: clustered on dst_ip, dst_port, a query reads 46.1% of a bucket" in out
    assert "1440 min buckets x 8 cells on dst_ip, dst_port" in run("partitions")

    out = run(
        "query",
        "SELECT dst_port, count(*) AS n FROM flows WHERE dst_port IN (53, 443) GROUP BY 1 ORDER BY 1",
        "--explain",
    )
    assert out.splitlines()[0].split() == ["dst_port", "n"]
    assert [line.split()[0] for line in out.splitlines()[1:3]] == ["53", "443"]
    assert "box: {'dst_port': (53, 53)}" in out

    out = run("query", "SELECT count(*) AS n FROM flows WHERE protocol = 6")
    assert "note: protocol is not a clustering attribute" in out

    assert "dropped" in run("retain", "2026-01-01 01:00:00")
    assert "re-written into" in run("repartition", "--attributes", "src_ip", "--cells", "2")
    assert "1440 min buckets x 2 cells on src_ip per bucket; 2 partition files" in run("partitions")


def test_bad_input_gets_a_clear_message(run, tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("")
    result = CliRunner().invoke(cli, ["netflow", "ingest", "x.txt"])
    assert "unknown NetFlow file type" in str(result.exception)
    result = CliRunner().invoke(cli, ["netflow", "query", "SELECT count(*) FROM flows"])
    assert "ingest records first" in str(result.exception)
    close_all()
