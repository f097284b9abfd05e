"""The SQLite mirror: snapshot + changes reproduce the graph exactly; positions commit with the data."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import random
import uuid
from pathlib import Path

import pytest

from lineage_platform.cdc.avro import decode_event, encode_event
from lineage_platform.cdc.content import GraphContent, freeze
from lineage_platform.cdc.events import ChangeEvent
from lineage_platform.cdc.log_capture import LogCapture
from lineage_platform.cdc.mirror import SqliteMirror
from lineage_platform.cdc.store_snapshot import snapshot_events, snapshot_of_store
from lineage_platform.cdc.subscriber import Position, Snapshot
from lineage_platform.cdc.values import to_avro
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


EXACT_VALUES = [
    math.nan,
    math.inf,
    -math.inf,
    -0.0,
    5e-324,
    2**63,
    -(2**63) - 1,
    2**100,
    decimal.Decimal("12.30"),
    decimal.Decimal("-0"),
    decimal.Decimal("NaN"),
    dt.datetime(2026, 11, 22, 3, 14, 15, 926535, tzinfo=dt.timezone(dt.timedelta(hours=8))),
    dt.datetime(2026, 11, 22, 3, 14),
    dt.date(2026, 1, 2),
    uuid.UUID(int=2**127 + 3),
    [math.nan, -0.0, 2**70, [math.inf, [decimal.Decimal("1E+3")]]],
    {"k": {"nested": [1, {"x", "y"}], "nan": math.nan}, 7: -math.inf},
    {-0.5, 2**64, "s"},
]


def _exact(value: object) -> object:
    """The value with its type at every level, and floats/decimals by their exact spelling."""
    return (type(value).__name__, freeze(value))


@pytest.mark.parametrize("value", EXACT_VALUES, ids=repr)
def test_every_value_type_keeps_its_value_and_type_through_avro_into_the_mirror(
    tmp_path: Path, value: object
) -> None:
    """Failed before: a NaN reached SQLite as NULL, and NaN/inf inside lists or maps went out as non-standard JSON."""
    event = decode_event(encode_event(ChangeEvent("g", 1, 0, 1, "addVP", 1, "column", 2, "p", value)))
    datum = to_avro(value)
    if isinstance(datum, dict):
        json.loads(datum["json"], parse_constant=lambda word: pytest.fail(f"non-standard JSON {word}"))
    mirror = SqliteMirror(tmp_path / "mirror.db", "changes")
    mirror.apply([event, ChangeEvent("g", 1, 1, 1, "setEP", "e-1", "flowsTo", key="k", value=value)], {})
    mirror.close()
    content = SqliteMirror(tmp_path / "mirror.db", "changes").content()
    [(_, _, _, stored)] = content.properties
    [(_, _, edge_value)] = content.edge_properties
    assert stored == edge_value == freeze(value)
    assert _exact(event.value) == _exact(value)
