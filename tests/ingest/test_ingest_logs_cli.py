"""`lineage ingest logs` end to end on hand-written logs: housekeeping DDL, plain SELECTs, unparsable SQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lineage_platform.cli import invoke
from lineage_platform.graph import connect

pytestmark = [pytest.mark.slow, pytest.mark.spark]

HOUSEKEEPING = (
    "ALTER TABLE dwd.orders ADD IF NOT EXISTS PARTITION (dt='2026-01-05');"
    "ALTER TABLE dwd.orders PARTITION (dt='2026-01-05') SET LOCATION 'hdfs://nn/dwd/orders/dt=2026-01-05';"
    "ALTER TABLE dwd.orders SET TBLPROPERTIES ('owner'='etl');"
    "ALTER TABLE dwd.orders DROP IF EXISTS PARTITION (dt='2025-01-05');"
    "ALTER TABLE dwd.orders ADD COLUMNS (note string);"
    "MSCK REPAIR TABLE ods.orders;"
    "ANALYZE TABLE dwd.orders PARTITION (dt='2026-01-05') COMPUTE STATISTICS;"
    "CREATE TEMPORARY FUNCTION to_cents AS 'com.example.ToCents';"
    "GRANT SELECT ON TABLE dwd.orders TO USER bob;"
    "REFRESH TABLE dwd.orders; CACHE TABLE dwd.orders; UNCACHE TABLE dwd.orders;"
    "SHOW PARTITIONS dwd.orders; DESCRIBE FORMATTED dwd.orders; EXPLAIN SELECT 1;"
    "CREATE DATABASE IF NOT EXISTS tmp; DROP DATABASE IF EXISTS tmp2"
)
ETL = "INSERT OVERWRITE TABLE dwd.orders PARTITION (dt='2026-01-05') SELECT id, amount FROM ods.orders WHERE dt='2026-01-05'"
REPORT = "SELECT id, amount * 100 AS cents FROM dwd.orders WHERE dt >= date_sub('2026-01-05', 6)"


def _record(sql: str, job: str, minute: int, **extra: Any) -> str:
    start = f"2026-01-05T03:{minute:02d}:00.000Z"
    return json.dumps({"sql": sql, "user": "etl", "job": job, "start_time": start, "engine": "hive", **extra})


def _hive_block(sql: str, job: str, second: int) -> list[str]:
    stamp = f"2026-01-05 04:00:{second:02d},000"
    query = f"hive_{second}"
    return [
        f"{stamp} INFO  [HiveServer2-Handler-Pool: Thread-7] ql.Driver: Executing command(queryId={query}): "
        f"user=etl host=hs2-01 cluster=prod job={job} queue=root.etl",
        sql,
        f"{stamp} INFO  [HiveServer2-Handler-Pool: Thread-7] ql.Driver: Completed executing command(queryId={query}); "
        "Time taken: 1.0 seconds",
    ]


def _load(tmp_path: Path, logs: Path, *extra: str, graph: str | None = None) -> Any:
    return invoke(
        [
            "ingest",
            "logs",
            str(logs),
            "--master",
            "local[2]",
            "--graph",
            graph or f"embedded:{tmp_path / 'graph'}",
            "--state-dir",
            str(tmp_path / "state"),
            *extra,
        ]
    )


def _rejected(tmp_path: Path) -> list[dict[str, Any]]:
    [side] = (tmp_path / "state").glob("*/rejected.jsonl")
    return [json.loads(line) for line in side.read_text().splitlines()]


def test_strict_load_passes_on_housekeeping_ddl_and_keeps_selects(spark: Any, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "audit.jsonl").write_text(
        "\n".join(
            [
                _record(HOUSEKEEPING, "housekeeping", 1),
                _record(ETL, "load_orders", 2),
                _record(REPORT, "weekly_report", 3),
            ]
        )
        + "\n"
    )
    hive_lines = [*_hive_block("ALTER TABLE dwd.orders ADD PARTITION (dt='2026-01-06')", "housekeeping", 1)]
    hive_lines += _hive_block("MSCK REPAIR TABLE ods.orders", "housekeeping", 2)
    (logs / "hiveserver2.log").write_text("\n".join(hive_lines) + "\n")

    result = _load(tmp_path, logs, "--strict")
    assert result.success, result.exception
    assert _rejected(tmp_path) == []
    summary = result.result
    assert summary.without_lineage == {
        "ALTER TABLE ADD PARTITION": 2,
        "ALTER TABLE SET LOCATION": 1,
        "ALTER TABLE SET TBLPROPERTIES": 1,
        "ALTER TABLE DROP PARTITION": 1,
        "ALTER TABLE ADD COLUMNS": 1,
        "MSCK REPAIR TABLE": 2,
        "ANALYZE TABLE": 1,
        "CREATE FUNCTION": 1,
        "GRANT": 1,
        "REFRESH TABLE": 1,
        "CACHE TABLE": 1,
        "UNCACHE TABLE": 1,
        "SHOW PARTITIONS": 1,
        "DESCRIBE": 1,
        "EXPLAIN": 1,
        "CREATE DATABASE": 1,
        "DROP DATABASE": 1,
    }
    assert ("statements without lineage", "19") in summary.rows()

    g = connect(f"embedded:{tmp_path / 'graph'}")
    readers = (
        g.V().has("table", "qualifiedName", "dwd.orders").out("usedBy").has("operation", "SELECT").to_list()
    )
    assert len(readers) == 1
    [run] = g.V(readers[0]).out("hasRun").value_map("job", "user").to_list()
    assert run == {"job": ["weekly_report"], "user": ["etl"]}
    [result_name] = g.V(readers[0]).out("generated").values("qualifiedName").to_list()
    assert result_name.startswith("$result:")
    assert set(
        g.V().has("qualifiedName", f"{result_name}.cents").in_("flowsTo").values("qualifiedName").to_list()
    ) == {"dwd.orders.amount"}
    assert not g.V().has("table", "qualifiedName", P_TMP2).to_list()  # DROP DATABASE drops no table


P_TMP2 = "default.tmp2"


def test_unparsable_sql_is_still_rejected_with_its_reason(spark: Any, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "audit.jsonl").write_text(
        "\n".join(
            [
                _record("MSCK REPAIR TABLE ods.orders", "housekeeping", 1),
                _record("INSERT INTO dwd.x SELEC FROM", "broken", 2),
            ]
        )
        + "\n"
    )
    result = _load(tmp_path, logs, "--strict")
    assert not result.success and "rejected input" in str(result.exception)
    [row] = _rejected(tmp_path)
    assert row["raw"] == "insert into dwd.x selec from" and row["reason"].startswith(
        "statement does not parse: "
    )


def _sources(g: Any, column: str) -> set[str]:
    return set(g.V().has("qualifiedName", column).in_("flowsTo").values("qualifiedName").to_list())


@pytest.mark.parametrize("graph", ["embedded", "served"])
def test_udf_rules_file_reaches_the_executors(spark: Any, tmp_path: Path, graph: str) -> None:
    """The executors parse (on both write paths): a rule from the file changes the lineage they write."""
    from lineage_platform.graph.embedded.engine import EmbeddedGraph
    from lineage_platform.graph.embedded.server import BackgroundServer, ServerSettings

    logs = tmp_path / "logs"
    logs.mkdir()
    sql = "INSERT INTO dwd.o SELECT lookup_dim(id, tag) AS l, pick_if(flag, a, b) AS p FROM ods.t"
    (logs / "audit.jsonl").write_text(_record(sql, "dim_job", 1) + "\n")
    rules = tmp_path / "rules.yaml"
    rules.write_text("functions:\n  lookup_dim: {flow_args: [0]}\n  pick_if: {condition_args: [0]}\n")
    if graph == "embedded":
        result = _load(tmp_path, logs, "--strict", "--udf-rules", str(rules))
        assert result.success, result.exception
        g = connect(f"embedded:{tmp_path / 'graph'}")
        assert _sources(g, "dwd.o.l") == {"ods.t.id"}  # without the rule: id and tag
        assert _sources(g, "dwd.o.p") == {"ods.t.flag", "ods.t.a", "ods.t.b"}
        [flag] = g.V().has("qualifiedName", "ods.t.flag").out_e("flowsTo").values("strength").to_list()
        assert flag == "weak"
        return
    served = EmbeddedGraph(tmp_path / "served", lock_timeout=5.0)
    try:
        with BackgroundServer(served, ServerSettings(port=0)) as server:
            result = _load(tmp_path, logs, "--strict", "--udf-rules", str(rules), graph=server.url)
            assert result.success, result.exception
            assert _sources(connect(server.url), "dwd.o.l") == {"ods.t.id"}
    finally:
        served.close()
