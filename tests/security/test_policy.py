"""Grants, the policy file and `check_access`."""

from __future__ import annotations

import pytest

from lineage_platform.errors import SecurityError
from lineage_platform.model import Predicate
from lineage_platform.security.policy import check_access, load_policy
from lineage_platform.security.predicates import implies
from lineage_platform.security.resource_blocks import extract_resource_blocks
from tools.security.sample_warehouse import SAMPLE_SCHEMA

POLICY = """
roles:
  analyst: [ann, bob]
grants:
  - to: role:analyst
    database: sales
    table: orders
  - to: user:ann
    database: sales
    table: customers
    columns: [id, name, region]
    rows: "region IN ('EU', 'US')"
"""


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY)
    return load_policy(path)


def _check(store, user: str, sql: str):
    return check_access(store, user, extract_resource_blocks(sql, SAMPLE_SCHEMA))


def test_role_and_row_restricted_grants_allow_matching_reads(store) -> None:
    sql = (
        "SELECT c.name, sum(o.amount) FROM sales.customers c JOIN sales.orders o ON c.id = o.customer_id "
        "WHERE c.region = 'EU' GROUP BY c.name"
    )
    assert _check(store, "ann", sql).allowed


def test_rows_outside_the_grant_are_denied_with_the_request_to_make(store) -> None:
    decision = _check(store, "ann", "SELECT name FROM sales.customers WHERE region = 'APAC'")
    assert not decision.allowed
    [missing] = decision.missing
    assert missing.request == "SELECT (name, region) ON sales.customers WHERE region = 'APAC'"


def test_missing_columns_are_named(store) -> None:
    decision = _check(store, "ann", "SELECT name, ssn FROM sales.customers WHERE region = 'EU'")
    assert [m.columns for m in decision.missing] == [("ssn",)]


def test_users_without_grants_on_a_table_are_denied(store) -> None:
    decision = _check(store, "bob", "SELECT count(*) FROM sales.customers")
    assert not decision.allowed and decision.missing[0].request == "SELECT ON sales.customers"
    assert _check(store, "bob", "SELECT count(*) FROM sales.orders").allowed


@pytest.mark.parametrize(
    "known, required, expected",
    [
        (("=", 5), (">=", 3), True),
        (("IN", ("a", "b")), ("IN", ("a", "b", "c")), True),
        (("IN", ("a", "z")), ("IN", ("a", "b")), False),
        ((">", 5), (">=", 5), True),
        ((">=", 5), (">", 5), False),
        (("<", 3), (">", 1), False),
        (("=", "5"), (">", 1), False),  # incomparable types are not implied
        (("LIKE", "a%"), ("IS NOT NULL", None), True),
    ],
)
def test_predicate_implication(known, required, expected) -> None:
    assert implies(Predicate("t", "c", *known), Predicate("t", "c", *required)) is expected


@pytest.mark.parametrize(
    "text, message",
    [
        ("grants: [{to: ann, database: sales}]", "must start with user: or role:"),
        ("grants: [{to: user:ann}]", "needs `to` and `database`"),
        ("grants: [{to: user:ann, database: s, rows: 'a > b'}]", "must be ANDed"),
        ("[1, 2]", "must be a mapping"),
    ],
)
def test_bad_policy_files_say_what_is_wrong(tmp_path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(SecurityError, match=message):
        load_policy(path)
