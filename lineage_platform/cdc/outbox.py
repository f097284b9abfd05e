"""Change source 2: the outbox every product write path fills in the same transaction as its writes (any backend).

The write side lives in :mod:`lineage_platform.graph.outbox`: the lineage writer, labels, grants and the NetFlow
catalog write through ``change_set(g)``, which on a graph with an outbox bound (``ws://`` with
``LINEAGE_GRAPH_OUTBOX`` set) commits their writes together with one ``cdcOutbox`` vertex holding the changes as
op tuples, numbered by the ``cdcOutboxCounter`` without gaps. :class:`OutboxCapture` reads entries in sequence
order through Gremlin, and once the relay has published and checkpointed them, drops them.

Only what goes through the product's write paths is captured (that is the outbox pattern): on the embedded
store, the log tail (:mod:`.log_capture`) sees every write instead. Outbox ops are
``addV``/``addVP``/``addE``/``setEP`` (upserts) and ``dropE``/``dropV``; vertex properties are identified by
their key (single cardinality).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.process.traversal import P
from gremlin_python.statics import long

from lineage_platform.cdc.events import ChangeEvent, LabelIndex, ops_to_events
from lineage_platform.cdc.subscriber import Snapshot
from lineage_platform.graph.change_values import decode_value
from lineage_platform.graph.outbox import COUNTER_LABEL, OUTBOX_LABEL, Outbox, op_id
from lineage_platform.graph.vocabulary import Key

__all__ = ["COUNTER_LABEL", "OUTBOX_LABEL", "Outbox", "OutboxCapture", "snapshot_of_graph"]


def _decode_ops(text: str) -> list[tuple]:
    return [
        (*op[:-1], decode_value(op[-1])) if op[0] in ("addVP", "setEP") else tuple(op)
        for op in json.loads(text)
    ]


class OutboxCapture:
    """The outbox entries after ``after_seq``, as change events numbered by the outbox sequence."""

    def __init__(self, g: GraphTraversalSource, after_seq: int = 0, *, graph: str = "graph") -> None:
        self.g = g
        self.graph = graph
        self.scn = after_seq
        self._labels = LabelIndex()

    @property
    def name(self) -> str:
        """Identity of this source, recorded in the relay checkpoint."""
        return f"outbox:{self.graph}"

    def poll(self, max_transactions: int) -> Iterator[tuple[int, list[ChangeEvent]]]:
        """``(seq, events)`` of up to ``max_transactions`` outbox entries after the last one polled."""
        entries = (
            self.g.V()
            .has_label(OUTBOX_LABEL)
            .has(Key.SEQ, P.gt(long(self.scn)))
            .order()
            .by(Key.SEQ)
            .limit(long(max_transactions))
            .value_map(Key.SEQ, Key.COMMITTED_AT, Key.OPS)
            .to_list()
        )
        for entry in entries:
            seq = entry[Key.SEQ][0]
            ops = _decode_ops(entry[Key.OPS][0])
            self.scn = seq
            yield seq, ops_to_events(self.graph, seq, ops, entry[Key.COMMITTED_AT][0], self._labels)

    def acknowledge(self, scn: int) -> None:
        """Drop the outbox entries up to ``scn``: they are published and checkpointed."""
        self.g.V().has_label(OUTBOX_LABEL).has(Key.SEQ, P.lte(long(scn))).drop().iterate()


def snapshot_of_graph(g: GraphTraversalSource, *, graph: str = "graph") -> Snapshot:
    """A consistent snapshot for subscribers of an outbox relay, read through Gremlin in one transaction.

    Its SCN is the outbox counter read in the same transaction, so catching up from the topic after it
    neither misses nor repeats a flush. Vertex properties are named by key, as in outbox events.
    """
    tx = g.tx()
    gtx = tx.begin()
    try:
        seq = gtx.V().has_label(COUNTER_LABEL).values(Key.SEQ).fold().next()
        vertices = (
            gtx.V()
            .not_(__.has_label(P.within(OUTBOX_LABEL, COUNTER_LABEL)))
            .project("id", "label", "properties")
            .by(__.id_())
            .by(__.label())
            .by(__.value_map())
            .to_list()
        )
        edges = (
            gtx.E()
            .project("id", "label", "out", "in", "properties")
            .by(__.id_())
            .by(__.label())
            .by(__.out_v().id_())
            .by(__.in_v().id_())
            .by(__.value_map())
            .to_list()
        )
    finally:
        tx.rollback()
    scn = seq[0] if seq else 0
    ops: list[tuple] = []
    for vertex in vertices:
        ops.append(("addV", op_id(vertex["id"]), vertex["label"]))
        ops.extend(
            ("addVP", op_id(vertex["id"]), key, key, value)
            for key, values in vertex["properties"].items()
            for value in values
        )
    for edge in edges:
        eid = op_id(edge["id"])
        ops.append(("addE", eid, edge["label"], op_id(edge["out"]), op_id(edge["in"])))
        ops.extend(("setEP", eid, key, value) for key, value in edge["properties"].items())
    return Snapshot(scn, ops_to_events(graph, scn, ops, time.time_ns() // 1_000_000, LabelIndex()))
