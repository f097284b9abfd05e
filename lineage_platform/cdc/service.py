"""Ready-made relays and subscribers, as the `lineage cdc` commands run them."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from lineage_platform.cdc.checkpoint import RelayCheckpoint
from lineage_platform.cdc.log_capture import LogCapture
from lineage_platform.cdc.mirror import SqliteMirror
from lineage_platform.cdc.outbox import OutboxCapture, snapshot_of_graph
from lineage_platform.cdc.relay import ChangeSource, Relay
from lineage_platform.cdc.store_snapshot import snapshot_events, snapshot_of_store
from lineage_platform.cdc.subscriber import Snapshot, Subscriber


def log_relay(
    store: str | os.PathLike,
    brokers: str,
    topic: str,
    checkpoint: str | os.PathLike,
    *,
    start_scn: int | None = None,
) -> Relay:
    """A relay tailing an embedded store's log, resuming at its checkpoint (or after ``start_scn``)."""
    name = f"log:{Path(store).resolve()}"
    return _relay(lambda scn: LogCapture(store, scn), name, brokers, topic, checkpoint, start_scn)


def outbox_relay(
    graph_url: str, brokers: str, topic: str, checkpoint: str | os.PathLike, *, start_scn: int | None = None
) -> Relay:
    """A relay publishing the outbox of the graph at ``graph_url`` (embedded or a Gremlin Server)."""
    from lineage_platform.graph import connect

    g = connect(graph_url)
    return _relay(
        lambda scn: OutboxCapture(g, scn, graph=graph_url),
        f"outbox:{graph_url}",
        brokers,
        topic,
        checkpoint,
        start_scn,
    )


def _relay(
    make_source: Callable[[int], ChangeSource],
    name: str,
    brokers: str,
    topic: str,
    checkpoint: str | os.PathLike,
    start_scn: int | None,
) -> Relay:
    saved = RelayCheckpoint(checkpoint, name)
    source = make_source(saved.load() if start_scn is None else start_scn)
    return Relay(source, brokers, topic, saved)


def store_snapshot_source(store: str | os.PathLike) -> Callable[[], Snapshot]:
    """A snapshot maker for subscribers of a log relay: the store's graph as of its newest SCN."""

    def take() -> Snapshot:
        snapshot = snapshot_of_store(Path(store))
        return Snapshot(snapshot.scn, snapshot_events(Path(store).name, snapshot))

    return take


def graph_snapshot_source(graph_url: str) -> Callable[[], Snapshot]:
    """A snapshot maker for subscribers of an outbox relay: the graph read through Gremlin in one transaction."""

    def take() -> Snapshot:
        from lineage_platform.graph import connect

        return snapshot_of_graph(connect(graph_url), graph=graph_url)

    return take


def mirror_subscriber(
    mirror_path: str | os.PathLike,
    brokers: str,
    topic: str,
    *,
    store: str | os.PathLike | None = None,
    graph_url: str | None = None,
    since_scn: int | None = None,
    rebootstrap: bool = False,
) -> Subscriber:
    """A subscriber keeping the SQLite mirror at ``mirror_path`` in sync with ``topic``.

    A new mirror is bootstrapped from the embedded ``store`` (log relays), else starts empty after
    ``since_scn``, else is bootstrapped through Gremlin from ``graph_url`` (outbox relays).
    """
    sink = SqliteMirror(mirror_path, topic)
    if store is not None:
        snapshot = store_snapshot_source(store)
    elif since_scn is None and graph_url is not None:
        snapshot = graph_snapshot_source(graph_url)
    else:
        snapshot = None
    return Subscriber(brokers, topic, sink, snapshot=snapshot, since_scn=since_scn, rebootstrap=rebootstrap)
