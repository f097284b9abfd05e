"""The sample job-log generator: deterministic, realistic, with the damage the readers must survive."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
import sqlglot

from lineage_platform.errors import IngestError
from lineage_platform.ingest.records import FAILED
from lineage_platform.ingest.sample_logs import SampleSummary, generate_sample
from lineage_platform.ingest.statements import prepare_query, split_statements
from tests.ingest.conftest import files_of


def _records(sample: SampleSummary) -> list[dict]:
    records = []
    for path in files_of(sample, "query-log"):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return records


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()
    }


def test_same_seed_same_bytes_other_seed_other_logs(tmp_path: Path) -> None:
    first = generate_sample(tmp_path / "a", tables=30, statements=200, seed=3)
    second = generate_sample(tmp_path / "b", tables=30, statements=200, seed=3)
    third = generate_sample(tmp_path / "c", tables=30, statements=200, seed=4)
    assert first.records == second.records == 200
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    assert _tree(tmp_path / "a") != _tree(tmp_path / "c")
    assert third.records == 200


def test_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(IngestError, match="not empty"):
        generate_sample(tmp_path, tables=10, statements=10)


def test_catalog_is_layered_and_carries_business_hints(sample: SampleSummary) -> None:
    catalog = json.loads((sample.out_dir / "catalog.json").read_text())
    assert {"ods", "dwd", "dws", "ads"} <= set(catalog)
    assert sum(len(tables) for tables in catalog.values()) == sample.tables >= 50
    user_tables = [columns for name, columns in catalog["ods"].items() if name.startswith("ods_user_")]
    assert user_tables and all({"phone", "email", "id_card"} <= set(columns) for columns in user_tables)
    for database in ("ods", "dwd", "dws"):
        assert all({"app", "dt"} <= set(columns) for columns in catalog[database].values())


def test_catalog_keeps_each_tables_column_order(sample: SampleSummary) -> None:
    """Positional INSERT ... SELECT lineage is only right if the catalog lists columns in table order."""
    catalog = json.loads((sample.out_dir / "catalog.json").read_text())
    tails = [list(columns)[-2:] for db in ("ods", "dwd", "dws") for columns in catalog[db].values()]
    assert tails and all(tail == ["app", "dt"] for tail in tails)
    assert any(list(columns) != sorted(columns) for columns in catalog["ods"].values())


def test_query_log_holds_the_promised_constructs(sample: SampleSummary) -> None:
    text = "\n".join(record["sql"] for record in _records(sample))
    for pattern in (
        r"CREATE TABLE \S+ AS\nSELECT",
        r"INSERT OVERWRITE TABLE \S+ PARTITION \(dt='(\$\{bizdate\}|\d{4}-\d{2}-\d{2})'\)",
        r"\bJOIN\b",
        r"^WITH \w+ AS \(",
        r"GROUP BY",
        r"OVER \(PARTITION BY",
        r"LATERAL VIEW explode\(",
        r"get_json_object\(",
        r"CASE WHEN",
        r"UNION ALL",
        r"^FROM \S+\nINSERT OVERWRITE[\s\S]+?\nINSERT OVERWRITE",
        r"CREATE OR REPLACE VIEW",
        r"DROP TABLE IF EXISTS",
        r"ALTER TABLE \S+ RENAME TO",
        r"LOAD DATA INPATH",
        r"EXPORT TABLE",
        r"dt >= date_sub\('(\$\{bizdate\}|\d{4}-\d{2}-\d{2})', (6|29)\)",
        r"^SET hivevar:bizdate=",
        r"^SHOW |^DESCRIBE |^EXPLAIN |^SELECT count\(1\)",
    ):
        assert re.search(pattern, text, re.M), pattern


def test_runs_repeat_over_days_with_provenance_and_failures(sample: SampleSummary) -> None:
    records = _records(sample)
    assert sample.days >= 5
    assert Counter(record["status"] for record in records)[FAILED] > 0
    assert {record["engine"] for record in records} == {"hive", "spark"}
    assert len({record["user"] for record in records}) >= 4
    assert all(
        record["host"] and record["cluster"] and record["job"] and record["queue"] for record in records
    )
    runs = Counter(
        s.key
        for record in records
        for s in prepare_query(record["sql"], record["engine"], start_time=record["start_time"]).statements
    )
    assert sum(1 for count in runs.values() if count >= 3) > len(runs) // 2


def test_generated_statements_parse_except_export(sample: SampleSummary) -> None:
    """Every statement is valid Hive SQL (sqlglot cannot parse Hive's EXPORT TABLE, which is checked apart)."""
    statements = {s for record in _records(sample) for s in split_statements(record["sql"])}
    for statement in statements:
        if statement.startswith(("EXPORT TABLE", "SET ", "-- ")):
            continue
        sqlglot.parse(statement.replace("${bizdate}", "2026-01-01"), read="hive")


def test_each_format_is_damaged_a_little(tmp_path: Path) -> None:
    summary = generate_sample(tmp_path / "logs", tables=60, statements=6000, seed=11)
    assert set(summary.garbage) == {"jsonl", "spark-events", "hive-log"}
    unreadable = 0
    for path in files_of(summary, "query-log"):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                json.loads(line)
            except json.JSONDecodeError:
                unreadable += 1
    assert unreadable == summary.garbage["jsonl"]
