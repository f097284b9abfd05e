"""Adversarial masking tests: the attack suite of ``tools.security.masking_attacks`` on DuckDB and Spark SQL.

Every attack runs in both modes against a real and a perturbed copy of the sample warehouse
(``masking_worlds``): the outcome (stopped, refused, inference) must be the one the suite declares, and the
unmasked query must tell the copies apart (else it would not be an attack).
"""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb
import pytest

from lineage_platform.errors import SecurityError
from lineage_platform.security.duckdb_masks import install_mask_functions, to_duckdb
from lineage_platform.security.masking import mask_query
from lineage_platform.security.masking_rules import MaskingPolicy, MaskRule
from tools.security.masking_attacks import ATTACK_POLICY, ATTACKS, attack_table
from tools.security.readme import README, with_section
from tools.security.sample_warehouse import SAMPLE_SCHEMA

sys.path.insert(0, str(Path(__file__).parent))
from masking_worlds import Worlds, duckdb_worlds, spark_worlds

POLICY = ATTACK_POLICY
ANALYST = {"user:ann", "role:analyst"}
BY_NAME = {attack.name: attack for attack in ATTACKS}


@pytest.fixture(scope="module", params=["duckdb", pytest.param("spark", marks=pytest.mark.slow)])
def worlds(request: pytest.FixtureRequest) -> Worlds:
    """The real and the perturbed warehouse on one engine."""
    if request.param == "duckdb":
        return duckdb_worlds()
    return spark_worlds(request.getfixturevalue("spark"))


def test_the_suite_is_large_and_covers_every_outcome() -> None:
    assert len(ATTACKS) >= 40 and len(BY_NAME) == len(ATTACKS)
    assert {a.after for a in ATTACKS} == {"stopped", "refused", "inference"}


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_each_attack_learns_something_without_masking(worlds: Worlds, name: str) -> None:
    assert worlds.differ(BY_NAME[name].sql.format(**worlds.guesses))


@pytest.mark.parametrize("mode", ["before", "after"])
@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_each_attack_has_its_declared_outcome(worlds: Worlds, name: str, mode: str) -> None:
    attack = BY_NAME[name]
    sql = attack.sql.format(**worlds.guesses)
    try:
        masked = mask_query(sql, ANALYST, POLICY, mode, schema=SAMPLE_SCHEMA).sql
    except SecurityError as error:
        assert getattr(attack, mode) == "refused", error.message
        assert "sales.customers." in error.message and "denied" in error.message
        return
    assert masked != sql
    outcome = "inference" if worlds.differ(masked) else "stopped"
    assert outcome == getattr(attack, mode), masked


def test_the_readme_table_is_generated_from_the_suite() -> None:
    text = README.read_text()
    assert with_section(text, "attack table", attack_table()) == text, "run python -m tools.security.readme"


def test_the_union_oracle_of_issue_20_is_refused_naming_column_and_construct(warehouse) -> None:
    """``UNION`` de-duplicated raw values before the outer mask: 1 row fewer when the guess exists."""
    guess = warehouse.execute("SELECT ssn FROM sales.customers WHERE id = 1").fetchone()[0]
    sql = f"SELECT ssn AS v FROM sales.customers UNION SELECT '{guess}'"
    with pytest.raises(SecurityError, match=r"UNION over sensitive column sales\.customers\.ssn"):
        mask_query(sql, ANALYST, POLICY, "after", schema=SAMPLE_SCHEMA)
    before = mask_query(sql, ANALYST, POLICY, "before", schema=SAMPLE_SCHEMA).sql
    masked_values = "SELECT count(DISTINCT mask_show_last_n(ssn, 4)) FROM sales.customers"
    # before: the guess is compared with masked values, never equal to one: always one extra row
    assert (
        len(warehouse.execute(to_duckdb(before)).fetchall())
        == warehouse.execute(masked_values).fetchone()[0] + 1
    )


@pytest.mark.parametrize(
    "expression",
    [
        "length(email)",
        "substr(ssn, 1, 7)",
        "CAST(regexp_replace(ssn, '-', '') AS BIGINT) DIV 10000",
        "regexp_extract(email, '@(.*)', 1)",
    ],
)
def test_after_mode_outputs_null_for_values_derived_from_a_masked_column(warehouse, expression: str) -> None:
    sql = f"SELECT id, {expression} AS v FROM sales.customers"
    masked = mask_query(sql, ANALYST, POLICY, "after", schema=SAMPLE_SCHEMA)
    assert masked.masked == (("v", "nullify"),)
    assert {row[1] for row in warehouse.execute(to_duckdb(masked.sql)).fetchall()} == {None}


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
        with pytest.raises(SecurityError, match=r"GROUP BY over sensitive column sales\.customers\.ssn"):
            mask_query(sql.format(k=k), ANALYST, POLICY, "after", schema=SAMPLE_SCHEMA)


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
    assert masked.masked == (("v", "nullify"),)  # a value computed from ssn is not ssn: no rule shows it
    assert masked.sql.startswith("SELECT NULL AS `v`")


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
