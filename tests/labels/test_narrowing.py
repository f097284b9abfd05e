"""Narrowing (``WHERE app = 'douyin'`` narrows APP) looks at the reads of the labelled table only, and a statement
that reads the table several times narrows only when every read does."""

from __future__ import annotations

import pytest

from lineage_platform.graph import connect
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.labels import Declaration, Label, declare, propagate
from lineage_platform.labels.propagate import labels_of
from lineage_platform.sql import extract_lineage

SCHEMA = """
CREATE TABLE ods.events (uid BIGINT, app STRING, event STRING);
CREATE TABLE dim.apps (app STRING, owner STRING);
"""


def _apps_reaching(target: str, statement: str) -> set[str]:
    g = connect("memory:")
    LineageWriter(g).write(extract_lineage(SCHEMA + statement))
    declare(
        g, [Declaration("ods.events", (Label("APP", "douyin"), Label("APP", "toutiao")))], declared_by="t"
    )
    propagate(g)
    return {
        str(t.label)
        for t in labels_of(g, [target]).get(target, [])
        if t.origin == "propagated" and t.label.key == "APP"
    }


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("INSERT INTO dw.d SELECT uid, event FROM ods.events WHERE app = 'douyin'", {"APP=douyin"}),
        ("INSERT INTO dw.d SELECT uid, event FROM ods.events WHERE app <> 'toutiao'", {"APP=douyin"}),
        # one read narrowed, one read of everything: both business lines reach the target
        (
            "INSERT INTO dw.d SELECT uid, event FROM ods.events WHERE app = 'douyin' "
            "UNION ALL SELECT uid, event FROM ods.events",
            {"APP=douyin", "APP=toutiao"},
        ),
        (
            "INSERT INTO dw.d SELECT uid, event FROM ods.events WHERE app = 'douyin' "
            "UNION ALL SELECT uid, event FROM ods.events WHERE app IN ('douyin')",
            {"APP=douyin"},
        ),
        # a filter on another table's app column: the join may or may not pass it on, so nothing is dropped
        (
            "INSERT INTO dw.d SELECT e.uid, e.event FROM ods.events e JOIN dim.apps a ON e.uid = 1 "
            "WHERE a.app = 'douyin'",
            {"APP=douyin", "APP=toutiao"},
        ),
    ],
    ids=["equal", "not-equal", "one-read-unfiltered", "every-read-narrowed", "other-table"],
)
def test_narrowing_follows_the_reads_of_the_labelled_table(statement: str, expected: set[str]) -> None:
    assert _apps_reaching("dw.d", statement + ";") == expected
