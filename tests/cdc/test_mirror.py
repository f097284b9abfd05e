"""The SQLite mirror: snapshot + changes reproduce the graph exactly; positions commit with the data."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from lineage_platform.cdc.content import GraphContent
from lineage_platform.cdc.log_capture import LogCapture
from lineage_platform.cdc.mirror import SqliteMirror
from lineage_platform.cdc.store_snapshot import snapshot_events, snapshot_of_store
from lineage_platform.cdc.subscriber import Position, Snapshot
from tests.cdc.workload import open_store, run_workload


def _bootstrap(mirror: SqliteMirror, store: Path) -> int:
    snapshot = snapshot_of_store(store)
    mirror.bootstrap(Snapshot(snapshot.scn, snapshot_events("g", snapshot)))
    return snapshot.scn


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_snapshot_then_changes_reproduce_a_random_graph_exactly(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    graph, g = open_store(tmp_path / "store")
    run_workload(g, rng, 150)
    mirror = SqliteMirror(tmp_path / "mirror.db", "changes")
    scn = _bootstrap(mirror, tmp_path / "store")
    assert mirror.content() == GraphContent.from_state(graph.graph.export_state())
    run_workload(g, rng, 150)
    for _, events in LogCapture(tmp_path / "store", scn).poll(10**6):
        mirror.apply(events, {})
    content = mirror.content()
    assert content.differences(GraphContent.from_state(graph.graph.export_state())) == {}
    assert content.vertices and content.edges and content.meta and content.edge_properties
    graph.close()


def test_bootstrap_replaces_everything_and_positions_are_kept(tmp_path: Path) -> None:
    graph, g = open_store(tmp_path / "store")
    run_workload(g, random.Random(7), 40)
    mirror = SqliteMirror(tmp_path / "mirror.db", "changes")
    mirror.apply([], {0: Position(10, 3, 1), 1: Position(4, 2, 0)})
    scn = _bootstrap(mirror, tmp_path / "store")
    assert mirror.load() == (scn, {})
    mirror.apply([], {1: Position(5, scn + 1, 2)})
    mirror.close()
    assert SqliteMirror(tmp_path / "mirror.db", "changes").load() == (scn, {1: Position(5, scn + 1, 2)})
    graph.close()


def test_the_bi_views_name_datasets_and_lineage(tmp_path: Path) -> None:
    graph, g = open_store(tmp_path / "store")
    src = g.add_v("table").property("qualifiedName", "db.src").next()
    dst = g.add_v("table").property("qualifiedName", "db.dst").next()
    job = g.add_v("process").property("qualifiedName", "process:1").next()
    g.V(src.id).as_("a").V(job.id).add_e("usedBy").from_("a").iterate()
    g.V(job.id).as_("p").V(dst.id).add_e("generated").from_("p").iterate()
    mirror = SqliteMirror(tmp_path / "mirror.db", "changes")
    _bootstrap(mirror, tmp_path / "store")
    assert sorted(mirror.query("SELECT label, qualified_name FROM datasets")) == [
        ("table", "db.dst"),
        ("table", "db.src"),
    ]
    assert sorted(mirror.query("SELECT label, source, target FROM lineage_edges")) == [
        ("generated", "process:1", "db.dst"),
        ("usedBy", "db.src", "process:1"),
    ]
    graph.close()
