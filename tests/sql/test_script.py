"""Script splitting on real-world layouts: dollar-quoted bodies, notebook cells; and what a failed statement keeps."""

from __future__ import annotations

import subprocess
import sys

import pytest

from lineage_platform.sql import extract_lineage
from lineage_platform.sql.analysis import StatementAnalysis
from lineage_platform.sql.extractor import PASSES
from lineage_platform.sql.script import split_statements


def test_a_dollar_quoted_function_body_is_one_statement_and_the_next_statement_is_analysed() -> None:
    script = """
    CREATE OR REPLACE FUNCTION shop.refresh_totals() RETURNS trigger AS $body$
    BEGIN
        DELETE FROM shop.totals WHERE day = current_date;
        INSERT INTO shop.totals SELECT current_date, sum(amount) FROM shop.sales;
        RETURN NULL;
    END;
    $body$ LANGUAGE plpgsql;
    INSERT INTO shop.archive (id, amount) SELECT id, amount FROM shop.sales;
    """
    records = extract_lineage(script, dialect="postgres")
    assert len(records) == 2
    assert not any(issue.kind == "parse" for issue in records[0].errors)
    assert records[1].operation == "INSERT"
    assert {(e.source, e.target) for e in records[1].column_edges} == {
        ("shop.sales.id", "shop.archive.id"),
        ("shop.sales.amount", "shop.archive.amount"),
    }


@pytest.mark.parametrize(
    "script",
    [
        "SELECT $1, $2 FROM @stage/f.csv; SELECT a FROM t",  # Snowflake positional columns
        "SELECT metadata$filename, x$y$z FROM t; SELECT a FROM t",  # '$' inside names
        "SELECT '${day}' AS d FROM t; SELECT a FROM t",  # a Hive variable
    ],
)
def test_a_dollar_that_opens_no_quoted_body_does_not_hide_the_semicolon(script: str) -> None:
    assert len(split_statements(script, "snowflake")) == 2


def test_an_unterminated_dollar_quote_keeps_the_rest_in_one_statement() -> None:
    pieces = split_statements("SELECT 1; DO $$ BEGIN DELETE FROM t; END;", "postgres")
    assert [p.text for p in pieces] == ["SELECT 1", "DO $$ BEGIN DELETE FROM t; END;"]


def test_databricks_notebook_cells_are_statements_without_semicolons() -> None:
    notebook = (
        "-- Databricks notebook source\n"
        "CREATE OR REPLACE TEMPORARY VIEW recent AS\n"
        "SELECT o.id, o.amount FROM shop.orders o WHERE o.day > '2024-01-01'\n"
        "\n"
        "-- COMMAND ----------\n"
        "\n"
        "-- MAGIC %md totals per order\n"
        "\n"
        "-- COMMAND ----------\n"
        "\n"
        "INSERT INTO shop.totals SELECT id, sum(amount) AS total FROM recent GROUP BY id\n"
    )
    records = extract_lineage(notebook, dialect="databricks")
    assert [r.operation for r in records] == ["CREATE_VIEW", "INSERT"]
    assert records[1].errors == ()
    assert ("shop.orders.amount", "shop.totals.total") in {
        (e.source, e.target) for e in records[1].column_edges
    }


def test_a_command_line_inside_a_statement_does_not_split_it() -> None:
    pieces = split_statements("SELECT a -- COMMAND ----------\nFROM t", "databricks")
    assert len(pieces) == 1


def _refuses(analysis: StatementAnalysis) -> StatementAnalysis:
    """A pass that cannot handle any statement (as sqlglot's qualify refusing a construct)."""
    raise ValueError("construct not handled")


def test_a_statement_no_pass_can_analyse_keeps_its_tables_and_the_script_goes_on() -> None:
    script = "INSERT OVERWRITE TABLE dw.daily SELECT k, count(1) FROM ods.events JOIN ods.users USING (k) GROUP BY k"
    [record] = extract_lineage(script, passes=(*PASSES[:1], _refuses, *PASSES[1:]))
    assert record.operation == "OTHER"
    assert [d.name for d in record.inputs] == ["ods.events", "ods.users"]
    assert [d.name for d in record.outputs] == ["dw.daily"]
    [issue] = record.errors
    assert issue.kind == "unsupported"
    assert "construct not handled" in issue.message and "table-level lineage recovered" in issue.message


def test_statements_sqlglot_keeps_as_commands_print_nothing_on_stderr() -> None:
    code = (
        "from lineage_platform.sql import extract_lineage\n"
        "records = extract_lineage('ADD JAR udf.jar; EXPLAIN SELECT a FROM t LATERAL VIEW explode(x) v AS c')\n"
        "print(len(records))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "2"
    assert done.stderr == ""
