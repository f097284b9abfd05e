"""Adversarial masking tests: try to leak ``ssn`` and ``email`` and run the rewritten SQL on DuckDB.

Policy: ``ssn`` shows only its last 4 characters (a partial rule), ``email`` is hashed, ``birth`` keeps only
the year. A leak is any output cell containing a full SSN or the hidden part (the first five digits, also
reversed, without the dash or translated into letters), or a full e-mail address.
"""

from __future__ import annotations

import re

import duckdb
import pytest

from lineage_platform.errors import SecurityError
from lineage_platform.security.duckdb_masks import install_mask_functions, to_duckdb
from lineage_platform.security.masking import mask_query
from lineage_platform.security.masking_rules import MaskingPolicy, MaskRule
from lineage_platform.security.sample_warehouse import SAMPLE_SCHEMA

POLICY = MaskingPolicy(
    {
        "sales.customers.ssn": MaskRule("show_last", 4),
        "sales.customers.email": MaskRule("hash"),
        "sales.customers.birth": MaskRule("year"),
    }
)
ANALYST = {"user:ann", "role:analyst"}

ATTACKS = {
    "alias": "SELECT ssn AS x, email AS y FROM sales.customers",
    "cte": "WITH c AS (SELECT ssn AS s, email AS e FROM sales.customers) SELECT s, e FROM c",
    "subquery": "SELECT q.s FROM (SELECT id, ssn AS s FROM sales.customers) q WHERE q.id > 3",
    "union": "SELECT name FROM sales.customers UNION ALL SELECT ssn FROM sales.customers",
    "star": "SELECT * FROM sales.customers",
    "concat": "SELECT concat('id:', ssn, '/', email) AS v FROM sales.customers",
    "substr": "SELECT substr(ssn, 1, 6) AS p FROM sales.customers",
    "cast": "SELECT CAST(ssn AS STRING) AS v FROM sales.customers",
    "arithmetic": "SELECT CAST(regexp_replace(ssn, '-', '') AS BIGINT) + 0 AS v FROM sales.customers",
    "aggregates": "SELECT region, max(ssn) AS hi, min(ssn) AS lo, collect_list(ssn) AS everyone "
    "FROM sales.customers GROUP BY region",
    "window": "SELECT id, first_value(ssn) OVER (PARTITION BY region ORDER BY id) AS f FROM sales.customers",
    "lateral_view": "SELECT x FROM sales.customers LATERAL VIEW explode(array(ssn, email)) t AS x",
    "self_join": "SELECT a.name, b.ssn FROM sales.customers a JOIN sales.customers b ON a.ssn = b.ssn",
    "unknown_functions": "SELECT reverse(ssn) AS r, translate(ssn, '0123456789', 'abcdefghij') AS t, "
    "upper(email) AS u FROM sales.customers",
    "conditional": "SELECT id, CASE WHEN ssn LIKE '1%' THEN 'one' ELSE 'other' END AS first_digit "
    "FROM sales.customers",
}


INFERENCE_ONLY = {"conditional"}
"""Attacks whose raw output holds no plaintext, only facts about it (here: the first digit)."""
_HASH = re.compile(r"[0-9a-f]{64}")


def _secrets(warehouse) -> list[str]:
    secrets = []
    for ssn, email in warehouse.execute("SELECT ssn, email FROM sales.customers").fetchall():
        hidden = ssn[:6]
        digits = hidden.replace("-", "")
        secrets += [ssn, email, email.upper(), hidden, digits, hidden[::-1], ssn[::-1]]
        secrets.append(hidden.translate(str.maketrans("0123456789", "abcdefghij")))
    return secrets


def _leaks(warehouse, sql: str) -> list[str]:
    secrets = _secrets(warehouse)
    cells = [str(cell) for row in warehouse.execute(to_duckdb(sql)).fetchall() for cell in row]
    # a hash is opaque: digits inside its hex text are not plaintext
    readable = [_HASH.sub("#", cell) for cell in cells]
    return [s for s in secrets for cell in readable if s in cell]


@pytest.mark.parametrize("mode", ["before", "after"])
@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_no_sensitive_plaintext_reaches_the_output(warehouse, name: str, mode: str) -> None:
    sql = ATTACKS[name]
    if name not in INFERENCE_ONLY:
        assert _leaks(warehouse, sql), f"attack {name!r} should leak without masking (test data check)"
    rewritten = mask_query(sql, ANALYST, POLICY, mode, schema=SAMPLE_SCHEMA).sql
    assert rewritten != sql
    assert _leaks(warehouse, rewritten) == []


def test_after_mode_wraps_only_outputs_fed_by_sensitive_columns() -> None:
    masked = mask_query(
        "SELECT c.name, o.amount, c.ssn FROM sales.customers c JOIN sales.orders o ON c.ssn = o.status",
        ANALYST,
        POLICY,
        "after",
        schema=SAMPLE_SCHEMA,
    )
    assert masked.masked == (("ssn", "show_last"),)
    assert "ON c.ssn = o.status" in masked.sql  # the join still computes on real values


def test_a_filter_on_the_sensitive_column_is_inference_only_after_and_stopped_before(warehouse) -> None:
    sql = "SELECT name FROM sales.customers WHERE ssn LIKE '1%'"
    truth = warehouse.execute(to_duckdb(sql)).fetchall()
    assert truth
    after = mask_query(sql, ANALYST, POLICY, "after", schema=SAMPLE_SCHEMA).sql
    before = mask_query(sql, ANALYST, POLICY, "before", schema=SAMPLE_SCHEMA).sql
    assert warehouse.execute(to_duckdb(after)).fetchall() == truth  # rows reveal the first digit
    assert warehouse.execute(to_duckdb(before)).fetchall() == []  # the filter sees 'nnn-nn-1234'


def test_rebuilding_the_value_character_by_character(warehouse) -> None:
    sql = "SELECT substr(ssn, {k}, 1) AS ch, count(*) AS n FROM sales.customers GROUP BY substr(ssn, {k}, 1)"
    for k in range(1, 7):
        before = mask_query(sql.format(k=k), ANALYST, POLICY, "before", schema=SAMPLE_SCHEMA).sql
        characters = {row[0] for row in warehouse.execute(to_duckdb(before)).fetchall()}
        assert characters <= {"n", "-"}
        after = mask_query(sql.format(k=k), ANALYST, POLICY, "after", schema=SAMPLE_SCHEMA).sql
        hashed = {row[0] for row in warehouse.execute(to_duckdb(after)).fetchall()}
        assert all(
            len(value) == 64 for value in hashed
        )  # hashed, though a dictionary of 11 characters reverses it


def test_year_only_dates(warehouse) -> None:
    sql = mask_query("SELECT birth FROM sales.customers", ANALYST, POLICY, "before", schema=SAMPLE_SCHEMA).sql
    dates = [row[0] for row in warehouse.execute(to_duckdb(sql)).fetchall()]
    assert dates and all((d.month, d.day) == (1, 1) for d in dates)


def test_custom_and_nullify_rules_run(warehouse) -> None:
    policy = MaskingPolicy(
        {
            "sales.customers.ssn": MaskRule("custom", expression="concat('***', substr({col}, -2))"),
            "sales.customers.email": MaskRule("nullify"),
        }
    )
    sql = mask_query("SELECT ssn, email FROM sales.customers", ANALYST, policy, "after", schema=SAMPLE_SCHEMA)
    rows = warehouse.execute(to_duckdb(sql.sql)).fetchall()
    assert all(ssn.startswith("***") and len(ssn) == 5 and email is None for ssn, email in rows)


def test_unmasked_principals_get_the_query_unchanged() -> None:
    policy = MaskingPolicy(POLICY.column_rules, unmasked=frozenset({"role:security"}))
    sql = "SELECT ssn FROM sales.customers"
    assert mask_query(sql, {"user:sam", "role:security"}, policy, "after").sql == sql


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT ssn FROM sales.customers WHERE",  # does not parse
        "SELECT nosuch FROM sales.customers",  # cannot be traced
        "INSERT INTO sales.x SELECT ssn FROM sales.customers",  # not a query result
    ],
)
def test_rewrite_failures_deny_instead_of_returning_the_original(sql: str) -> None:
    with pytest.raises(SecurityError, match=r"denied|masking rewrites"):
        mask_query(sql, ANALYST, POLICY, "after", schema=SAMPLE_SCHEMA)


def test_before_mode_needs_the_schema_of_sensitive_tables() -> None:
    with pytest.raises(SecurityError, match="schema is unknown"):
        mask_query("SELECT ssn FROM sales.customers", ANALYST, POLICY, "before")


def test_a_udf_no_rule_knows_is_still_traced_and_wrapped() -> None:
    sql = "SELECT my_decode(reflect('java.lang.String', 'valueOf', ssn)) AS v, name FROM sales.customers"
    masked = mask_query(sql, ANALYST, POLICY, "after", schema=SAMPLE_SCHEMA)
    assert masked.masked == (("v", "hash"),)  # show_last on an unknown expression is raised to hash
    assert "MASK_HASH(MY_DECODE(" in masked.sql.upper()


@pytest.mark.parametrize("mode", ["before", "after"])
def test_reserved_word_columns_stay_quoted(mode: str) -> None:
    connection = duckdb.connect()
    install_mask_functions(connection)
    connection.execute('CREATE SCHEMA db; CREATE TABLE db.t ("date" DATE, "order" VARCHAR, ssn VARCHAR)')
    connection.execute("INSERT INTO db.t VALUES (DATE '1990-05-17', 'o1', '123-45-6789')")
    schema = {"db": {"t": {"date": "date", "order": "string", "ssn": "string"}}}
    policy = MaskingPolicy({"db.t.date": MaskRule("year"), "db.t.ssn": MaskRule("hash")})
    sql = mask_query("SELECT `date`, `order`, ssn FROM db.t", ANALYST, policy, mode, schema=schema).sql
    [(day, order, ssn)] = connection.execute(to_duckdb(sql)).fetchall()
    assert (str(day), order, len(ssn)) == ("1990-01-01", "o1", 64)
