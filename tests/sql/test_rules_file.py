"""UDF rules from a file: loading, validation with one-line errors, and their effect in `lineage sql lineage`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lineage_platform.cli import invoke
from lineage_platform.errors import SqlError
from lineage_platform.sql import FunctionRule, extract_lineage, load_function_rules

RULES_YAML = """\
functions:
  Pick_If:    {condition_args: [0]}
  mask_phone: {masking: true}
  top_share:  {aggregate: true}
  json_pick:  {key_arg: 1}
  lookup_dim: {flow_args: [0]}
  plain_udf:
"""


def test_yaml_and_json_files_give_the_same_rules(tmp_path: Path) -> None:
    (tmp_path / "rules.yaml").write_text(RULES_YAML)
    from_yaml = load_function_rules(tmp_path / "rules.yaml")
    assert from_yaml == {
        "pick_if": FunctionRule(condition_args=(0,)),
        "mask_phone": FunctionRule(masking=True),
        "top_share": FunctionRule(aggregate=True),
        "json_pick": FunctionRule(key_arg=1),
        "lookup_dim": FunctionRule(flow_args=(0,)),
        "plain_udf": FunctionRule(),
    }
    as_json = {"functions": {"lookup_dim": {"flow_args": [0]}, "pick_if": {"condition_args": [0]}}}
    (tmp_path / "rules.json").write_text(json.dumps(as_json))
    assert load_function_rules(tmp_path / "rules.json") == {
        "lookup_dim": from_yaml["lookup_dim"],
        "pick_if": from_yaml["pick_if"],
    }


def test_each_field_changes_the_lineage(tmp_path: Path) -> None:
    (tmp_path / "rules.yaml").write_text(RULES_YAML)
    rules = load_function_rules(tmp_path / "rules.yaml")
    sql = (
        "INSERT INTO db.o SELECT pick_if(c, a, b) AS p, mask_phone(phone) AS m, top_share(a) AS s, "
        "json_pick(doc, 'x.y') AS j, lookup_dim(id, tag) AS l FROM db.t"
    )

    def edges(function_rules):
        [record] = extract_lineage(sql, function_rules=function_rules)
        return {
            (e.source, e.target): (e.strength, e.transform, e.masking, e.key_path)
            for e in record.column_edges
        }

    before, after = edges(None), edges(rules)
    assert before[("db.t.c", "db.o.p")] == ("strong", "TRANSFORMATION", False, None)
    assert after[("db.t.c", "db.o.p")] == ("weak", "CONDITIONAL", False, None)
    assert after[("db.t.phone", "db.o.m")][2] is True and before[("db.t.phone", "db.o.m")][2] is False
    assert (
        after[("db.t.a", "db.o.s")][1] == "AGGREGATION"
        and before[("db.t.a", "db.o.s")][1] == "TRANSFORMATION"
    )
    assert after[("db.t.doc", "db.o.j")][3] == "$.x.y" and before[("db.t.doc", "db.o.j")][3] is None
    assert ("db.t.tag", "db.o.l") in before and ("db.t.tag", "db.o.l") not in after
    assert ("db.t.id", "db.o.l") in after


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("functions: [pick_if]", "has no 'functions' mapping"),
        ("pick_if: {condition_args: [0]}", "has no 'functions' mapping"),
        (
            "functions:\n  f: {condition_args: [a]}",
            "functions.f.condition_args: 'a' is not an argument position",
        ),
        ("functions:\n  f: {condition_args: 0}", "functions.f.condition_args: expected a list"),
        ("functions:\n  f: {key_arg: -1}", "functions.f.key_arg: -1 is not an argument position"),
        ("functions:\n  f: {masking: 1}", "functions.f.masking: expected true or false"),
        (
            "functions:\n  f: {conditions: [0]}",
            "functions.f: unknown field 'conditions'; known: condition_args",
        ),
        (
            "functions:\n  f: {key_arg: 1, flow_args: [0, 1]}",
            "functions.f: argument 1 is in both key_arg and flow_args",
        ),
        ("functions:\n  f: [0]", "functions.f: expected a mapping"),
        ("functions:\n  F: {}\n  f: {}", "functions.f: defined twice"),
        ("functions: {f: [", "is not valid YAML at line 1"),
    ],
)
def test_bad_files_get_one_line_errors_naming_file_and_entry(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(text)
    with pytest.raises(SqlError) as error:
        load_function_rules(path)
    assert message in str(error.value) and str(path) in str(error.value)
    assert "\n" not in str(error.value) and error.value.hint


def test_sql_lineage_command_applies_the_rules_file(tmp_path: Path) -> None:
    script = tmp_path / "job.sql"
    script.write_text("INSERT INTO db.o SELECT lookup_dim(id, tag) AS l FROM db.t")
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"functions": {"lookup_dim": {"flow_args": [0]}}}))

    def sources(*extra: str) -> set[str]:
        result = invoke(["sql", "lineage", str(script), "--format", "json", *extra])
        assert result.success, result.exception
        return {edge.source for record in result.result for edge in record.column_edges}

    assert sources() == {"db.t.id", "db.t.tag"}
    assert sources("--udf-rules", str(rules)) == {"db.t.id"}


def test_a_bad_rules_file_is_a_one_line_cli_error(tmp_path: Path) -> None:
    (tmp_path / "job.sql").write_text("SELECT 1")
    (tmp_path / "rules.yaml").write_text("functions:\n  f: {masking: maybe}")
    result = invoke(
        ["sql", "lineage", str(tmp_path / "job.sql"), "--udf-rules", str(tmp_path / "rules.yaml")]
    )
    assert not result.success and isinstance(result.exception, SqlError)
    assert "functions.f.masking" in str(result.exception)
