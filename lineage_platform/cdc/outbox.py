"""Change source 2: an outbox the graph writer fills in the same transaction as its writes (any backend).

With an :class:`Outbox` passed to :class:`~lineage_platform.graph.writer.LineageWriter`, each flush runs in
one transaction that also bumps a counter vertex (``cdcOutboxCounter``) and adds one ``cdcOutbox`` vertex
holding the flush's changes as op tuples (JSON) under that sequence number. Both commit or neither does, so
the outbox holds exactly the committed writes, numbered without gaps. :class:`OutboxCapture` reads entries in
sequence order through Gremlin, and once the relay has published and checkpointed them, drops them.

Only what goes through the writer is captured (that is the outbox pattern): on the embedded store, the log
tail (:mod:`.log_capture`) sees every write instead. The writer only ever creates elements, so outbox ops are
``addV``/``addVP``/``addE``/``setEP``; vertex properties are identified by their key (single cardinality).
On JanusGraph, give ``cdcOutboxCounter.seq`` a LOCK consistency so concurrent writers serialise on it.
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
from lineage_platform.cdc.values import from_avro, to_avro

OUTBOX_LABEL = "cdcOutbox"
COUNTER_LABEL = "cdcOutboxCounter"


def _encode_ops(ops: list[tuple]) -> str:
    return json.dumps(
        [[*op[:-1], to_avro(op[-1])] if op[0] in ("addVP", "setEP") else list(op) for op in ops]
    )


def _decode_ops(text: str) -> list[tuple]:
    return [
        (*op[:-1], from_avro(op[-1])) if op[0] in ("addVP", "setEP") else tuple(op) for op in json.loads(text)
    ]


class Outbox:
    """The writer hook: records a transaction's changes in the outbox, inside that transaction."""

    def record(self, g: GraphTraversalSource, ops: list[tuple]) -> int | None:
        """Add the outbox entry for ``ops`` through ``g`` (bound to the open transaction); its sequence number."""
        if not ops:
            return None
        seq = (
            g.V()
            .has_label(COUNTER_LABEL)
            .fold()
            .coalesce(__.unfold(), __.add_v(COUNTER_LABEL).property("seq", long(0)))
            .values("seq")
            .next()
        ) + 1
        g.V().has_label(COUNTER_LABEL).property("seq", long(seq)).iterate()
        (
            g.add_v(OUTBOX_LABEL)
            .property("seq", long(seq))
            .property("committedAt", long(time.time_ns() // 1_000_000))
            .property("ops", _encode_ops(ops))
            .iterate()
        )
        return seq


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
            .has("seq", P.gt(long(self.scn)))
            .order()
            .by("seq")
            .limit(long(max_transactions))
            .value_map("seq", "committedAt", "ops")
            .to_list()
        )
        for entry in entries:
            seq = entry["seq"][0]
            ops = _decode_ops(entry["ops"][0])
            self.scn = seq
            yield seq, ops_to_events(self.graph, seq, ops, entry["committedAt"][0], self._labels)

    def acknowledge(self, scn: int) -> None:
        """Drop the outbox entries up to ``scn``: they are published and checkpointed."""
        self.g.V().has_label(OUTBOX_LABEL).has("seq", P.lte(long(scn))).drop().iterate()


def snapshot_of_graph(g: GraphTraversalSource, *, graph: str = "graph") -> Snapshot:
    """A consistent snapshot for subscribers of an outbox relay, read through Gremlin in one transaction.

    Its SCN is the outbox counter read in the same transaction, so catching up from the topic after it
    neither misses nor repeats a flush. Vertex properties are named by key, as in outbox events.
    """
    tx = g.tx()
    gtx = tx.begin()
    try:
        seq = gtx.V().has_label(COUNTER_LABEL).values("seq").fold().next()
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
        ops.append(("addV", vertex["id"], vertex["label"]))
        ops.extend(
            ("addVP", vertex["id"], key, key, value)
            for key, values in vertex["properties"].items()
            for value in values
        )
    for edge in edges:
        ops.append(("addE", edge["id"], edge["label"], edge["out"], edge["in"]))
        ops.extend(("setEP", edge["id"], key, value) for key, value in edge["properties"].items())
    return Snapshot(scn, ops_to_events(graph, scn, ops, time.time_ns() // 1_000_000, LabelIndex()))
