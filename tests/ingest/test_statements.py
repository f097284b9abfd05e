"""Splitting logged queries into distinct lineage statements."""

from __future__ import annotations

from datetime import date

import pytest

from lineage_platform.ingest.statements import (
    dialect_for,
    has_lineage,
    normalise,
    prepare_query,
    split_statements,
    statement_kind,
)


def test_split_ignores_semicolons_in_strings_comments_and_backticks() -> None:
    script = "SELECT ';' AS a; -- not; here\nINSERT INTO `t;x` SELECT \"b;\" ;; /* c; */ DROP TABLE t"
    assert split_statements(script) == [
        "SELECT ';' AS a",
        '-- not; here\nINSERT INTO `t;x` SELECT "b;"',
        "/* c; */ DROP TABLE t",
    ]


def test_split_drops_empty_and_comment_only_statements() -> None:
    assert split_statements(" ; -- only a comment\n ; ") == []


def test_normalise_collapses_layout_case_and_comments_but_keeps_literals() -> None:
    first = "INSERT OVERWRITE TABLE Dwd.T\n  SELECT Name, 'Douyin' AS App -- the app\nFROM ods.s /* x */ WHERE n > 10"
    second = "insert overwrite table dwd.t select name, 'Douyin' as app from ods.s where n > 10"
    assert normalise(first) == normalise(second) == second


def test_normalise_makes_the_business_date_generic_inside_strings_only() -> None:
    text = "LOAD DATA INPATH '/raw/2026-01-05' INTO TABLE t PARTITION (dt='20260105') -- 2026-01-05"
    expected = "load data inpath '/raw/${bizdate}' into table t partition (dt='${bizdate}')"
    assert normalise(text, date(2026, 1, 5)) == expected
    assert (
        normalise("SELECT 20260105, '2026010' FROM t", date(2026, 1, 5))
        == "select 20260105, '2026010' from t"
    )


def test_dates_other_than_the_business_date_keep_their_literal() -> None:
    """Failed before: every date became ${bizdate}, so a fixed start read as a one-day read."""
    prepared = prepare_query(
        "INSERT INTO t SELECT * FROM s WHERE dt >= '2025-01-01' AND dt <= '2026-01-05'",
        start_time="2026-01-05T02:00:00.000Z",
    )
    assert prepared.statements[0].sql == (
        "insert into t select * from s where dt >= '2025-01-01' and dt <= '${bizdate}'"
    )
    no_run_time = prepare_query("INSERT INTO t SELECT * FROM s WHERE dt = '2026-01-05'")
    assert "'2026-01-05'" in no_run_time.statements[0].sql


def test_a_statement_with_the_run_day_and_the_day_before_keeps_the_earlier_literal() -> None:
    """Both days cannot be the same placeholder: that would shrink a two-day read to one."""
    prepared = prepare_query(
        "INSERT INTO t SELECT * FROM s WHERE dt BETWEEN '2026-01-04' AND '2026-01-05'",
        start_time="2026-01-05T02:00:00.000Z",
    )
    assert "between '2026-01-04' and '${bizdate}'" in prepared.statements[0].sql


def test_different_literals_keep_statements_apart() -> None:
    assert normalise("SELECT * FROM t WHERE app = 'douyin'") != normalise(
        "SELECT * FROM t WHERE app = 'toutiao'"
    )


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("insert overwrite table t select 1", True),
        ("from s insert overwrite table a select x insert overwrite table b select y", True),
        ("with c as (select 1) insert into t select * from c", True),
        ("with c as (select 'insert' as x) select * from c", True),
        ("create table t as select 1", True),
        ("create temporary function f as 'x.Y'", False),
        ("drop table if exists t", True),
        ("alter table a rename to b", True),
        ("load data inpath '/x' into table t", True),
        ("export table t to '/x'", True),
        ("select count(1) from t", True),
        ("(select a from t) union all (select a from u)", True),
        ("alter table t add partition (dt='x')", True),  # only the parser can tell: it finds no datasets
        ("msck repair table t", False),
        ("analyze table t compute statistics", False),
        ("grant select on table t to user bob", False),
        ("cache table t", False),
        ("set a=1", False),
        ("use dwd", False),
        ("show partitions t", False),
        ("describe formatted t", False),
        ("explain select 1", False),
    ],
)
def test_has_lineage(statement: str, expected: bool) -> None:
    assert has_lineage(statement) is expected


def test_prepare_applies_set_variables_and_use_then_skips_them() -> None:
    prepared = prepare_query(
        "SET hivevar:bizdate=2026-01-05; SET hiveconf:src=ods.s; USE DWD;\n"
        "INSERT OVERWRITE TABLE t PARTITION (dt='${bizdate}') SELECT * FROM ${hiveconf:src} WHERE dt='${hivevar:bizdate}';"
        "SHOW TABLES",
        engine="spark",
        start_time="2026-01-06T01:00:00.000Z",
    )
    assert prepared.without_lineage == {"SET": 2, "USE": 1, "SHOW TABLES": 1}
    [statement] = prepared.statements
    assert (
        statement.sql
        == "insert overwrite table t partition (dt='${bizdate}') select * from ods.s where dt='${bizdate}'"
    )
    assert statement.default_db == "dwd"
    assert statement.dialect == "spark"


def test_runs_on_different_days_and_spellings_share_a_key() -> None:
    scheduled = prepare_query(
        "SET hivevar:bizdate=2026-01-05;\nINSERT INTO t SELECT * FROM s WHERE dt = '${bizdate}'",
        start_time="2026-01-05T02:00:00.000Z",
    )
    resolved = prepare_query(
        "-- daily job\nINSERT  INTO T SELECT * FROM S WHERE DT = '2026-01-09'",
        start_time="2026-01-10T02:00:00.000Z",
    )
    assert scheduled.statements[0].key == resolved.statements[0].key


def test_key_separates_dialect_default_db_and_text() -> None:
    sql = "INSERT INTO t SELECT * FROM s"
    base = prepare_query(sql).statements[0].key
    assert prepare_query(sql, engine="spark").statements[0].key != base
    assert prepare_query(sql, default_db="dwd").statements[0].key != base
    assert prepare_query("INSERT INTO t SELECT * FROM s2").statements[0].key != base


def test_unknown_engines_parse_as_hive() -> None:
    assert dialect_for(None) == dialect_for("mapreduce") == "hive"
    assert dialect_for("Spark") == "spark"


@pytest.mark.parametrize(
    ("statement", "kind"),
    [
        (
            "alter table dwd.t add if not exists partition (dt='${bizdate}') location 'hdfs://nn/t'",
            "ALTER TABLE ADD PARTITION",
        ),
        ("alter table t set tblproperties ('a'='b')", "ALTER TABLE SET TBLPROPERTIES"),
        ("alter table t partition (dt='x', h=(1)) set location 'hdfs://nn/t/x'", "ALTER TABLE SET LOCATION"),
        ("alter table t drop if exists partition (dt='x')", "ALTER TABLE DROP PARTITION"),
        ("alter table `t` add columns (c int)", "ALTER TABLE ADD COLUMNS"),
        ("msck repair table t", "MSCK REPAIR TABLE"),
        ("analyze table t partition (dt='x') compute statistics for columns", "ANALYZE TABLE"),
        ("create temporary function f as 'a.F' using jar 'hdfs://nn/f.jar'", "CREATE FUNCTION"),
        ("grant select on table t to user bob", "GRANT"),
        ("refresh table t", "REFRESH TABLE"),
        ("uncache table if exists t", "UNCACHE TABLE"),
        ("create database if not exists db", "CREATE DATABASE"),
        ("describe formatted t", "DESCRIBE"),
        ("set a=1", "SET"),
        ("truncate table t", "TRUNCATE TABLE"),
    ],
)
def test_statement_kind_names_keyword_object_and_alter_action(statement: str, kind: str) -> None:
    assert statement_kind(statement) == kind


def test_prepare_counts_housekeeping_ddl_by_kind() -> None:
    prepared = prepare_query(
        "MSCK REPAIR TABLE ods.s; ANALYZE TABLE ods.s COMPUTE STATISTICS; GRANT SELECT ON TABLE ods.s TO USER bob;"
        "ALTER TABLE ods.s ADD IF NOT EXISTS PARTITION (dt='2026-01-05'); SELECT count(1) FROM ods.s"
    )
    assert prepared.without_lineage == {"MSCK REPAIR TABLE": 1, "ANALYZE TABLE": 1, "GRANT": 1}
    assert [s.sql.split(" ", 1)[0] for s in prepared.statements] == ["alter", "select"]
