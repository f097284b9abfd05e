"""match() on lineage data: the same bindings in process, through `lineage graph serve` and on the reference
TinkerGraph and JanusGraph servers (TinkerPop's own match() scenarios run in tests/graph/test_conformance.py)."""

from __future__ import annotations

import pytest
from gremlin_python.process.graph_traversal import __
from gremlin_python.process.traversal import P

from lineage_platform.errors import TraversalError
from lineage_platform.graph import connect
from lineage_platform.graph.writer import LineageWriter
from tests.lineage_samples import NAME, PROFILE


def _rows(traversal) -> list[tuple]:
    return sorted(tuple(row.values()) for row in traversal.to_list())


@pytest.fixture
def lineage(g):
    LineageWriter(g).write([PROFILE])
    return g


def test_two_patterns_join_on_a_shared_label(lineage) -> None:
    into_profile = lineage.V().match(
        __.as_("src").out("flowsTo").as_("dst"),
        __.as_("dst").in_("hasColumn").has(NAME, "dws.profile"),
    )
    expected = {(e.source, e.target) for e in PROFILE.column_edges if e.target.count(".") == 2}
    assert set(_rows(into_profile.select("src", "dst").by(NAME))) == expected


def test_an_end_label_bound_already_must_be_equal(lineage) -> None:
    def columns(table_of_source: object) -> list[tuple]:
        return _rows(
            lineage.V()
            .has_label("table")
            .match(
                __.as_("t").out("hasColumn").as_("c"),
                __.as_("c").in_("hasColumn").as_("t"),  # holds: c's table is t
                __.as_("c").in_("flowsTo").as_("src"),
                table_of_source,
            )
            .select("t", "c", "src")
            .by(NAME)
        )

    into_columns = sorted(
        ("dws.profile", e.target, e.source) for e in PROFILE.column_edges if e.target.count(".") == 2
    )
    assert columns(__.as_("src").in_("hasColumn").has(NAME, "ods.users")) == into_columns
    assert columns(__.as_("src").in_("hasColumn").as_("t")) == []  # a source column is in another table


def test_not_and_where_patterns_filter_the_bindings(lineage) -> None:
    unmasked = lineage.V().match(
        __.as_("src").out_e("flowsTo").as_("e"),
        __.not_(__.as_("e").has("masking", True)),
        __.as_("e").in_v().as_("dst"),
        __.where("src", P.neq("dst")),
    )
    expected = {
        (e.source, e.target) for e in PROFILE.column_edges if not e.masking and e.target.count(".") == 2
    } | {(e.source, e.target) for e in PROFILE.column_edges if e.target.count(".") == 1}
    assert set(_rows(unmasked.select("src", "dst").by(NAME))) == expected


def test_labels_bound_before_the_match_are_read_from_the_path(lineage) -> None:
    tables = (
        lineage.V()
        .has(NAME, "ods.users")
        .as_("in")
        .out("usedBy")
        .out("generated")
        .as_("out")
        .match(
            __.as_("in").out("hasColumn").count().as_("n"),
            __.as_("out").out("hasColumn").count().as_("m"),
        )
    )
    columns_in = {e.source for e in PROFILE.column_edges}
    columns_out = {e.target for e in PROFILE.column_edges if e.target.count(".") == 2}
    assert _rows(tables.select("in", "out", "n", "m").by(NAME).by(NAME).by().by()) == [
        ("ods.users", "dws.profile", len(columns_in), len(columns_out))
    ]


def test_a_pattern_no_label_can_start_is_a_clear_error() -> None:
    g = connect("memory:")
    unsolvable = g.inject(1).match(__.as_("a").constant(2).as_("b"), __.as_("z").constant(3).as_("w"))
    with pytest.raises(
        TraversalError, match=r"no pattern can start, the labels \['w', 'z'\] are never bound"
    ):
        unsolvable.to_list()


def test_a_match_without_patterns_is_a_clear_error() -> None:
    with pytest.raises(TraversalError, match="match\\(\\) needs at least one pattern"):
        connect("memory:").inject(1).match().to_list()
