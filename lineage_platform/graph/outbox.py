"""The write side of change capture's outbox: every product write to a remote graph records what it changed.

A change set (:func:`change_set`) runs a write path's traversals in one transaction which also bumps a counter
vertex (``cdcOutboxCounter``) and adds one ``cdcOutbox`` vertex holding the changes as op tuples (JSON) under
that sequence number. Both commit or neither does, so the outbox holds exactly the committed writes, numbered
without gaps; ``lineage cdc relay --graph URL`` publishes them (lineage_platform/cdc/outbox.py).

The outbox is on for a ``ws://`` graph when ``LINEAGE_GRAPH_OUTBOX`` is set (``connect()`` binds it to the
connection); an embedded store needs none, its log tail sees every write. Upserts are recorded as what the
element holds after them (``addV``/``addVP``/``addE``/``setEP``; subscribers apply them as upserts), removals
as ``dropE``/``dropV``; vertex properties are named by their key (single cardinality). Element ids that are
neither int nor str (JanusGraph's edge ids) are recorded as text.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.statics import long

from lineage_platform.errors import ConfigError
from lineage_platform.graph.change_values import encode_value
from lineage_platform.graph.connect import supports_transactions
from lineage_platform.graph.vocabulary import Key, VertexLabel

OUTBOX_LABEL = VertexLabel.CDC_OUTBOX
COUNTER_LABEL = VertexLabel.CDC_OUTBOX_COUNTER
STATE_BATCH = 500  # elements read back per traversal by record_state


def op_id(element_id: Any) -> Any:
    """An element id as outbox ops carry it: ints and strings as they are, other ids (RelationIdentifier) as text."""
    return element_id if isinstance(element_id, (int, str)) else str(element_id)


def vertex_ops(vertex_id: Any, label: str, properties: Mapping[str, Any]) -> list[tuple]:
    """Ops of a vertex that holds ``properties`` after an upsert."""
    vid = op_id(vertex_id)
    return [("addV", vid, label)] + [("addVP", vid, key, key, value) for key, value in properties.items()]


def edge_ops(edge_id: Any, label: str, out_id: Any, in_id: Any, properties: Mapping[str, Any]) -> list[tuple]:
    """Ops of an edge that holds ``properties`` after an upsert."""
    eid = op_id(edge_id)
    return [("addE", eid, label, op_id(out_id), op_id(in_id))] + [
        ("setEP", eid, key, value) for key, value in properties.items()
    ]


def record_state(
    g: GraphTraversalSource, ops: list[tuple] | None, vertices: Iterable[Any] = (), edges: Iterable[Any] = ()
) -> None:
    """Append to ``ops`` (unless None) what the given vertices and edges hold now, read through ``g`` (the open
    transaction): how a write path records the elements it upserted."""
    if ops is None:
        return
    vertex_ids, edge_ids = list(dict.fromkeys(vertices)), list(dict.fromkeys(edges))
    for start in range(0, len(vertex_ids), STATE_BATCH):
        rows = (
            g.V(*vertex_ids[start : start + STATE_BATCH])
            .project("id", "label", "properties")
            .by(__.id_())
            .by(__.label())
            .by(__.value_map())
            .to_list()
        )
        for row in rows:
            values = {key: value[0] for key, value in row["properties"].items()}
            ops.extend(vertex_ops(row["id"], row["label"], values))
    for start in range(0, len(edge_ids), STATE_BATCH):
        rows = (
            g.E(*edge_ids[start : start + STATE_BATCH])
            .project("id", "label", "out", "in", "properties")
            .by(__.id_())
            .by(__.label())
            .by(__.out_v().id_())
            .by(__.in_v().id_())
            .by(__.value_map())
            .to_list()
        )
        for row in rows:
            ops.extend(edge_ops(row["id"], row["label"], row["out"], row["in"], row["properties"]))


def matching_edges(
    g: GraphTraversalSource, label: str, wanted: Iterable[tuple[Any, Any, Mapping[str, Any]]]
) -> list[Any]:
    """Ids of the ``label`` edges, as they are now, from each ``out`` to its ``in`` holding the given properties.

    An upsert that changes an edge's properties may give the edge a new id (JanusGraph re-creates it), so a write
    path records the edges it updated by reading them again, not by the ids its traversal returned.
    """
    by_ends: dict[tuple[Any, Any], list[Mapping[str, Any]]] = {}
    for out, in_, properties in wanted:
        by_ends.setdefault((op_id(out), op_id(in_)), []).append(properties)
    outs = list(dict.fromkeys(out for out, _ in by_ends))
    found = []
    for start in range(0, len(outs), STATE_BATCH):
        rows = (
            g.V(*outs[start : start + STATE_BATCH])
            .out_e(label)
            .project("id", "out", "in", "properties")
            .by(__.id_())
            .by(__.out_v().id_())
            .by(__.in_v().id_())
            .by(__.value_map())
            .to_list()
        )
        for row in rows:
            held = row["properties"]
            if any(
                all(held.get(key) == value for key, value in properties.items())
                for properties in by_ends.get((op_id(row["out"]), op_id(row["in"])), ())
            ):
                found.append(row["id"])
    return found


def record_drops(
    g: GraphTraversalSource, ops: list[tuple] | None, vertices: Iterable[Any] = (), edges: Iterable[Any] = ()
) -> None:
    """Append to ``ops`` (unless None) the removal of the given edges and vertices, read through ``g`` before they
    are dropped: a vertex's edges and properties go first, as the embedded store logs them."""
    if ops is None:
        return
    edge_ids = [op_id(edge_id) for edge_id in edges]
    vertex_drops: list[tuple] = []
    vertex_ids = list(dict.fromkeys(vertices))
    for start in range(0, len(vertex_ids), STATE_BATCH):
        rows = (
            g.V(*vertex_ids[start : start + STATE_BATCH])
            .project("id", "edges", "keys")
            .by(__.id_())
            .by(__.both_e().id_().fold())
            .by(__.properties().key().fold())
            .to_list()
        )
        for row in rows:
            vid = op_id(row["id"])
            edge_ids += [op_id(edge_id) for edge_id in row["edges"]]
            vertex_drops.extend(("dropVP", vid, key) for key in row["keys"])
            vertex_drops.append(("dropV", vid))
    ops.extend(("dropE", edge_id) for edge_id in dict.fromkeys(edge_ids))
    ops.extend(vertex_drops)


class Outbox:
    """Records a transaction's changes in the outbox, inside that transaction."""

    def record(self, g: GraphTraversalSource, ops: list[tuple]) -> int | None:
        """Add the outbox entry for ``ops`` through ``g`` (bound to the open transaction); its sequence number."""
        if not ops:
            return None
        seq = (
            g.V()
            .has_label(COUNTER_LABEL)
            .fold()
            .coalesce(__.unfold(), __.add_v(COUNTER_LABEL).property(Key.SEQ, long(0)))
            .values(Key.SEQ)
            .next()
        ) + 1
        g.V().has_label(COUNTER_LABEL).property(Key.SEQ, long(seq)).iterate()
        encoded = json.dumps(
            [
                [*map(op_id, op[:-1]), encode_value(op[-1])]
                if op[0] in ("addVP", "setEP")
                else list(map(op_id, op))
                for op in ops
            ]
        )
        (
            g.add_v(OUTBOX_LABEL)
            .property(Key.SEQ, long(seq))
            .property(Key.COMMITTED_AT, long(time.time_ns() // 1_000_000))
            .property(Key.OPS, encoded)
            .iterate()
        )
        return seq


def outbox_of(g: GraphTraversalSource) -> Outbox | None:
    """The outbox bound to ``g``'s connection by :func:`~lineage_platform.graph.connect.connect`, if any."""
    for strategy in g.traversal_strategies.traversal_strategies:
        outbox = getattr(getattr(strategy, "remote_connection", None), "outbox", None)
        if outbox is not None:
            return outbox
    return None


@contextmanager
def change_set(
    g: GraphTraversalSource, outbox: Outbox | None = None, *, atomic: bool = False
) -> Iterator[tuple[GraphTraversalSource, list[tuple] | None]]:
    """``(source, ops)`` for one write: with an outbox (``outbox``, else the one bound to ``g``), a transaction
    whose ops (appended by the caller) are recorded in the outbox on commit; without, ``g`` and None (a
    transaction all the same when ``atomic`` and the graph has transactions). An outbox on a graph without
    transactions is refused before anything is written."""
    outbox = outbox or outbox_of(g)
    if outbox is None and not (atomic and supports_transactions(g)):
        yield g, None  # a graph without transactions (TinkerGraph): each traversal stands alone
        return
    if not supports_transactions(g):
        raise ConfigError(
            "change capture needs a graph with transactions (the outbox is written in the same transaction)",
            hint="write to JanusGraph or the embedded graph, or leave change capture off for this graph",
        )
    tx = g.tx()
    gtx = tx.begin()
    ops: list[tuple] | None = [] if outbox is not None else None
    try:
        yield gtx, ops
        if outbox is not None and ops is not None:
            outbox.record(gtx, ops)
        tx.commit()
    except BaseException:
        tx.rollback()
        raise
