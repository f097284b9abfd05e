"""The embedded store's versioned change feed (graph/changes.py): committed (scn, ops) after an SCN."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from lineage_platform.errors import StoreError
from lineage_platform.graph import backend_facts, connect
from lineage_platform.graph.changes import ChangeFeed
from lineage_platform.graph.embedded.storage import DurableLog


def _added_names(changes: list[tuple[int, list[tuple]]]) -> list[str]:
    return [op[4] for _, ops in changes for op in ops if op[0] == "addVP" and op[3] == "qualifiedName"]


def test_the_feed_yields_each_committed_write_after_an_scn_and_continues(tmp_path: Path) -> None:
    g = connect(f"embedded:{tmp_path / 'graph'}")
    for name in ("db.a", "db.b", "db.c"):
        g.add_v("table").property("qualifiedName", name).iterate()
    feed = ChangeFeed(backend_facts(g).store)

    everything = list(feed.changes(0))
    scns = [scn for scn, _ in everything]
    assert scns == sorted(scns) and len(set(scns)) == len(scns)
    assert _added_names(everything) == ["db.a", "db.b", "db.c"]
    last = scns[-1]
    assert list(feed.changes(last)) == []

    g.add_v("table").property("qualifiedName", "db.d").iterate()
    after = list(feed.changes(last))
    assert _added_names(after) == ["db.d"] and after[0][0] > last
    assert _added_names(list(feed.changes(0))) == [
        "db.a",
        "db.b",
        "db.c",
        "db.d",
    ]  # an earlier SCN reads again


def test_a_reader_that_stops_early_resumes_from_the_last_scn_it_took(tmp_path: Path) -> None:
    g = connect(f"embedded:{tmp_path / 'graph'}")
    for name in ("db.a", "db.b", "db.c", "db.d"):
        g.add_v("table").property("qualifiedName", name).iterate()
    everything = list(ChangeFeed(tmp_path / "graph").changes(0))
    resumed = ChangeFeed(tmp_path / "graph")
    head = list(itertools.islice(resumed.changes(0), 2))
    rest = list(resumed.changes(head[-1][0]))
    assert head + rest == everything
    assert _added_names(everything) == ["db.a", "db.b", "db.c", "db.d"]


def test_changes_retention_dropped_name_the_oldest_scn_still_held(tmp_path: Path) -> None:
    with DurableLog(tmp_path, retain_bytes=0) as store:
        store.recover()
        for n in (1, 2):
            store.append([("addV", n, "table")])
        store.checkpoint("two")
        store.append([("addV", 3, "table")])
    feed = ChangeFeed(tmp_path)
    assert feed.oldest_retained_scn() == 3
    with pytest.raises(StoreError, match="oldest retained SCN is 3"):
        list(feed.changes(1))
    assert list(feed.changes(2)) == [(3, [("addV", 3, "table")])]


def test_a_missing_store_is_a_clear_error(tmp_path: Path) -> None:
    feed = ChangeFeed(tmp_path / "nowhere")
    with pytest.raises(StoreError, match="no graph store at") as raised:
        list(feed.changes(0))
    assert raised.value.hint
    assert ChangeFeed(tmp_path).oldest_retained_scn() is None
