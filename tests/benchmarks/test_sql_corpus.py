"""The SQL lineage corpus is well-formed and its expectations are consistent with its SQL and catalog."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from benchmarks.sql_corpus.corpus import (
    CONSTRUCTS,
    Case,
    CorpusError,
    load_catalog,
    load_corpus,
)
from benchmarks.sql_peers.protocol import split_statements

CASES = load_corpus()
CATALOG = load_catalog()
CATALOG_TABLES = {
    f"{db}.{table}": set(columns) for db, tables in CATALOG.items() for table, columns in tables.items()
}


def _dataset(column: str) -> str:
    return column.rsplit(".", 1)[0]


def _is_path(name: str) -> bool:
    return "://" in name or name.startswith("/")


def test_corpus_has_at_least_250_cases_with_unique_ids() -> None:
    ids = Counter(case.id for case in CASES)
    assert len(CASES) >= 250
    assert [case_id for case_id, count in ids.items() if count > 1] == []


def test_every_construct_is_covered_by_at_least_two_cases() -> None:
    counts = Counter(construct for case in CASES for construct in case.constructs)
    assert {construct for construct in CONSTRUCTS if counts[construct] < 2} == set()


def test_catalog_is_sqlglot_nested_schema_over_the_layered_warehouse() -> None:
    assert set(CATALOG) == {"ods", "dwd", "dws", "ads"}
    for tables in CATALOG.values():
        for columns in tables.values():
            assert columns and all(isinstance(kind, str) and kind for kind in columns.values())


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_expected_edges_stay_within_the_case_datasets(case: Case) -> None:
    exp = case.expected
    assert exp.outputs, "every case writes something (a table, a view or $result)"
    for source, target in exp.strong:
        assert _dataset(source) in exp.inputs, source
        assert _dataset(target) in exp.outputs, target
    for source, target in exp.weak:
        assert _dataset(source) in exp.inputs, source
        assert target in exp.outputs, f"weak edges target a dataset: {target}"
    for source, target in exp.table_edges:
        assert source == "" or source in exp.inputs
        assert target in exp.outputs


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_expected_catalog_columns_exist(case: Case) -> None:
    exp = case.expected
    columns = [source for source, _ in exp.strong | exp.weak] + [target for _, target in exp.strong]
    for column in columns:
        table, name = column.rsplit(".", 1)
        if table in CATALOG_TABLES:
            assert name in CATALOG_TABLES[table], f"{column} is not in catalog.json"
    for dataset in exp.inputs:
        created_here = dataset in exp.outputs
        assert dataset in CATALOG_TABLES or _is_path(dataset) or created_here, f"unknown input {dataset}"


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_expected_sources_are_named_in_the_sql(case: Case) -> None:
    """A hand-written source column must appear in the statement text (unless it comes from `*`)."""
    words = set(re.findall(r"[a-z_][a-z0-9_]*", case.sql.lower()))
    if "star" in case.constructs:
        return
    for source, _ in case.expected.strong | case.expected.weak:
        assert source.rsplit(".", 1)[1] in words, f"{source} is not mentioned in {case.id}"
    for dataset in case.expected.inputs:
        if not _is_path(dataset):
            assert dataset.rsplit(".", 1)[1] in words, f"{dataset} is not mentioned in {case.id}"


@pytest.mark.parametrize("case", [c for c in CASES if c.temps], ids=lambda case: case.id)
def test_temporary_objects_are_created_in_the_script_and_never_expected(case: Case) -> None:
    sql = case.sql.lower()
    for temp in case.temps:
        assert re.search(rf"\b(view|table)\s+(if not exists\s+)?{temp}\b", sql), f"{temp} is never created"
        assert not any(name.endswith(f".{temp}") for name in CATALOG_TABLES)
        named = {d for d in case.expected.inputs + case.expected.outputs}
        assert not {d for d in named if d.rsplit(".", 1)[-1] == temp}


def test_multi_statement_cases_split_into_several_statements() -> None:
    scripts = [case for case in CASES if {"temp_view", "temp_table", "set", "use"} & set(case.constructs)]
    assert scripts
    assert all(len(split_statements(case.sql)) >= 2 for case in scripts if "temp_view" in case.constructs)


def test_unknown_construct_is_rejected(tmp_path) -> None:
    (tmp_path / "bad.yaml").write_text(
        "- id: bad_001\n  constructs: [not_a_construct]\n  sql: SELECT 1\n  expected: {outputs: [$result]}\n"
    )
    with pytest.raises(CorpusError, match="not_a_construct"):
        load_corpus(tmp_path)
