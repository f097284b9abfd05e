"""``ALTER TABLE … ADD COLUMN(S)`` moves no data (no lineage), but later statements of the script see the columns."""

from __future__ import annotations

import pytest

from lineage_platform.sql import extract_lineage


@pytest.mark.parametrize(
    ("dialect", "alter"),
    [
        ("hive", "ALTER TABLE db.t ADD COLUMNS (b STRING, c INT)"),
        ("spark", "ALTER TABLE db.t ADD COLUMNS (b STRING, c INT)"),
        ("postgres", "ALTER TABLE db.t ADD COLUMN b TEXT, ADD COLUMN c INT"),
        ("mysql", "ALTER TABLE db.t ADD COLUMN b TEXT, ADD COLUMN c INT"),
    ],
)
def test_star_after_add_columns_reads_the_new_columns(dialect: str, alter: str) -> None:
    _, altered, insert = extract_lineage(
        f"CREATE TABLE db.t (a INT); {alter}; INSERT INTO db.u SELECT * FROM db.t", dialect=dialect
    )
    assert (altered.operation, altered.inputs, altered.outputs) == ("OTHER", (), ())
    assert sorted((e.source, e.target) for e in insert.column_edges) == [
        ("db.t.a", "db.u.a"),
        ("db.t.b", "db.u.b"),
        ("db.t.c", "db.u.c"),
    ]


def test_an_unknown_table_learns_nothing_from_added_columns() -> None:
    _, insert = extract_lineage("ALTER TABLE db.x ADD COLUMNS (z INT); INSERT INTO db.v SELECT * FROM db.x")
    assert not insert.column_edges  # its other columns are unknown: no partial star expansion
