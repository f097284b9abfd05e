"""The scorer, the temp-object resolution and the adapter protocol of the SQL lineage benchmark."""

from __future__ import annotations

import pytest

from benchmarks.sql_corpus.corpus import Case, Expected
from benchmarks.sql_corpus.scoring import Tally, by_construct, by_dialect, resolve, score_case, tally
from benchmarks.sql_peers import sqlglot_adapter
from benchmarks.sql_peers.lineage_platform_adapter import _dataset_of
from benchmarks.sql_peers.protocol import split_statements, statement

CATALOG = {"ods": {"a": {"x": "int", "f": "string", "k": "int"}}, "dws": {"t": {"z": "int", "k": "int"}}}


def _case(temps: tuple[str, ...] = (), strong=(), weak=(), table=(), constructs=("select",)) -> Case:
    expected = Expected((), (), frozenset(strong), frozenset(weak), frozenset(table))
    return Case("c_001", "test.yaml", constructs, "SELECT 1", expected, temps=temps)


def test_split_statements_ignores_semicolons_in_quotes_and_comments() -> None:
    sql = "SET a=1;\nSELECT ';' AS s -- not; here\nFROM t; /* only; a comment */ ;\n-- trailing\n"
    assert split_statements(sql) == ["SET a=1", "SELECT ';' AS s -- not; here\nFROM t"]


def test_statement_lower_cases_and_deduplicates() -> None:
    record = statement(["ODS.A", "ods.a"], ["DWS.T"], [("ODS.A.X", "dws.t.z"), ("ods.a.x", "DWS.T.Z")], [])
    assert record == {
        "inputs": ["ods.a"],
        "outputs": ["dws.t"],
        "strong": [["ods.a.x", "dws.t.z"]],
        "weak": [],
    }


def test_resolve_composes_edges_through_temporary_views() -> None:
    statements = [
        statement(["ods.a"], ["tmp_v"], [("ods.a.x", "tmp_v.y")], [("ods.a.f", "tmp_v")]),
        statement(["dwd.tmp_v"], ["dws.t"], [("dwd.tmp_v.y", "dws.t.z")], [("dwd.tmp_v.y", "dws.t")]),
    ]
    lineage = resolve(_case(temps=("tmp_v",)), statements)
    assert lineage.table == {("ods.a", "dws.t")}
    assert lineage.strong == {("ods.a.x", "dws.t.z")}
    assert lineage.weak == {("ods.a.f", "dws.t"), ("ods.a.x", "dws.t")}


def test_resolve_drops_self_edges_and_keeps_ddl_outputs() -> None:
    statements = [
        statement(
            ["dws.t", "ods.a"],
            ["dws.t"],
            [("dws.t.z", "dws.t.z"), ("ods.a.x", "dws.t.z")],
            [("dws.t.k", "dws.t")],
        ),
        statement([], ["ods.a"], [], []),
    ]
    lineage = resolve(_case(), statements)
    assert lineage.table == {("ods.a", "dws.t"), ("", "ods.a")}
    assert lineage.strong == {("ods.a.x", "dws.t.z")}
    assert lineage.weak == set()


def test_temp_created_by_ddl_adds_no_empty_table_source() -> None:
    statements = [
        statement([], ["tmp_s"], [], []),
        statement(["ods.a"], ["tmp_s"], [("ods.a.x", "tmp_s.y")], []),
        statement(["tmp_s"], ["dws.t"], [("tmp_s.y", "dws.t.z")], []),
    ]
    assert resolve(_case(temps=("tmp_s",)), statements).table == {("ods.a", "dws.t")}


def test_tally_micro_averages_precision_recall_f1() -> None:
    counts = Tally()
    counts.add({1, 2, 3, 4}, {1, 2, 5})
    assert (counts.tp, counts.fp, counts.fn) == (2, 1, 2)
    assert counts.precision == pytest.approx(2 / 3)
    assert counts.recall == pytest.approx(0.5)
    assert counts.f1 == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert Tally().f1 == 1.0


def test_missing_tool_result_scores_every_expected_edge_as_missed() -> None:
    case = _case(strong={("ods.a.x", "dws.t.z")}, weak={("ods.a.f", "dws.t")}, table={("ods.a", "dws.t")})
    score = score_case(case, None)
    totals = tally([score])
    assert score.error == "no result"
    assert {name: (t.tp, t.fn) for name, t in totals.items()} == {
        "table": (0, 1),
        "strong": (0, 1),
        "weak": (0, 1),
        "column": (0, 2),
    }
    assert score.misses("column") == ({("strong", "ods.a.x", "dws.t.z"), ("weak", "ods.a.f", "dws.t")}, set())
    assert list(by_construct([score])) == ["select"]


def test_weak_targets_are_projected_to_their_dataset() -> None:
    assert _dataset_of("dws.t.k", {"dws.t"}) == "dws.t"
    assert _dataset_of("dws.t", {"dws.t"}) == "dws.t"
    assert _dataset_of("$result.n", {"$result"}) == "$result"


def test_sqlglot_adapter_maps_an_insert_with_its_cte() -> None:
    sql = "WITH s AS (SELECT x, k FROM ods.a) INSERT INTO dws.t SELECT x AS z, k FROM s"
    [record] = sqlglot_adapter.analyse(sql, None, CATALOG, "hive")
    assert record["inputs"] == ["ods.a"]
    assert record["outputs"] == ["dws.t"]
    assert record["strong"] == [["ods.a.k", "dws.t.k"], ["ods.a.x", "dws.t.z"]]


def test_reading_an_unresolved_temp_gives_no_table_pair() -> None:
    statements = [statement(["tmp_unknown"], ["dws.t"], [], [])]
    assert resolve(_case(temps=("tmp_unknown",)), statements).table == set()


def test_declared_catalogs_are_dropped_from_three_part_names() -> None:
    statements = [
        statement(
            ["hive.ods.a", "/data/x.y/z"],
            ["iceberg.dws.t"],
            [("hive.ods.a.x", "iceberg.dws.t.z"), ("/data/x.y/z.k", "iceberg.dws.t.k")],
            [("hive.ods.a.f", "iceberg.dws.t")],
        )
    ]
    found = resolve(_case(), statements, frozenset({"hive", "iceberg"}))
    assert found.table == {("ods.a", "dws.t"), ("/data/x.y/z", "dws.t")}
    assert found.strong == {("ods.a.x", "dws.t.z"), ("/data/x.y/z.k", "dws.t.k")}
    assert found.weak == {("ods.a.f", "dws.t")}
    assert resolve(_case(), statements).table == {
        ("hive.ods.a", "iceberg.dws.t"),
        ("/data/x.y/z", "iceberg.dws.t"),
    }


def test_tsql_temp_tables_resolve_with_or_without_their_hash() -> None:
    statements = [
        statement(["ods.a"], ["#stage"], [("ods.a.x", "#stage.y")], []),
        statement(["dbo.stage"], ["dws.t"], [("dbo.stage.y", "dws.t.z")], []),
    ]
    found = resolve(_case(temps=("#stage",)), statements)
    assert found.table == {("ods.a", "dws.t")}
    assert found.strong == {("ods.a.x", "dws.t.z")}


def test_scores_group_by_dialect() -> None:
    expected = Expected((), (), frozenset({("ods.a.x", "dws.t.z")}), frozenset(), frozenset())
    tsql = Case("c_002", "t.yaml", ("select",), "SELECT 1", expected, dialect="tsql")
    hive = Case("c_003", "h.yaml", ("select",), "SELECT 1", expected)
    found = {"statements": [statement([], [], [("ods.a.x", "dws.t.z")], [])], "error": None}
    grouped = by_dialect([score_case(tsql, found), score_case(hive, None)])
    assert {dialect: (count, totals["strong"].f1) for dialect, (count, totals) in grouped.items()} == {
        "hive": (1, 0.0),
        "tsql": (1, 1.0),
    }
