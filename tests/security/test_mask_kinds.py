"""The mask-kind registry drives policy validation, the rewrite, the DuckDB macros and the README's table."""

from __future__ import annotations

import duckdb
import pytest

from lineage_platform.cli import main
from lineage_platform.errors import SecurityError
from lineage_platform.security.duckdb_masks import install_mask_functions, to_duckdb
from lineage_platform.security.mask_kinds import MASK_KINDS, MaskKind, markdown_table
from lineage_platform.security.masking import mask_query
from lineage_platform.security.masking_rules import MaskRule, masking_policy, strictest
from tools.security.readme import README, with_section

ANN = {"user:ann"}


def _policy_of(kind: MaskKind) -> dict[str, object]:
    """The masking section with the kind's example rule on ``db.t.v``."""
    entry = {"column": "db.t.v", "mask": kind.name, **{p: kind.example[p] for p in kind.params}}
    return {"rules": [entry]}


def _one_row_table(kind: MaskKind) -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    install_mask_functions(connection)
    value = kind.example["value"]
    connection.execute("CREATE SCHEMA db")
    connection.execute(f"CREATE TABLE db.t (id INT, v {'DATE' if hasattr(value, 'year') else 'VARCHAR'})")
    connection.execute("INSERT INTO db.t VALUES (1, ?)", [value])
    return connection


@pytest.mark.parametrize("mode", ["before", "after"])
@pytest.mark.parametrize("name", list(MASK_KINDS))
def test_each_kind_parsed_from_a_policy_masks_its_example_on_duckdb(name: str, mode: str) -> None:
    kind = MASK_KINDS[name]
    connection = _one_row_table(kind)
    policy = masking_policy(_policy_of(kind))
    column_type = "date" if hasattr(kind.example["value"], "year") else "string"
    schema = {"db": {"t": {"id": "int", "v": column_type}}}
    masked = mask_query("SELECT id, v FROM db.t", ANN, policy, mode, schema=schema)
    assert masked.masked and masked.masked[0][1] == name
    assert connection.execute(to_duckdb(masked.sql)).fetchall() == [(1, kind.example["masked"])]


def test_an_unknown_kind_is_one_line_naming_the_known_ones(tmp_path, capsys) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("masking:\n  rules:\n    - column: sales.customers.ssn\n      mask: sha1\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["mask", "--user", "ann", "--policy", str(policy), "SELECT ssn FROM sales.customers"])
    error = capsys.readouterr().err
    assert exit_info.value.code == 1 and error.count("\n") == 1 and "Traceback" not in error
    assert "masking.rules[0]: unknown mask kind 'sha1'" in error
    assert f"use one of {', '.join(MASK_KINDS)}" in error


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"mask": "show_last", "n": "four"}, "`n` must be a whole number"),
        ({"mask": "show_first", "n": -1}, "`n` must be a whole number"),
        ({"mask": "custom", "expression": "upper(x)"}, "needs `expression` containing {col}"),
    ],
)
def test_bad_rule_parameters_say_what_is_wrong(entry: dict[str, object], message: str) -> None:
    with pytest.raises(SecurityError, match=message):
        masking_policy({"rules": [{"column": "db.t.v", **entry}]})


def test_the_strictest_rule_follows_the_registry_order() -> None:
    rules = [MaskRule(name) for name in reversed(MASK_KINDS) if name != "custom"]
    assert strictest(rules).kind == next(iter(MASK_KINDS))


def test_adding_a_kind_is_one_registry_entry(monkeypatch) -> None:
    first = MaskKind(
        "first_character",
        "substr({col}, 1, 1)",
        "the first character",
        False,
        {"value": "Ann", "masked": "A"},
    )
    monkeypatch.setitem(MASK_KINDS, first.name, first)
    policy = masking_policy(_policy_of(first))
    masked = mask_query("SELECT id, v FROM db.t", ANN, policy, "after")
    assert duckdb.sql(to_duckdb(masked.sql.replace("db.t", "(SELECT 1 AS id, 'Ann' AS v)"))).fetchall() == [
        (1, "A")
    ]
    assert "| `first_character` | `mask: first_character` | `substr({col}, 1, 1)` |" in markdown_table()


def test_duckdb_gets_the_function_of_every_kind_that_has_one() -> None:
    connection = duckdb.connect()
    before = {row[0] for row in connection.execute("SELECT function_name FROM duckdb_functions()").fetchall()}
    install_mask_functions(connection)
    after = {row[0] for row in connection.execute("SELECT function_name FROM duckdb_functions()").fetchall()}
    assert after - before == {k.function.name for k in MASK_KINDS.values() if k.function is not None}


def test_the_readme_table_is_generated_from_the_registry() -> None:
    text = README.read_text()
    assert with_section(text, "mask kinds", markdown_table()) == text, "run python -m tools.security.readme"
