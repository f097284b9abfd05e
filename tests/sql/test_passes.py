"""Each pass against its fixture file tests/fixtures/sql/<pass>.sql."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest

from lineage_platform.sql import extractor
from lineage_platform.sql.analysis import StatementAnalysis
from tests.sql.fixtures import FixtureCase, load_cases


def _queries(analysis: StatementAnalysis) -> list[str]:
    return [unit.query.sql(analysis.dialect) for unit in analysis.units]


def _edges(analysis: StatementAnalysis) -> list[str]:
    lines = []
    for edge in extractor._unique_edges(analysis.edges):
        extras = (" masked" if edge.masking else "") + (f" key={edge.key_path}" if edge.key_path else "")
        lines.append(f"{edge.source} -> {edge.target} {edge.strength} {edge.transform}{extras}")
    return lines + [f"! {issue.kind}: {issue.message}" for issue in analysis.issues]


RENDERERS = {
    "classify_statement": lambda a: (
        [" ".join([a.operation, *(u.target.name for u in a.units)])]
        + [f"{d.kind} {d.name}" for d in a.inputs + a.outputs]
    ),
    "mark_recursive_ctes": _queries,
    "expand_views": _queries,
    "eliminate_unused_ctes": _queries,
    "name_outputs": _queries,
    "separate_lateral_aliases": _queries,
    "resolve_join_using": _queries,
    "expand_regex_columns": _queries,
    "qualify_statement": _queries,
    "simplify_statement": _queries,
    "prune_projections": _queries,
    "collect_datasets": lambda a: (
        [f"in {d.name}" for d in extractor._unique_datasets(a.inputs)]
        + [f"out {d.name} {','.join(d.columns)}".rstrip() for d in a.outputs]
    ),
    "trace_columns": _edges,
    "build_scopes": lambda a: [" ".join(s.scope_type.name for s in u.scope.traverse()) for u in a.units],
    "record_effects": lambda a: [
        f"{field.name} {getattr(a.effect, field.name)!r}"
        for field in fields(a.effect)
        if getattr(a.effect, field.name)
    ],
    "extract_predicates": lambda a: [
        f"{p.table}.{p.column} {p.op} {json.dumps(list(p.value) if isinstance(p.value, tuple) else p.value)}"
        for p in a.predicates
    ],
}

CASES = [(name, case) for name in RENDERERS for case in load_cases(name)]


@pytest.mark.parametrize(("pass_name", "case"), CASES, ids=[f"{n}:{c.title}" for n, c in CASES])
def test_pass_fixture(pass_name: str, case: FixtureCase) -> None:
    step = next(p for p in extractor.PASSES if p.__name__ == pass_name)
    analysis = extractor.new_analysis(case.sql, schema=case.schema, dialect=case.dialect, default_db="db")
    if pass_name == "expand_views":
        analysis.session.views["db.v"] = "SELECT t.a AS x, t.b AS y FROM db.t AS t WHERE t.c > 0"
    result = extractor.run_passes(analysis, until=step)
    assert RENDERERS[pass_name](result) == list(case.expected)
