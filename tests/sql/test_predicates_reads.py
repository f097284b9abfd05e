"""Filters of a table read several times in one statement are tied to the read they filter."""

from __future__ import annotations

from lineage_platform.sql import extract_lineage


def _predicates(sql: str) -> list[dict]:
    return [p.to_dict() for p in extract_lineage(sql)[0].predicates]


def test_a_single_read_carries_no_read_number() -> None:
    assert _predicates("SELECT a FROM db.t WHERE dt = '2024-01-01'") == [
        {"table": "db.t", "column": "dt", "op": "=", "value": "2024-01-01"}
    ]


def test_each_read_of_a_union_gets_its_own_filters_or_an_unfiltered_mark() -> None:
    found = _predicates("SELECT a FROM db.t WHERE dt = '2024-01-01' UNION ALL SELECT a FROM db.t")
    assert {"table": "db.t", "column": "dt", "op": "=", "value": "2024-01-01", "read": 0} in found
    assert {"table": "db.t", "column": "*", "op": "UNFILTERED", "value": None, "read": 1} in found


def test_the_sides_of_a_self_join_are_told_apart_by_their_alias() -> None:
    found = _predicates(
        "SELECT x.a FROM db.t x JOIN db.t y ON x.a = y.a WHERE y.dt >= '2024-01-01' AND x.dt = '2024-01-05'"
    )
    assert {(p["op"], p["value"], p.get("read")) for p in found if p["column"] == "dt"} == {
        (">=", "2024-01-01", 1),
        ("=", "2024-01-05", 0),
    }


def test_a_filter_on_a_derived_column_leaves_its_read_marked_unfiltered() -> None:
    """It cannot be tied to one read, so the read counts as unfiltered (TTL advice stays on the safe side)."""
    found = _predicates(
        "SELECT a FROM (SELECT * FROM db.t) s WHERE s.dt = '2024-01-01' UNION ALL SELECT a FROM db.t WHERE dt = 'x'"
    )
    assert {"table": "db.t", "column": "*", "op": "UNFILTERED", "value": None, "read": 0} in found
