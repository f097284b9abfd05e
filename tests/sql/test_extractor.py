"""extract_lineage over whole scripts: session state, views, errors, caching."""

from __future__ import annotations

import pytest

from lineage_platform.errors import SqlError
from lineage_platform.model import RESULT_DATASET
from lineage_platform.sql import Catalog, FunctionRule, extract_lineage, extractor

SCHEMA = {"ods": {"orders": {"id": "bigint", "uid": "bigint", "amt": "double", "dt": "string"}}}


def _strong(record) -> set[tuple[str, str]]:
    return {(e.source, e.target) for e in record.column_edges if e.strength == "strong"}


def _weak(record) -> set[tuple[str, str]]:
    return {
        (e.source, e.target.rpartition(".")[0] if e.target.count(".") > 1 else e.target)
        for e in record.column_edges
        if e.strength == "weak"
    }


def test_use_changes_the_database_of_later_statements() -> None:
    records = extract_lineage("USE ods; INSERT INTO dw.o SELECT id FROM orders", schema=SCHEMA)
    assert [r.operation for r in records] == ["USE", "INSERT"]
    assert _strong(records[1]) == {("ods.orders.id", "dw.o.id")}


def test_star_expands_from_ddl_seen_earlier_in_the_script() -> None:
    script = "CREATE TABLE db.src (a INT, b STRING); INSERT OVERWRITE TABLE db.dst SELECT * FROM db.src"
    records = extract_lineage(script)
    assert records[0].operation == "CREATE_TABLE"
    assert _strong(records[1]) == {("db.src.a", "db.dst.a"), ("db.src.b", "db.dst.b")}


def test_view_lineage_resolves_to_base_tables() -> None:
    script = """
    CREATE VIEW ods.big_orders AS SELECT id, amt FROM ods.orders WHERE amt > 100;
    INSERT INTO dw.o SELECT v.id, v.amt * 2 AS twice FROM ods.big_orders v
    """
    view, insert = extract_lineage(script, schema=SCHEMA)
    assert view.operation == "CREATE_VIEW" and view.outputs[0].kind == "view"
    assert [d.name for d in insert.inputs] == ["ods.orders"]
    assert _strong(insert) == {("ods.orders.id", "dw.o.id"), ("ods.orders.amt", "dw.o.twice")}
    assert ("ods.orders.amt", "dw.o") in _weak(insert)


def test_temporary_view_then_insert() -> None:
    script = """
    CREATE TEMPORARY VIEW recent AS SELECT uid, amt FROM ods.orders WHERE dt >= '2024-01-01';
    INSERT OVERWRITE TABLE dw.per_user SELECT uid, sum(amt) AS total FROM recent GROUP BY uid
    """
    _, insert = extract_lineage(script, schema=SCHEMA)
    assert _strong(insert) == {("ods.orders.uid", "dw.per_user.uid"), ("ods.orders.amt", "dw.per_user.total")}
    assert _weak(insert) == {("ods.orders.dt", "dw.per_user"), ("ods.orders.uid", "dw.per_user")}


def test_temporary_table_is_an_input_of_kind_temp() -> None:
    script = """
    CREATE TEMPORARY TABLE tmp AS SELECT id FROM ods.orders;
    INSERT INTO dw.o SELECT id FROM tmp
    """
    create, insert = extract_lineage(script, schema=SCHEMA, default_db="dw")
    assert create.outputs[0].kind == "temp"
    assert [(d.name, d.kind) for d in insert.inputs] == [("dw.tmp", "temp")]


def test_variables_from_set_and_arguments_are_substituted() -> None:
    script = "SET hivevar:day=2024-05-01; SELECT id FROM ods.orders WHERE dt = '${day}' AND uid = ${who}"
    records = extract_lineage(script, schema=SCHEMA, variables={"who": "7"})
    assert {(p.column, p.op, p.value) for p in records[1].predicates} == {
        ("dt", "=", "2024-05-01"),
        ("uid", "=", 7),
    }


def test_unknown_variable_stays_in_relative_date_predicate() -> None:
    [record] = extract_lineage(
        "SELECT id FROM ods.orders WHERE dt >= date_sub('${bizdate}', 20)", schema=SCHEMA
    )
    assert [(p.table, p.column, p.op, p.value) for p in record.predicates] == [
        ("ods.orders", "dt", ">=", "date_sub('${bizdate}', 20)")
    ]


def test_parse_error_is_reported_and_the_batch_goes_on() -> None:
    records = extract_lineage(
        "SELECT id FROM ods.orders;\n\nSELECT FROM WHERE (;\nSELECT uid FROM ods.orders"
    )
    assert [r.index for r in records] == [0, 1, 2]
    [issue] = records[1].errors
    assert issue.kind == "parse" and issue.statement == 1 and issue.line == 3
    assert _strong(records[2]) == {("ods.orders.uid", f"{RESULT_DATASET}.uid")}


def test_unexpandable_star_is_reported_as_unresolved() -> None:
    [record] = extract_lineage("INSERT INTO dw.o SELECT * FROM ods.unknown")
    assert [d.name for d in record.inputs] == ["ods.unknown"]
    assert any(issue.kind == "unresolved" and "*" in issue.message for issue in record.errors)


def test_ambiguous_column_without_schema_is_reported() -> None:
    [record] = extract_lineage("SELECT x FROM ods.a JOIN ods.b ON a.k = b.k")
    assert any(issue.kind == "unresolved" and "'x'" in issue.message for issue in record.errors)


def test_user_function_rule_makes_a_condition_argument_weak() -> None:
    sql = "SELECT pick(flag, a, b) AS v FROM db.t"
    default = extract_lineage(sql)[0]
    ruled = extract_lineage(sql, function_rules={"PICK": FunctionRule(condition_args=(0,))})[0]
    assert ("db.t.flag", "$result.v") in _strong(default)
    assert ("db.t.flag", "$result.v") not in _strong(ruled)
    assert any(e.source == "db.t.flag" and e.transform == "CONDITIONAL" for e in ruled.column_edges)


def test_repeated_statement_is_parsed_once_and_keeps_its_own_index() -> None:
    extractor.clear_cache()
    sql = "INSERT INTO dw.o SELECT id FROM ods.orders"
    records = extract_lineage(f"{sql};\n{sql}", schema=SCHEMA)
    assert len(extractor._cache) == 1
    assert [r.index for r in records] == [0, 1]
    assert records[0].column_edges == records[1].column_edges


def test_cached_result_is_not_reused_when_the_schema_differs() -> None:
    sql = "INSERT INTO dw.o SELECT * FROM ods.orders"
    with_schema = extract_lineage(sql, schema=SCHEMA)[0]
    without = extract_lineage(sql)[0]
    assert len(_strong(with_schema)) == 4
    assert not _strong(without)


def test_alter_rename_and_drop() -> None:
    rename, drop = extract_lineage(
        "ALTER TABLE ods.orders RENAME TO ods.orders_v2; DROP TABLE ods.orders_v2", schema=SCHEMA
    )
    assert rename.operation == "ALTER_RENAME"
    assert [d.name for d in rename.inputs] == ["ods.orders"] and rename.outputs[0].columns == (
        "id",
        "uid",
        "amt",
        "dt",
    )
    assert drop.operation == "DROP" and [d.name for d in drop.outputs] == ["ods.orders_v2"]


def test_to_dict_is_the_documented_shape() -> None:
    [record] = extract_lineage(
        "INSERT INTO dw.o SELECT md5(uid) AS h FROM ods.orders WHERE dt = '1'", schema=SCHEMA
    )
    data = record.to_dict()
    assert set(data) == {
        "index",
        "operation",
        "sql",
        "inputs",
        "outputs",
        "column_edges",
        "predicates",
        "errors",
    }
    assert data["column_edges"][0] == {
        "source": "ods.orders.uid",
        "target": "dw.o.h",
        "strength": "strong",
        "transform": "TRANSFORMATION",
        "masking": True,
        "key_path": None,
    }
    assert data["predicates"] == [{"table": "ods.orders", "column": "dt", "op": "=", "value": "1"}]


def test_view_with_a_column_list_is_read_by_its_declared_names() -> None:
    script = "CREATE VIEW ods.v (order_no, money) AS SELECT id, amt FROM ods.orders; SELECT money FROM ods.v"
    view, select = extract_lineage(script, schema=SCHEMA)
    assert view.outputs[0].columns == ("order_no", "money")
    assert _strong(select) == {("ods.orders.amt", "$result.money")}


def test_prepared_catalog_is_reused_and_never_changed_by_a_script() -> None:
    catalog = Catalog(SCHEMA)
    script = "CREATE TABLE ods.fresh (x INT); INSERT INTO dw.o SELECT * FROM ods.fresh"
    _, insert = extract_lineage(script, schema=catalog)
    assert _strong(insert) == {("ods.fresh.x", "dw.o.x")}
    assert catalog.columns_of("ods.fresh") is None
    [again] = extract_lineage("INSERT INTO dw.o SELECT * FROM ods.orders", schema=catalog)
    assert len(_strong(again)) == 4


def test_multi_insert_with_cte_join_and_lateral_view() -> None:
    script = """
    WITH big AS (SELECT id, uid, amt FROM ods.orders WHERE amt > 10)
    FROM big b JOIN ods.users u ON b.uid = u.uid LATERAL VIEW explode(u.tags) t AS tag
    INSERT OVERWRITE TABLE dw.a SELECT b.id, tag
    INSERT INTO TABLE dw.b SELECT u.uid, sum(b.amt) AS total GROUP BY u.uid
    """
    schema = {**SCHEMA, "ods": {**SCHEMA["ods"], "users": {"uid": "bigint", "tags": "array<string>"}}}
    [record] = extract_lineage(script, schema=schema)
    assert record.operation == "INSERT_OVERWRITE"
    assert [d.name for d in record.outputs] == ["dw.a", "dw.b"]
    assert _strong(record) == {
        ("ods.orders.id", "dw.a.id"),
        ("ods.users.tags", "dw.a.tag"),
        ("ods.users.uid", "dw.b.uid"),
        ("ods.orders.amt", "dw.b.total"),
    }
    assert {("ods.orders.amt", "dw.a"), ("ods.orders.uid", "dw.b"), ("ods.users.uid", "dw.b")} <= _weak(
        record
    )


def test_merge_with_update_set_star_copies_every_source_column() -> None:
    sql = (
        "MERGE INTO dw.snap t USING ods.orders s ON t.id = s.id "
        "WHEN MATCHED AND s.dt > '2024' THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    [record] = extract_lineage(sql, schema=SCHEMA)
    assert record.operation == "MERGE"
    assert _strong(record) == {(f"ods.orders.{c}", f"dw.snap.{c}") for c in ("id", "uid", "amt", "dt")}
    assert {("ods.orders.id", "dw.snap"), ("ods.orders.dt", "dw.snap")} <= _weak(record)


def test_merge_star_without_source_schema_is_unresolved() -> None:
    [record] = extract_lineage(
        "MERGE INTO dw.snap t USING ods.unknown s ON t.id = s.id WHEN MATCHED THEN UPDATE SET *"
    )
    assert [d.name for d in record.outputs] == ["dw.snap"]
    assert any(e.kind == "unresolved" and "MERGE" in e.message for e in record.errors)


def test_truncate_and_delete_write_their_table_without_errors() -> None:
    truncate, delete = extract_lineage("TRUNCATE TABLE ods.orders; DELETE FROM ods.orders WHERE dt < '2020'")
    assert [d.name for d in truncate.outputs] == [d.name for d in delete.outputs] == ["ods.orders"]
    assert not truncate.errors and not delete.errors


def test_unknown_statement_kind_is_reported_as_unsupported() -> None:
    [record] = extract_lineage("PRAGMA foo", dialect="sqlite")
    assert record.operation == "OTHER"
    assert record.errors and record.errors[0].kind in ("unsupported", "parse")


def test_generated_sql_with_long_operator_chains_is_traced() -> None:
    terms = 650
    sql = (
        "SELECT "
        + " + ".join(f"c{i}" for i in range(terms))
        + " AS s FROM db.t WHERE "
        + " AND ".join(f"w{i} > 1" for i in range(terms))
    )
    [record] = extract_lineage(sql)
    assert not record.errors
    assert sum(e.strength == "strong" for e in record.column_edges) == terms
    assert len(record.predicates) == terms


def test_names_holding_unknown_variables_keep_them_and_are_reported() -> None:
    [record] = extract_lineage(
        "INSERT OVERWRITE TABLE ${target}.t SELECT a FROM db_${env}.s WHERE dt = '${day}'"
    )
    assert _strong(record) == {("db_${env}.s.a", "${target}.t.a")}
    [issue] = record.errors
    assert issue.kind == "unresolved" and "${target}" in issue.message and "db_${env}" in issue.message
    assert record.predicates[0].value == "${day}"


def test_insert_overwrite_partition_if_not_exists() -> None:
    [record] = extract_lineage(
        "INSERT OVERWRITE TABLE dw.o PARTITION (dt='1') IF NOT EXISTS SELECT id FROM ods.orders WHERE amt > 1",
        schema=SCHEMA,
    )
    assert record.operation == "INSERT_OVERWRITE" and not record.errors
    assert _strong(record) == {("ods.orders.id", "dw.o.id")}
    assert [(p.column, p.op, p.value) for p in record.predicates] == [("amt", ">", 1)]


def test_unparseable_statement_keeps_the_tables_its_tokens_name() -> None:
    [record] = extract_lineage(
        "WITH c AS (SELECT 1) INSERT INTO TABLE dw.o SELECT ?? FROM ods.orders JOIN c ON 1 = 1"
    )
    assert record.errors[0].kind == "parse" and "table-level" in record.errors[0].message
    assert [d.name for d in record.inputs] == ["ods.orders"]
    assert [d.name for d in record.outputs] == ["dw.o"]
    assert not record.column_edges


def test_catalog_view_definitions_resolve_to_base_tables() -> None:
    catalog = Catalog(SCHEMA, views={"ods.paid": "SELECT id, amt AS paid_amt FROM ods.orders WHERE amt > 0"})
    [record] = extract_lineage("INSERT INTO dw.o SELECT id, paid_amt FROM ods.paid", schema=catalog)
    assert [d.name for d in record.inputs] == ["ods.orders"]
    assert _strong(record) == {("ods.orders.id", "dw.o.id"), ("ods.orders.amt", "dw.o.paid_amt")}
    assert ("ods.orders.amt", "dw.o") in _weak(record)


def test_misspelt_option_is_refused_with_the_accepted_names() -> None:
    with pytest.raises(SqlError) as raised:
        extract_lineage("SELECT 1", function_rule={})
    assert "function_rule" in str(raised.value) and "function_rules" in raised.value.hint


@pytest.mark.parametrize(
    ("dialect", "script", "table"),
    [
        ("trino", "USE db1.schema1; INSERT INTO o SELECT a FROM t", "db1.schema1"),
        ("snowflake", "USE SCHEMA db1.s; INSERT INTO o SELECT a FROM t", "db1.s"),
        ("snowflake", "USE DATABASE d; INSERT INTO o SELECT a FROM t", "d.public"),
        ("databricks", "USE CATALOG main; INSERT INTO o SELECT a FROM t", "main.default"),
        ("spark", "USE c.s; INSERT INTO o SELECT a FROM t", "c.s"),
        ("tsql", "USE [Sales]\nGO\nINSERT INTO o SELECT a FROM t", "sales.dbo"),
    ],
)
def test_use_catalog_schema_qualifies_later_names(dialect: str, script: str, table: str) -> None:
    [use, insert] = extract_lineage(script, dialect=dialect)
    assert use.operation == "USE"
    assert _strong(insert) == {(f"{table}.t.a", f"{table}.o.a")}


def test_tsql_use_names_the_database_two_part_names_live_in() -> None:
    script = "USE [Stage];\nINSERT INTO dbo.o SELECT a FROM etl.t;\nSELECT a FROM other.dbo.t"
    _use, insert, select = extract_lineage(script, dialect="tsql")
    assert _strong(insert) == {("stage.etl.t.a", "stage.dbo.o.a")}
    assert [d.name for d in select.inputs] == ["other.dbo.t"]


def test_use_schema_keeps_the_current_catalog_and_two_part_names_get_it() -> None:
    script = "USE cat.s1; USE s2; INSERT INTO x.o SELECT a FROM t"
    records = extract_lineage(script, dialect="trino")
    assert _strong(records[2]) == {("cat.s2.t.a", "cat.x.o.a")}


@pytest.mark.parametrize("dialect", ["snowflake", "trino", "spark", "postgres"])
def test_three_part_ctas_then_two_part_ddl_share_the_catalog(dialect: str) -> None:
    script = (
        "CREATE TABLE an.pub.daily AS SELECT a FROM raw.pub.orders;"
        "CREATE TABLE dw.x AS SELECT * FROM an.pub.daily;"
        "INSERT INTO dw.y SELECT * FROM dw.x"
    )
    records = extract_lineage(script, dialect=dialect)
    assert [r.errors for r in records] == [(), (), ()]
    assert _strong(records[1]) == {("an.pub.daily.a", "dw.x.a")}
    assert _strong(records[2]) == {("dw.x.a", "dw.y.a")}


def test_snowflake_star_expands_from_a_lower_case_schema() -> None:
    [record] = extract_lineage(
        "INSERT INTO dw.b SELECT * FROM DW.A", dialect="snowflake", schema={"dw": {"a": {"X": "int"}}}
    )
    assert _strong(record) == {("dw.a.x", "dw.b.x")}


def test_star_over_a_view_over_a_grouped_view_expands_without_schema() -> None:
    script = (
        "CREATE VIEW mv AS SELECT a, count(*) AS n FROM src.t GROUP BY a;"
        "CREATE VIEW v2 AS SELECT * FROM mv;"
        "INSERT INTO o SELECT * FROM v2"
    )
    records = extract_lineage(script, default_db="db")
    assert records[2].errors == ()
    assert _strong(records[2]) == {("src.t.a", "db.o.a")}
    assert [d.columns for d in records[2].outputs] == [("a", "n")]


@pytest.mark.parametrize(
    ("dialect", "sql", "reads", "writes"),
    [
        ("tsql", "UPDATE dbo.t SET a = s.b FROM dbo.s ?? x", ["dbo.s"], ["dbo.t"]),
        ("postgres", "DELETE FROM dw.t USING src.s WHERE ?? x", ["src.s"], ["dw.t"]),
        ("snowflake", "MERGE INTO dw.t USING src.s ON ?? x", ["src.s"], ["dw.t"]),
    ],
)
def test_unparseable_update_delete_merge_keep_their_tables(
    dialect: str, sql: str, reads: list[str], writes: list[str]
) -> None:
    [record] = extract_lineage(sql, dialect=dialect)
    assert record.errors[0].kind == "parse"
    assert [d.name for d in record.inputs] == reads
    assert [d.name for d in record.outputs] == writes


@pytest.mark.parametrize(
    "schema",
    [
        {"cat": {"ods": {"orders": {"id": "int", "amt": "int"}}}},
        {"cat.ods.orders": {"id": "int", "amt": "int"}},
    ],
)
def test_three_level_catalog_expands_star_of_three_part_names(schema: dict) -> None:
    [record] = extract_lineage(
        "INSERT INTO cat.dw.o SELECT * FROM cat.ods.orders", schema=schema, dialect="trino"
    )
    assert _strong(record) == {("cat.ods.orders.id", "cat.dw.o.id"), ("cat.ods.orders.amt", "cat.dw.o.amt")}


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        ("postgres", "GRANT SELECT ON t TO u"),
        ("postgres", "REVOKE SELECT ON t FROM u"),
        ("postgres", "COMMENT ON TABLE t IS 'x'"),
        ("bigquery", "DECLARE x INT64 DEFAULT 1"),
        ("hive", "ALTER TABLE t ADD PARTITION (dt='1')"),
    ],
)
def test_statements_without_data_give_no_lineage_and_no_error(dialect: str, sql: str) -> None:
    [record] = extract_lineage(sql, dialect=dialect)
    assert (record.inputs, record.outputs, record.column_edges, record.errors) == ((), (), (), ())


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        ("bigquery", "INSERT INTO ds.o SELECT * FROM DS.Orders"),
        ("mysql", "INSERT INTO ds.o SELECT * FROM `DS`.`Orders`"),
        ("postgres", 'INSERT INTO ds.o SELECT * FROM DS."Orders"'),
        ("snowflake", 'INSERT INTO ds.o SELECT * FROM "DS"."Orders"'),
        ("tsql", "INSERT INTO ds.o SELECT * FROM [DS].[Orders]"),
    ],
)
def test_names_find_the_lower_case_catalog_whatever_their_case_or_quoting(dialect: str, sql: str) -> None:
    [record] = extract_lineage(sql, dialect=dialect, schema={"ds": {"orders": {"id": "int", "amt": "int"}}})
    assert _strong(record) == {("ds.orders.id", "ds.o.id"), ("ds.orders.amt", "ds.o.amt")}


def test_postgres_search_path_sets_the_schema_of_later_unqualified_names() -> None:
    script = 'SET search_path TO "$user", ods, public; INSERT INTO dw.o SELECT id FROM orders'
    setting, insert = extract_lineage(script, schema=SCHEMA, dialect="postgres", default_db="public")
    assert setting.operation == "SET"
    assert [d.name for d in insert.inputs] == ["ods.orders"]
    assert _strong(insert) == {("ods.orders.id", "dw.o.id")}


def test_spark_statement_in_databricks_syntax_is_parsed_by_the_wider_dialect() -> None:
    record = extract_lineage(
        "INSERT INTO dw.o SELECT id, raw:user.tier AS tier FROM ods.ev", dialect="spark"
    )[0]
    assert not record.errors
    assert _strong(record) == {("ods.ev.id", "dw.o.id"), ("ods.ev.raw", "dw.o.tier")}
    broken = extract_lineage("SELECT FROM WHERE", dialect="hive")[0]
    assert [e.kind for e in broken.errors] == ["parse"]


def test_tsql_script_without_semicolons_and_with_go_is_split_into_its_statements() -> None:
    script = (
        "SELECT id, amt INTO #recent FROM ods.orders WHERE dt > '2024-01-01'\n"
        "INSERT INTO dw.o (id, amt)\n"
        "SELECT id, amt FROM #recent\n"
        "GO\n"
        "DELETE FROM dw.o WHERE amt < 0 garbage here\n"
    )
    records = extract_lineage(script, schema=SCHEMA, dialect="tsql")
    assert [r.operation for r in records[:2]] == ["CREATE_AS_SELECT", "INSERT"]
    assert _strong(records[0]) == {
        ("ods.orders.id", "default.recent.id"),
        ("ods.orders.amt", "default.recent.amt"),
    }
    assert _strong(records[1]) == {("default.recent.id", "dw.o.id"), ("default.recent.amt", "dw.o.amt")}
    assert [(e.kind, e.line) for e in records[2].errors] == [("parse", 5)]


def test_bigquery_declared_variable_is_no_column_but_a_real_column_wins() -> None:
    script = "DECLARE cutoff, id INT64 DEFAULT 10; INSERT INTO dw.o SELECT id, amt FROM ods.orders WHERE amt > cutoff"
    declare, insert = extract_lineage(script, schema=SCHEMA, dialect="bigquery")
    assert declare.operation == "SET" and not insert.errors
    assert _strong(insert) == {("ods.orders.id", "dw.o.id"), ("ods.orders.amt", "dw.o.amt")}
    assert _weak(insert) == {("ods.orders.amt", "dw.o")}


def test_a_column_read_through_a_qualified_star_of_an_unknown_table_reaches_that_table() -> None:
    script = (
        "CREATE TEMPORARY VIEW enriched AS\n"
        "SELECT o.*, c.region FROM ods.raw_orders o JOIN ods.raw_customers c ON o.cust = c.cust;\n"
        "INSERT INTO dw.by_region SELECT region, sum(price) AS revenue FROM enriched WHERE status = 'paid' GROUP BY region"
    )
    _view, insert = extract_lineage(script, dialect="spark")
    assert not insert.errors
    assert _strong(insert) == {
        ("ods.raw_customers.region", "dw.by_region.region"),
        ("ods.raw_orders.price", "dw.by_region.revenue"),
    }
    assert ("ods.raw_orders.status", "dw.by_region") in _weak(insert)


def test_a_column_two_qualified_stars_may_hold_is_reported_not_guessed() -> None:
    sql = "INSERT INTO dw.o SELECT price FROM (SELECT a.*, b.* FROM ods.x a JOIN ods.y b ON a.k = b.k) j"
    [record] = extract_lineage(sql, dialect="spark")
    assert not _strong(record)
    assert [e.kind for e in record.errors] == ["unresolved"] and "'price'" in record.errors[0].message


@pytest.mark.parametrize(
    "param",
    [
        "(SELECT value.int_value FROM UNNEST(params) WHERE key = 'qty')",
        "(SELECT p.value.int_value FROM UNNEST(params) AS p WHERE p.key = 'qty')",
        "(SELECT p.value.int_value FROM UNNEST(ev.params) p WHERE p.key = 'qty')",
    ],
)
def test_bigquery_field_of_an_unnested_struct_array_in_a_scalar_subquery_reaches_the_array(
    param: str,
) -> None:
    sql = f"INSERT INTO mart.qty SELECT ev.user_id, {param} AS qty FROM raw.events ev WHERE ev.kind = 'buy'"
    [record] = extract_lineage(sql, dialect="bigquery")
    assert not record.errors
    strong = {(e.source, e.target, e.key_path) for e in record.column_edges if e.strength == "strong"}
    assert strong == {
        ("raw.events.user_id", "mart.qty.user_id", None),
        ("raw.events.params", "mart.qty.qty", "$.value.int_value"),
    }
    assert ("raw.events.kind", "mart.qty") in _weak(record)


def test_bigquery_cross_join_unnest_alias_fields_are_read_from_the_array() -> None:
    sql = (
        "INSERT INTO mart.pages SELECT ev.user_id, p.value.string_value AS page "
        "FROM raw.events ev CROSS JOIN UNNEST(params) AS p WHERE p.key = 'page'"
    )
    [record] = extract_lineage(sql, dialect="bigquery")
    assert not record.errors
    assert ("raw.events.params", "mart.pages.page", "$.value.string_value") in {
        (e.source, e.target, e.key_path) for e in record.column_edges
    }
    assert ("raw.events.params", "mart.pages") in _weak(record)


def test_a_struct_field_read_without_a_table_qualifier_is_a_field_of_that_column() -> None:
    sql = "INSERT INTO dw.o SELECT o.addr.city AS city, addr.zip AS zip FROM ods.orders o"
    [record] = extract_lineage(sql, dialect="spark")
    assert not record.errors
    assert {(e.source, e.target, e.key_path) for e in record.column_edges} == {
        ("ods.orders.addr", "dw.o.city", "$.city"),
        ("ods.orders.addr", "dw.o.zip", "$.zip"),
    }


def test_a_cte_over_a_table_function_keeps_the_columns_its_reader_names_without_a_schema() -> None:
    # one source of unknown columns (FLATTEN) makes sqlglot qualify tables only; the CTE's columns must survive
    sql = (
        "CREATE TABLE mart.lines AS WITH src AS (SELECT doc_id AS id, item.value AS line "
        "FROM raw.docs, LATERAL FLATTEN(input => body:lines) AS item) SELECT id, line:sku AS sku FROM src"
    )
    [record] = extract_lineage(sql, dialect="snowflake")
    assert not record.errors
    assert {(e.source, e.target, e.key_path) for e in record.column_edges} == {
        ("raw.docs.doc_id", "mart.lines.id", None),
        ("raw.docs.body", "mart.lines.sku", "$.lines.sku"),
    }


def test_table_flatten_has_flattens_columns_so_bare_columns_come_from_the_other_source() -> None:
    # TABLE(FLATTEN(…)) without LATERAL (dbt-generated Snowflake): its columns are FLATTEN's fixed six
    sql = (
        "CREATE TABLE mart.tags AS SELECT post_id, to_varchar(t.value) AS tag, t.index AS pos, seq AS n "
        "FROM raw.posts AS p CROSS JOIN TABLE(FLATTEN(tags)) AS t WHERE tags IS NOT NULL"
    )
    [record] = extract_lineage(sql, dialect="snowflake")
    assert not record.errors
    assert _strong(record) == {
        ("raw.posts.post_id", "mart.tags.post_id"),
        ("raw.posts.tags", "mart.tags.tag"),
        ("raw.posts.tags", "mart.tags.pos"),
    }
    assert _weak(record) == {("raw.posts.tags", "mart.tags")}


def test_a_star_over_ctes_that_name_their_columns_is_written_out_without_a_schema() -> None:
    script = (
        "CREATE TABLE mart.lines AS WITH src AS (SELECT doc_id AS id, item.value AS line "
        "FROM raw.docs, LATERAL FLATTEN(input => body:lines) AS item), "
        "typed AS (SELECT id, line:qty::INT AS qty, seq_lines.NEXTVAL AS line_no FROM src) SELECT * FROM typed;\n"
        "INSERT INTO mart.totals SELECT * FROM mart.lines"
    )
    ctas, insert = extract_lineage(script, dialect="snowflake")
    assert not ctas.errors
    assert ctas.outputs[0].columns == ("id", "qty", "line_no")
    assert _strong(ctas) == {("raw.docs.doc_id", "mart.lines.id"), ("raw.docs.body", "mart.lines.qty")}
    assert _strong(insert) == {
        ("mart.lines.id", "mart.totals.id"),
        ("mart.lines.qty", "mart.totals.qty"),
        ("mart.lines.line_no", "mart.totals.line_no"),
    }


def test_merge_star_actions_copy_the_target_columns_by_name_when_only_the_target_is_known() -> None:
    script = (
        "CREATE TABLE silver.orders (order_id STRING, amount DECIMAL(10, 2), status STRING) USING DELTA;\n"
        "MERGE INTO silver.orders t USING staged_batch s ON t.order_id = s.order_id\n"
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    _ddl, merge = extract_lineage(script, dialect="databricks")
    assert not merge.errors
    assert _strong(merge) == {
        ("default.staged_batch.order_id", "silver.orders.order_id"),
        ("default.staged_batch.amount", "silver.orders.amount"),
        ("default.staged_batch.status", "silver.orders.status"),
    }


def test_delta_live_tables_stream_and_live_reads_reach_the_pipelines_own_datasets() -> None:
    script = (
        "CREATE OR REFRESH STREAMING TABLE raw_orders AS SELECT id, body FROM STREAM read_files('/landing/orders');\n"
        "CREATE OR REFRESH STREAMING TABLE orders AS SELECT o.id, o.body:total AS total, c.region "
        "FROM STREAM(LIVE.raw_orders) AS o JOIN LIVE.customers c ON c.id = o.id"
    )
    _bronze, silver = extract_lineage(script, dialect="databricks", default_db="sales")
    assert [d.name for d in silver.inputs] == ["sales.raw_orders", "sales.customers"]
    assert _strong(silver) == {
        ("sales.raw_orders.id", "sales.orders.id"),
        ("sales.raw_orders.body", "sales.orders.total"),
        ("sales.customers.region", "sales.orders.region"),
    }


def test_after_use_of_an_unset_variable_database_every_unqualified_table_lands_in_it() -> None:
    script = "USE ${hivevar:target_db};\nINSERT OVERWRITE TABLE daily SELECT s.id, x.v FROM staged s JOIN ${src} x ON s.id = x.id"
    _use, insert = extract_lineage(script)
    assert [d.name for d in insert.inputs] == ["${hivevar:target_db}.staged", "${hivevar:target_db}.${src}"]
    assert [d.name for d in insert.outputs] == ["${hivevar:target_db}.daily"]
    assert ("${hivevar:target_db}.${src}.v", "${hivevar:target_db}.daily.v") in _strong(insert)


def test_a_tsql_temp_table_read_with_a_schema_prefix_is_the_same_temp_table() -> None:
    script = (
        "SELECT id, name INTO #staged FROM src.people WHERE active = 1\n"
        "MERGE INTO dbo.people AS t USING dbo.#staged AS s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET t.name = s.name;"
    )
    _into, merge = extract_lineage(script, dialect="tsql")
    assert "default.staged" in [d.name for d in merge.inputs]
    assert ("default.staged.name", "dbo.people.name") in _strong(merge)


def test_regex_column_reads_every_column_but_the_excluded_partition() -> None:
    script = """
    SET hive.support.quoted.identifiers=none;
    CREATE TABLE stage.visits (vid BIGINT, page STRING, ymd STRING);
    CREATE TABLE base.visits (vid BIGINT, page_name STRING) PARTITIONED BY (ymd STRING);
    INSERT OVERWRITE TABLE base.visits PARTITION (ymd = '${run_day}')
    SELECT `(ymd)?+.+` FROM stage.visits WHERE ymd = '${run_day}';
    """
    record = extract_lineage(script)[-1]
    assert _strong(record) == {
        ("stage.visits.vid", "base.visits.vid"),
        ("stage.visits.page", "base.visits.page_name"),
    }
    assert _weak(record) == {("stage.visits.ymd", "base.visits")}


def test_regex_column_over_an_unknown_table_is_reported_not_taken_for_a_column() -> None:
    record = extract_lineage("INSERT OVERWRITE TABLE b.t SELECT `(dt)?+.+` FROM a.s WHERE dt = '1'")[0]
    assert [d.name for d in record.inputs] == ["a.s"]
    assert not _strong(record)
    assert any("'*' could not be expanded" in issue.message for issue in record.errors)


def test_shell_variable_database_is_kept_and_reported_not_replaced_by_the_default() -> None:
    script = (
        "INSERT OVERWRITE TABLE $WH.dwd_clicks SELECT uid FROM $WH.ods_clicks c JOIN $users u ON c.uid = u.id"
    )
    record = extract_lineage(script, default_db="other")[0]
    assert [d.name for d in record.inputs] == ["$wh.ods_clicks", "other.$users"]
    assert [d.name for d in record.outputs] == ["$wh.dwd_clicks"]
    assert any("$WH" in issue.message and "--var" in issue.message for issue in record.errors)


def test_shell_variable_takes_a_value_given_for_it() -> None:
    script = "INSERT OVERWRITE TABLE $WH.dwd_clicks SELECT uid FROM $WH.ods_clicks WHERE dt = '$day'"
    record = extract_lineage(script, variables={"WH": "mall", "day": "2024-03-01"})[0]
    assert _strong(record) == {("mall.ods_clicks.uid", "mall.dwd_clicks.uid")}
    assert not record.errors
    assert [(p.column, p.value) for p in record.predicates] == [("dt", "2024-03-01")]


def test_dollar_names_outside_shell_dialects_are_left_to_the_dialect() -> None:
    record = extract_lineage("SELECT $1 AS a FROM t", dialect="postgres", default_db="db")[0]
    assert [d.name for d in record.inputs] == ["db.t"]
    assert not record.errors


def test_ctas_over_a_lateral_view_sharing_its_table_alias_keeps_its_output_and_column_lineage() -> None:
    script = (
        "CREATE TABLE rpt.tag_users AS SELECT tag, count(uid) AS users "
        "FROM ods.profiles LATERAL VIEW explode(tags) profiles AS tag GROUP BY tag"
    )
    record = extract_lineage(script)[0]
    assert record.operation == "CREATE_AS_SELECT"
    assert [d.name for d in record.outputs] == ["rpt.tag_users"]
    assert _strong(record) == {
        ("ods.profiles.tags", "rpt.tag_users.tag"),
        ("ods.profiles.uid", "rpt.tag_users.users"),
    }
    assert _weak(record) == {("ods.profiles.tags", "rpt.tag_users")}
    assert not record.errors


def test_shell_quotes_around_a_variable_in_a_table_name_are_dropped_as_the_shell_does() -> None:
    script = (
        'LOAD DATA INPATH \'/origin/$APP/orders/"$day"\' OVERWRITE INTO TABLE "$APP".ods_orders;\n'
        'INSERT OVERWRITE TABLE $APP"".dwd_orders SELECT id FROM "$APP".ods_orders'
    )
    load, insert = extract_lineage(script, variables={"APP": "mall"})
    assert [d.name for d in load.inputs] == ['/origin/mall/orders/"$day"']
    assert [d.name for d in load.outputs] == ["mall.ods_orders"]
    assert _strong(insert) == {("mall.ods_orders.id", "mall.dwd_orders.id")}


def test_scheduler_placeholders_are_variables() -> None:
    script = (
        "INSERT OVERWRITE TABLE {{ params.mart }}.daily PARTITION (ds = '{{ ds }}') "
        "SELECT uid, amt FROM ods.pay WHERE ds = #{run_day} AND amt > 0"
    )
    unknown = extract_lineage(script)[0]
    assert [d.name for d in unknown.outputs] == ["${params.mart}.daily"]
    assert _strong(unknown) == {
        ("ods.pay.uid", "${params.mart}.daily.uid"),
        ("ods.pay.amt", "${params.mart}.daily.amt"),
    }
    assert any("${params.mart}" in issue.message for issue in unknown.errors)
    known = extract_lineage(script, variables={"params.mart": "mart", "run_day": "'2024-03-01'"})[0]
    assert [d.name for d in known.outputs] == ["mart.daily"]
    assert _weak(known) == {("ods.pay.ds", "mart.daily"), ("ods.pay.amt", "mart.daily")}
    assert not known.errors


def test_a_table_functions_argument_never_reads_that_functions_own_columns() -> None:
    # dbt-sqlserver flattening: the inner OPENJSON([value]) reads the value of the OPENJSON around it
    sql = (
        "CREATE VIEW stage.v_items AS SELECT o.id, items.[value] AS item FROM raw.orders AS o "
        "CROSS APPLY (SELECT [value] = CASE WHEN [type] = 4 THEN (SELECT [value] FROM OPENJSON([value])) "
        "ELSE [value] END FROM OPENJSON(o.payload)) AS items"
    )
    [record] = extract_lineage(sql, dialect="tsql")
    assert not record.errors
    assert _strong(record) == {
        ("raw.orders.id", "stage.v_items.id"),
        ("raw.orders.payload", "stage.v_items.item"),
    }
    assert _weak(record) == {("raw.orders.payload", "stage.v_items")}


def test_group_by_all_groups_by_every_select_expression_without_an_aggregate() -> None:
    sql = (
        "INSERT INTO mart.daily (shop, day, revenue, label, rank_in_shop) "
        "SELECT s.shop_id, DATE_TRUNC('day', s.sold_at), SUM(s.amount), 'sales', "
        "RANK() OVER (ORDER BY SUM(s.amount)) FROM raw.sales AS s GROUP BY ALL"
    )
    [record] = extract_lineage(sql, dialect="snowflake")
    grouped = {e.source for e in record.column_edges if e.transform == "GROUP_BY"}
    assert grouped == {"raw.sales.shop_id", "raw.sales.sold_at"}
    assert ("raw.sales.amount", "mart.daily.revenue") in _strong(record)


def test_a_schema_qualified_function_call_reads_its_arguments() -> None:
    # Snowflake UDFs named db.schema.fn, T-SQL scalar functions dbo.fn: the qualifier is a namespace
    [snowflake] = extract_lineage(
        "CREATE TABLE mart.t AS SELECT util.public.clean_title(s.titles) AS title FROM raw.s AS s "
        "WHERE util.public.clean_title(s.kind) = 'show'",
        dialect="snowflake",
    )
    assert _strong(snowflake) == {("raw.s.titles", "mart.t.title")}
    assert _weak(snowflake) == {("raw.s.kind", "mart.t")}
    [tsql] = extract_lineage(
        "INSERT INTO dbo.out (v) SELECT dbo.fn_norm(a.x, a.y) FROM dbo.src a", dialect="tsql"
    )
    assert _strong(tsql) == {("dbo.src.x", "dbo.out.v"), ("dbo.src.y", "dbo.out.v")}
