"""The cross-dialect SQL lineage corpus is well-formed, broad, consistent with its catalog, and scorable."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from benchmarks.sql_corpus.corpus import CONSTRUCTS as HIVE_SPARK_CONSTRUCTS
from benchmarks.sql_corpus.corpus import DIALECTS, Case, CorpusError, load_corpus
from benchmarks.sql_corpus.scoring import score_case, tally
from benchmarks.sql_corpus_dialects.corpus import CONSTRUCTS, CORPUS
from benchmarks.sql_peers.protocol import split_statements
from benchmarks.sql_peers.runner import TOOLS, run_tool

CASES = CORPUS.cases()
CATALOG = CORPUS.catalog()
TABLES = {
    f"{db}.{table}": set(columns) for db, tables in CATALOG.items() for table, columns in tables.items()
}


def _dataset(column: str) -> str:
    return column.rsplit(".", 1)[0]


def _is_path(name: str) -> bool:
    """Files, directories and stages (``/x``, ``hdfs://x``, ``D:/x``, ``@stage/x``) are named by their path."""
    return "/" in name


def _words(sql: str) -> set[str]:
    return set(re.findall(r"[a-z_][a-z0-9_]*", sql.lower()))


def test_at_least_500_cases_over_at_least_6_dialects_with_unique_ids() -> None:
    dialects = Counter(case.dialect for case in CASES)
    assert len(CASES) >= 500
    assert len(dialects) >= 6 and set(dialects) <= set(DIALECTS)
    assert all(count >= 30 for count in dialects.values()), dialects
    assert [case_id for case_id, n in Counter(case.id for case in CASES).items() if n > 1] == []


def test_each_file_holds_one_dialect_and_ids_carry_its_prefix() -> None:
    for file, dialects in {c.file: {x.dialect for x in CASES if x.file == c.file} for c in CASES}.items():
        assert dialects == {file.removesuffix(".yaml")}, file
    assert len({case.id.split("_")[0] for case in CASES}) == len({case.file for case in CASES})


def test_every_new_construct_is_covered_and_few_have_a_single_case() -> None:
    counts = Counter(construct for case in CASES for construct in case.constructs)
    assert {c for c in CONSTRUCTS if c not in HIVE_SPARK_CONSTRUCTS and counts[c] == 0} == set()
    assert len([c for c in CONSTRUCTS if counts[c] < 2]) <= len(CONSTRUCTS) // 15


def test_catalog_is_a_nested_schema_with_typed_columns() -> None:
    assert {"sales", "finance", "events", "hr", "staging", "mart"} <= set(CATALOG)
    for columns in (cols for tables in CATALOG.values() for cols in tables.values()):
        assert columns and all(isinstance(kind, str) and kind for kind in columns.values())


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_expected_edges_stay_within_the_case_datasets(case: Case) -> None:
    exp = case.expected
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
def test_expected_columns_exist_in_the_catalog_or_are_produced_by_the_sql(case: Case) -> None:
    exp, words = case.expected, _words(case.sql)
    for column in [source for source, _ in exp.strong | exp.weak]:
        dataset, name = column.rsplit(".", 1)
        if dataset in TABLES:
            assert name in TABLES[dataset], f"{column} is not in catalog.json"
        else:
            assert _is_path(dataset) or dataset in exp.outputs, f"{column}: unknown source dataset"
            assert name in words, f"{column} is not named in the SQL"
    for _, column in exp.strong:
        dataset, name = column.rsplit(".", 1)
        if dataset in TABLES and dataset not in exp.inputs:
            assert name in TABLES[dataset], f"{column} is not a column of the existing target"
    for dataset in exp.inputs:
        assert dataset in TABLES or _is_path(dataset) or dataset in exp.outputs, f"unknown input {dataset}"


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_expected_datasets_are_named_in_the_sql(case: Case) -> None:
    words = _words(case.sql)
    for dataset in case.expected.inputs + case.expected.outputs:
        if dataset != "$result" and not _is_path(dataset):
            assert dataset.rsplit(".", 1)[1] in words, f"{dataset} is not named in {case.id}"


@pytest.mark.parametrize("case", [c for c in CASES if c.temps], ids=lambda case: case.id)
def test_temporary_objects_are_created_in_the_script_and_never_expected(case: Case) -> None:
    assert len(split_statements(case.sql)) >= 2
    for temp in case.temps:
        assert re.search(rf"(view|table|into)\s+(if not exists\s+)?{re.escape(temp)}\b", case.sql.lower()), (
            temp
        )
        assert not any(table.rsplit(".", 1)[-1] == temp.lstrip("#") for table in TABLES), "shadows a table"
        named = case.expected.inputs + case.expected.outputs
        assert not any(name.rsplit(".", 1)[-1].lstrip("#") == temp.lstrip("#") for name in named)


def test_unknown_dialect_is_rejected(tmp_path) -> None:
    (tmp_path / "bad.yaml").write_text(
        "- id: bad_001\n  dialect: oracle\n  constructs: [select]\n  sql: SELECT 1\n"
        "  expected: {outputs: [$result]}\n"
    )
    with pytest.raises(CorpusError, match="oracle"):
        load_corpus(tmp_path, CONSTRUCTS)


def test_the_project_scores_a_few_cases_in_their_own_dialects() -> None:
    ids = {"pg_015", "ts_010", "tr_002", "hv_001", "my_012", "sp_003"}
    cases = [case for case in CASES if case.id in ids]
    ours = next(tool for tool in TOOLS if tool.name == "lineage_platform")
    run = run_tool(ours, cases, catalog=CATALOG)
    assert run.failure is None and set(run.results or {}) == ids
    scores = [score_case(case, run.results[case.id], CORPUS.catalogs) for case in cases]
    assert all(score.error is None for score in scores)
    totals = tally(scores)
    expected_edges = sum(len(case.expected.strong) + len(case.expected.weak) for case in cases)
    assert totals["column"].tp + totals["column"].fn == expected_edges
    assert totals["table"].f1 > 0.5 and totals["column"].tp > 0
