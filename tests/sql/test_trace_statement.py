"""The public analysis API: traced statements, their tracers, and the errors naming a statement."""

from __future__ import annotations

import pytest

from lineage_platform.sql import (
    StatementParseError,
    StatementTraceError,
    leftmost_select,
    trace_script,
    trace_statement,
)


def test_a_statement_comes_back_with_units_scopes_tracers_and_predicates() -> None:
    traced = trace_statement(
        "INSERT INTO db.o SELECT t.a, sum(u.b) AS s FROM db.t JOIN db.u ON t.id = u.id WHERE t.dt = '2024-01-01' "
        "GROUP BY t.a",
        schema={"db": {"t": {"a": "int", "id": "int", "dt": "string"}, "u": {"b": "int", "id": "int"}}},
    )
    assert traced.operation == "INSERT" and [d.name for d in traced.outputs] == ["db.o"]
    assert sorted(d.name for d in traced.inputs) == ["db.t", "db.u"]
    [unit] = traced.units
    [tracer] = traced.tracers
    assert unit.scope is not None and tracer is not None
    flows = [tracer.output_at(unit.scope, i) for i in range(len(leftmost_select(unit.query).selects))]
    assert [[(f.source, f.usage.transform) for f in outputs] for outputs in flows] == [
        [("db.t.a", "IDENTITY")],
        [("db.u.b", "AGGREGATION")],
    ]
    assert [(p.table, p.column, p.op) for p in traced.predicates] == [("db.t", "dt", "=")]
    assert traced.issues == [] and traced.columns_of("db.u") == ("b", "id")


def test_tracers_report_to_the_handler_or_to_the_statement_issues() -> None:
    seen: list[str] = []
    traced = trace_statement("SELECT a FROM db.t", on_issue=lambda message, node: seen.append(message))
    unit, tracer = traced.units[0], traced.tracers[0]
    tracer.output_named(unit.scope, "nope", unit.query)
    assert seen and "nope" in seen[0]
    quiet = trace_statement("SELECT a FROM db.t")
    quiet.tracers[0].output_named(quiet.units[0].scope, "nope", quiet.units[0].query)
    assert [i.message for i in quiet.issues] == seen


def test_a_script_is_traced_statement_by_statement_with_its_session() -> None:
    statements = list(trace_script("USE db; SET x=1; CREATE VIEW v AS SELECT a FROM t; SELECT a FROM v"))
    assert [s.operation for s in statements] == ["USE", "SET", "CREATE_VIEW", "SELECT"]
    assert [s.index for s in statements] == [0, 1, 2, 3]
    assert [d.name for d in statements[3].inputs] == ["db.t"]  # the view defined before is expanded


def test_a_statement_that_does_not_parse_is_named_with_its_cause() -> None:
    script = trace_script("SELECT a FROM db.t; SELECT FROM WHERE")
    first = next(script)
    assert first.operation == "SELECT"  # statements are traced as they are reached
    with pytest.raises(StatementTraceError) as raised:
        next(script)
    assert raised.value.index == 1 and isinstance(raised.value.cause, StatementParseError)
    assert str(raised.value).startswith("statement 2 does not parse")
