"""Consistent views of an embedded store read from its files, without its lock: labels and full snapshots.

The store keeps its newest snapshot (the graph after some SCN) and the log after it. Loading the snapshot and
replaying the log gives the graph exactly as of the last SCN replayed, while another process keeps writing.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from lineage_platform.cdc.errors import ChangeCaptureError
from lineage_platform.cdc.events import ChangeEvent, LabelIndex, ops_to_events
from lineage_platform.errors import StoreError
from lineage_platform.graph.changes import ChangeFeed, MemGraph, read_snapshot, state_labels

_ATTEMPTS = 5  # a concurrent checkpoint may delete the snapshot we listed; then list again


def _newest_snapshot(store: Path) -> tuple[int, tuple | None]:
    """``(scn, state)`` of the store's newest snapshot (a ``MemGraph`` snapshot state, version 1 or 2), or ``(0, None)`` for a store that has none yet."""
    if not store.is_dir():
        raise StoreError(f"no graph store at {store}", hint="pass the directory of an embedded graph store")
    for _ in range(_ATTEMPTS):
        snapshots = sorted(store.glob("snapshot-*.snap"))
        if not snapshots:
            return 0, None
        try:
            return read_snapshot(snapshots[-1])
        except FileNotFoundError:
            continue
    raise ChangeCaptureError(
        f"the snapshot of {store} kept changing while being read",
        hint="try again; the store is checkpointing very often",
    )


@dataclass
class StoreSnapshot:
    """The graph as of ``scn`` as an export-state tuple (see MemGraph.export_state)."""

    scn: int
    state: tuple


def snapshot_of_store(store: Path) -> StoreSnapshot:
    """A consistent snapshot of the store as of its newest committed SCN: the snapshot file plus the log."""
    store = Path(store)
    scn, state = _newest_snapshot(store)
    graph = MemGraph()
    if state is not None:
        graph.import_state(state)
    for record_scn, ops in ChangeFeed(store).changes(scn):
        graph.apply(ops)
        scn = record_scn
    return StoreSnapshot(scn, graph.export_state())


def labels_as_of(store: Path, after_scn: int) -> LabelIndex:
    """Labels of the store's elements as of ``after_scn`` (where a relay resumes).

    Built from the newest snapshot plus the log up to ``after_scn``. When the snapshot is already newer than
    ``after_scn``, elements created and dropped in between cannot be known: their events carry no label.
    """
    store = Path(store)
    scn, state = _newest_snapshot(store)
    labels = LabelIndex()
    if state is not None:
        vertices, edges = state_labels(state)
        labels.add_vertices(vertices)
        labels.add_edges(edges)
    if scn < after_scn:
        for record_scn, ops in ChangeFeed(store).changes(scn):
            if record_scn > after_scn:
                break
            ops_to_events("", record_scn, ops, 0, labels)
    return labels


def snapshot_events(graph: str, snapshot: StoreSnapshot) -> Iterator[ChangeEvent]:
    """The snapshot as the events that rebuild it from nothing, all stamped with the snapshot's SCN."""
    _version, _next_id, vertices, vprops, edges = snapshot.state
    seq = itertools.count()
    scn, now_ms = snapshot.scn, time.time_ns() // 1_000_000
    for vid, label in vertices:
        yield ChangeEvent(graph, scn, next(seq), now_ms, "addV", vid, label)
    labels = dict(vertices)
    for vid, vpid, key, value, meta in vprops:
        yield ChangeEvent(graph, scn, next(seq), now_ms, "addVP", vid, labels[vid], vpid, key, value)
        for meta_key, meta_value in (meta or {}).items():
            yield ChangeEvent(
                graph, scn, next(seq), now_ms, "setMeta", vid, labels[vid], vpid, meta_key, meta_value
            )
    for eid, label, out_id, in_id, props in edges:
        yield ChangeEvent(graph, scn, next(seq), now_ms, "addE", eid, label, out_id=out_id, in_id=in_id)
        for key, value in (props or {}).items():
            yield ChangeEvent(graph, scn, next(seq), now_ms, "setEP", eid, label, None, key, value)
