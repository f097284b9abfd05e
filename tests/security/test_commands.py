"""`lineage perms extract|check` and `lineage mask` through the CLI entry point."""

from __future__ import annotations

import json

import pytest

from lineage_platform.cli import invoke

POLICY = """
roles:
  analyst: [ann]
grants:
  - to: role:analyst
    database: sales
    table: customers
    columns: [id, name, region]
    rows: "region = 'EU'"
masking:
  unmasked: [user:sec]
  rules:
    - column: sales.customers.ssn
      mask: show_last
      n: 4
"""
SCHEMA = '{"sales": {"customers": {"id": "int", "name": "string", "region": "string", "ssn": "string"}}}'


@pytest.fixture
def files(tmp_path):
    (tmp_path / "policy.yaml").write_text(POLICY)
    (tmp_path / "schema.json").write_text(SCHEMA)
    return str(tmp_path / "policy.yaml"), str(tmp_path / "schema.json")


def test_extract_prints_blocks_as_json(capsys) -> None:
    result = invoke(["perms", "extract", "SELECT name FROM sales.customers WHERE region = 'EU'"])
    assert result.success
    [block] = json.loads(capsys.readouterr().out)["blocks"]
    assert (block["table"], block["columns"], block["rows"]) == ("customers", ["name"], "region = 'EU'")


def test_check_allows_and_denies(files, capsys) -> None:
    policy, schema = files
    allowed = invoke(
        [
            "perms",
            "check",
            "--user",
            "ann",
            "--policy",
            policy,
            "--schema",
            schema,
            "SELECT name FROM sales.customers WHERE region = 'EU'",
        ]
    )
    assert allowed.success and json.loads(capsys.readouterr().out)["decision"] == "allow"
    denied = invoke(
        [
            "perms",
            "check",
            "--user",
            "ann",
            "--policy",
            policy,
            "--schema",
            schema,
            "SELECT ssn FROM sales.customers",
        ]
    )
    assert not denied.success
    decision = json.loads(capsys.readouterr().out)
    assert decision["missing"][0]["request"] == "SELECT (ssn) ON sales.customers"


def test_mask_prints_rewritten_sql(files, capsys) -> None:
    policy, schema = files
    for mode, expected in (
        ("after", "MASK_SHOW_LAST_N(customers.ssn, 4) AS `ssn`"),
        ("before", "FROM (SELECT"),
    ):
        result = invoke(
            [
                "mask",
                "--user",
                "ann",
                "--policy",
                policy,
                "--schema",
                schema,
                "--mode",
                mode,
                "SELECT ssn FROM sales.customers",
            ]
        )
        assert result.success and expected in capsys.readouterr().out
    assert invoke(["mask", "--user", "sec", "--policy", policy, "SELECT ssn FROM sales.customers"]).success
    assert capsys.readouterr().out.strip() == "SELECT ssn FROM sales.customers"


def test_mask_fails_closed_on_bad_sql(files, capsys) -> None:
    policy, _ = files
    result = invoke(["mask", "--user", "ann", "--policy", policy, "SELECT ssn FROM"])
    assert not result.success and "does not parse" in str(result.exception)
    assert capsys.readouterr().out == ""
