"""Label propagation end to end: SQL -> lineage graph -> declared labels -> rounds to fixpoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from lineage_platform.errors import LineageError
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.labels import Declaration, Label, declare, explain, propagate, undeclare
from lineage_platform.labels.propagate import labels_of
from lineage_platform.sql import extract_lineage

SQL = (Path(__file__).parent.parent / "fixtures" / "labels_warehouse.sql").read_text()
DECLARED = [
    Declaration("ods.app_events", (Label("APP", "douyin"), Label("APP", "toutiao"))),
    Declaration("ods.app_events.phone", (Label("PII"),)),
]
EXPECTED = {
    "dwd.douyin_events": {"APP=douyin"},  # WHERE app = 'douyin' narrows APP
    "ads.all_apps": {"APP=douyin", "APP=toutiao"},
    "dws.user_stats": {"APP=douyin", "INFLUENCED_BY=PII"},  # phone used in WHERE / GROUP BY only
    "hdfs:///exports/douyin_events": {"APP=douyin", "PII"},  # EXPORT copies everything
    "dwd.douyin_events.phone": {"PII"},
    "dws.user_stats.phone_upper": {"PII"},  # an expression carries PII; count() and sha2() do not
}


@pytest.fixture
def loaded(g):
    LineageWriter(g).write(extract_lineage(SQL))
    declare(g, DECLARED, declared_by="tester")
    return g


def _propagated(g) -> dict[str, set[str]]:
    names = [
        *EXPECTED,
        "dws.user_stats.phones",
        "dws.user_stats.phone_hash",
        "ods.app_events",
        "ads.all_apps.app",
    ]
    return {
        name: labels
        for name, taggings in labels_of(g, names).items()
        if (labels := {str(t.label) for t in taggings if t.origin == "propagated"})
    }


def test_rules_narrow_stop_and_influence_until_fixpoint(loaded) -> None:
    g = loaded
    summary = propagate(g)
    assert _propagated(g) == EXPECTED
    assert summary.rounds == 3  # the third round (through the cycle back to ods.app_events) changes nothing
    assert summary.added == sum(len(v) for v in EXPECTED.values())


def test_rerun_is_idempotent_and_deterministic(loaded) -> None:
    g = loaded
    propagate(g)
    again = propagate(g)
    assert (again.added, again.withdrawn) == (0, 0)
    assert _propagated(g) == EXPECTED


def test_removed_declaration_withdraws_what_it_spread(loaded) -> None:
    g = loaded
    propagate(g)
    assert undeclare(g, "ods.app_events.phone", [Label("PII")]) == 1
    summary = propagate(g)
    assert summary.withdrawn == 4
    remaining = _propagated(g)
    assert all("PII" not in label for labels in remaining.values() for label in labels)
    assert remaining["dws.user_stats"] == {"APP=douyin"}


def test_new_lineage_recomputes_only_the_affected_part_and_matches_a_full_run(loaded) -> None:
    g = loaded
    full = propagate(g)
    new = extract_lineage("INSERT OVERWRITE TABLE ads.phone_book SELECT phone FROM dwd.douyin_events")
    LineageWriter(g).write(new)
    incremental = propagate(g, seeds=["dwd.douyin_events", "dwd.douyin_events.phone"])
    assert incremental.touched < full.touched
    got = {
        n: {str(t.label) for t in ts}
        for n, ts in labels_of(g, ["ads.phone_book", "ads.phone_book.phone"]).items()
    }
    assert got == {"ads.phone_book": {"APP=douyin"}, "ads.phone_book.phone": {"PII"}}
    assert propagate(g).added == 0  # a full recomputation finds nothing the incremental run missed


def test_propagation_switched_off_on_a_process(loaded) -> None:
    g = loaded
    g.V().has("table", "qualifiedName", "ads.all_apps").in_("generated").property(
        "propagate", False
    ).iterate()
    propagate(g)
    assert "ads.all_apps" not in _propagated(g)


def test_explain_walks_back_to_the_declaration(loaded) -> None:
    g = loaded
    propagate(g)
    (pii,) = [e for e in explain(g, "dws.user_stats.phone_upper") if e.label == Label("PII")]
    assert [step.name for step in pii.steps] == [
        "dws.user_stats.phone_upper",
        "dwd.douyin_events.phone",
        "ods.app_events.phone",
    ]
    assert pii.steps[0].operation == "INSERT_OVERWRITE" and "upper(phone)" in pii.steps[0].query
    assert pii.steps[-1].tagging.origin == "declared" and "declared by tester" in pii.describe()


def test_disabled_label_does_not_propagate(loaded) -> None:
    from lineage_platform.labels.rules import LabelRule, RuleSet

    g = loaded
    propagate(g, RuleSet(rules={"APP": LabelRule(enabled=False)}))
    assert all("APP" not in label for labels in _propagated(g).values() for label in labels)


def test_unknown_names_write_nothing(loaded) -> None:
    g = loaded
    before = g.E().has_label("taggedWith").count().next()
    with pytest.raises(LineageError, match=r"no table or column named 'ods\.nope'"):
        declare(
            g, [Declaration("ods.app_events.uid", (Label("PII"),)), Declaration("ods.nope", (Label("PII"),))]
        )
    assert g.E().has_label("taggedWith").count().next() == before


def test_a_select_result_holding_pii_is_labelled_and_propagation_still_ends(g) -> None:
    LineageWriter(g).write(
        extract_lineage(
            "SELECT phone, count(1) AS n FROM ods.app_events WHERE dt = '2024-01-01' GROUP BY phone",
            schema={"ods": {"app_events": {"phone": "string", "app": "string", "dt": "string"}}},
        )
    )
    declare(g, [Declaration("ods.app_events.phone", (Label("PII"),))], declared_by="tester")
    summary = propagate(g)
    [result] = g.V().has("datasetKind", "result").values("qualifiedName").to_list()
    labels = labels_of(g, [f"{result}.phone", f"{result}.n"])
    assert {str(t.label) for t in labels.get(f"{result}.phone", [])} == {"PII"}
    assert not labels.get(f"{result}.n")  # count() does not carry PII
    assert summary.rounds == 2  # the result is a leaf: the second round changes nothing


def test_aggregates_that_return_values_carry_pii_and_counts_do_not(g) -> None:
    """Failed before: the PII rule left out AGGREGATION, so max(phone) and collect_set(phone) lost PII."""
    sql = (
        "INSERT OVERWRITE TABLE dws.phone_facts SELECT uid, max(phone) AS last_phone, min(phone) AS first_phone, "
        "collect_set(phone) AS phones, concat_ws(',', collect_list(phone)) AS phone_list, "
        "count(DISTINCT phone) AS distinct_phones, count(phone) AS phone_rows, "
        "approx_count_distinct(phone) AS approx_phones FROM ods.users GROUP BY uid"
    )
    LineageWriter(g).write(
        extract_lineage(sql, schema={"ods": {"users": {"uid": "bigint", "phone": "string"}}})
    )
    declare(g, [Declaration("ods.users.phone", (Label("PII"), Label("SENSITIVITY", "high")))])
    propagate(g)
    columns = [
        "last_phone",
        "first_phone",
        "phones",
        "phone_list",
        "distinct_phones",
        "phone_rows",
        "approx_phones",
    ]
    found = labels_of(g, [f"dws.phone_facts.{c}" for c in columns])
    labelled = {name.rsplit(".", 1)[1]: {str(t.label) for t in tags} for name, tags in found.items()}
    for column in ("last_phone", "first_phone", "phones", "phone_list"):
        assert labelled.get(column) == {"PII", "SENSITIVITY=high"}, column
    for column in ("distinct_phones", "phone_rows", "approx_phones"):
        assert not labelled.get(column), column
