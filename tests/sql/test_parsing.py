"""Statements sqlglot only half understands: none may lose its lineage without an issue saying so."""

from __future__ import annotations

import pytest

from lineage_platform.sql import extract_lineage
from lineage_platform.sql.parsing import StatementParseError, parse_statement


def test_maxcompute_lifecycle_tables_keep_their_columns_and_lineage() -> None:
    script = (
        "CREATE TABLE dw.visits (uid STRING, pages BIGINT) PARTITIONED BY (ds STRING) LIFECYCLE 30;\n"
        "CREATE TABLE dw.heavy LIFECYCLE 7 AS SELECT uid, pages * 2 AS weight FROM dw.visits WHERE pages > 10;\n"
        "INSERT OVERWRITE TABLE dw.visits PARTITION (ds) SELECT * FROM ods.raw_visits"
    )
    ddl, ctas, insert = extract_lineage(
        script, dialect="hive", schema={"ods": {"raw_visits": {"u": "string"}}}
    )
    assert ddl.operation == "CREATE_TABLE" and not ddl.errors
    assert [(d.name, d.columns) for d in ddl.outputs] == [("dw.visits", ("uid", "pages", "ds"))]
    assert ctas.operation == "CREATE_AS_SELECT" and not ctas.errors
    assert {(e.source, e.target) for e in ctas.column_edges if e.strength == "strong"} == {
        ("dw.visits.uid", "dw.heavy.uid"),
        ("dw.visits.pages", "dw.heavy.weight"),
    }
    assert insert.outputs[0].columns == ("uid", "pages", "ds")


def test_a_data_statement_sqlglot_keeps_as_text_is_a_parse_issue_with_its_tables() -> None:
    sql = "CREATE TABLE dw.t (a STRING) SOME_VENDOR_OPTION 'x' AS SELECT a FROM ods.s"
    [record] = extract_lineage(sql, dialect="hive")
    assert record.operation == "OTHER"
    assert [d.name for d in record.outputs] == ["dw.t"] and [d.name for d in record.inputs] == ["ods.s"]
    [issue] = record.errors
    assert issue.kind == "parse" and "kept it as text" in issue.message


def test_commands_that_move_no_data_stay_quiet() -> None:
    script = (
        "ADD JAR hdfs:///udf/x.jar; CREATE TEMPORARY FUNCTION f AS 'a.b.F'; MSCK REPAIR TABLE dw.t; "
        "EXPLAIN SELECT a FROM dw.t"
    )
    records = extract_lineage(script, dialect="hive")
    assert [r.errors for r in records] == [(), (), (), ()]
    assert not any(r.outputs for r in records)


def test_snowflake_list_stage_is_not_reported() -> None:
    records = extract_lineage("LIST @raw_stage; LIST @~", dialect="snowflake")
    assert [r.errors for r in records] == [(), ()]


def test_postgres_materialized_view_created_with_no_data_keeps_its_lineage() -> None:
    sql = (
        "CREATE MATERIALIZED VIEW mart.daily AS SELECT o.day, sum(o.amount) AS total FROM core.orders o "
        "GROUP BY o.day WITH NO DATA"
    )
    [record] = extract_lineage(sql, dialect="postgres")
    assert record.operation == "CREATE_VIEW" and not record.errors
    assert {(e.source, e.target) for e in record.column_edges if e.strength == "strong"} == {
        ("core.orders.day", "mart.daily.day"),
        ("core.orders.amount", "mart.daily.total"),
    }


def test_transaction_control_is_quiet_and_a_do_block_says_its_body_is_not_analysed() -> None:
    script = "BEGIN; UPDATE core.t SET a = 1; COMMIT; ROLLBACK; DO $$ BEGIN DELETE FROM core.t; END $$"
    begin, update, commit, rollback, block = extract_lineage(script, dialect="postgres")
    assert (begin.errors, commit.errors, rollback.errors) == ((), (), ())
    assert update.operation == "UPDATE"
    [issue] = block.errors
    assert issue.kind == "unsupported" and "DO block" in issue.message


def test_a_load_that_does_not_parse_still_names_the_table_it_loads() -> None:
    sql = "LOAD DATA LOCAL INPATH '/data/day.csv' INTO TABLE ods.daily PARTITIONED (dt = '2024-01-01')"
    [record] = extract_lineage(sql, dialect="hive")
    assert [e.kind for e in record.errors] == ["parse"]
    assert [d.name for d in record.outputs] == ["ods.daily"]


def test_a_statement_that_breaks_sqlglots_parser_is_a_parse_issue_not_an_exception() -> None:
    # T-SQL reads DATEDIFF's first argument as a unit name; a parameter there makes sqlglot raise ValueError
    with pytest.raises(StatementParseError, match="sqlglot could not parse"):
        parse_statement("SELECT datediff(${day}, d) AS n FROM dbo.t", "tsql")


@pytest.mark.parametrize("dialect", ["tsql", "trino", "snowflake", "postgres"])
def test_an_unknown_variable_in_a_value_position_is_a_string_outside_hive(dialect: str) -> None:
    # Trino read `${day}` as a column `day`, Snowflake / Postgres could not parse it
    script = "INSERT INTO mart.t (n) SELECT coalesce(d, ${day}) FROM stage.s WHERE k = ${key}; SELECT a FROM stage.u"
    insert, select = extract_lineage(script, dialect=dialect)
    assert insert.operation == "INSERT" and not insert.errors
    assert _edges(insert) == {("stage.s.d", "mart.t.n", "strong"), ("stage.s.k", "mart.t", "weak")}
    assert select.operation == "SELECT" and not select.errors


def test_a_name_holding_an_unknown_variable_is_quoted_the_dialects_way() -> None:
    # a JinjaSQL template (`{{ schema | sqlsafe }}`) rendered without its values, run as Trino
    [record] = extract_lineage(
        "INSERT INTO hive.{{ schema | sqlsafe }}.daily SELECT cost FROM hive.{{schema}}.raw WHERE year = {{year}}",
        dialect="trino",
    )
    assert record.operation == "INSERT"
    assert ("hive.${schema}.raw.cost", "hive.${schema}.daily.cost", "strong") in _edges(record)
    assert [e.kind for e in record.errors] == ["unresolved"]  # the names holding ${schema}, reported


def _edges(record) -> set[tuple[str, str, str]]:
    return {(e.source, e.target, e.strength) for e in record.column_edges}


def test_dynamic_sql_in_one_string_literal_is_the_statement_inside() -> None:
    # dbt-sqlserver creates its views through EXEC('…'), quotes inside doubled
    script = (
        "EXEC('CREATE VIEW stage.v_fx AS SELECT ccy, rate * 100 AS pct FROM raw.fx WHERE src = ''ecb''');\n"
        "EXEC sp_executesql N'INSERT INTO mart.fx (ccy, pct) SELECT ccy, pct FROM stage.v_fx'"
    )
    view, insert = extract_lineage(script, dialect="tsql")
    assert (view.operation, insert.operation) == ("CREATE_VIEW", "INSERT")
    assert not view.errors and not insert.errors
    assert _edges(insert) == {
        ("raw.fx.ccy", "mart.fx.ccy", "strong"),
        ("raw.fx.rate", "mart.fx.pct", "strong"),
        ("raw.fx.src", "mart.fx", "weak"),
    }
    [immediate] = extract_lineage(
        "EXECUTE IMMEDIATE 'INSERT INTO mart.n SELECT id FROM raw.n WHERE k = ''a'''", dialect="snowflake"
    )
    assert _edges(immediate) == {("raw.n.id", "mart.n.id", "strong"), ("raw.n.k", "mart.n", "weak")}


def test_a_string_built_at_run_time_stays_an_unanalysed_command() -> None:
    [record] = extract_lineage("EXEC('INSERT INTO mart.n SELECT id FROM ' + @source)", dialect="tsql")
    assert record.operation == "OTHER" and not record.column_edges


def test_tsql_output_into_a_column_list_keeps_the_statement_analysed() -> None:
    sql = (
        "MERGE INTO dbo.topic AS t USING stage.topic AS s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET t.name = s.name "
        "WHEN NOT MATCHED BY TARGET THEN INSERT (id, name) VALUES (s.id, s.name) "
        "OUTPUT inserted.id, $action INTO @changes (id, act);"
    )
    [record] = extract_lineage(sql, dialect="tsql")
    assert record.operation == "MERGE" and not record.errors
    assert ("stage.topic.name", "dbo.topic.name", "strong") in _edges(record)
