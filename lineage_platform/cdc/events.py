"""Change events: one per op of a committed transaction, in commit order, numbered by (SCN, seq).

A committed transaction is a list of op tuples (the embedded store's log records, or an outbox entry):

    ("addV", vid, label)                  ("dropV", vid)
    ("addE", eid, label, out_vid, in_vid) ("dropE", eid)
    ("addVP", vid, vpid, key, value)      ("dropVP", vid, vpid)
    ("setMeta", vid, vpid, key, value)    ("dropMeta", vid, vpid, key)
    ("setEP", eid, key, value)            ("dropEP", eid, key)

Each op becomes a :class:`ChangeEvent` about one element (the vertex for vertex, vertex-property and meta
ops; the edge for edge ops). Ops other than addV/addE carry no label, so a :class:`LabelIndex` remembers the
label of every live element and fills it in. Dropping a vertex is logged as the drops of its edges and
properties first, then the vertex itself, so a subscriber never has to cascade.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from lineage_platform.cdc.errors import ChangeCaptureError

VERTEX, EDGE = "vertex", "edge"
# op name -> kind of element it is about
OPS: dict[str, str] = {
    "addV": VERTEX,
    "dropV": VERTEX,
    "addVP": VERTEX,
    "dropVP": VERTEX,
    "setMeta": VERTEX,
    "dropMeta": VERTEX,
    "addE": EDGE,
    "dropE": EDGE,
    "setEP": EDGE,
    "dropEP": EDGE,
}


@dataclass(frozen=True, slots=True)
class ChangeEvent:
    """One change to one element of the graph.

    ``scn`` numbers the committed transaction, ``seq`` the op within it; together they order every event and
    identify it for de-duplication. ``property_id`` is the vertex property's id (addVP, dropVP, setMeta,
    dropMeta); ``key``/``value`` the property or meta-property key and value; ``out_id``/``in_id`` the ends of
    an added edge. ``label`` is None when the element's label could not be known (see LabelIndex).
    """

    graph: str
    scn: int
    seq: int
    timestamp_ms: int
    op: str
    element_id: Any
    label: str | None = None
    property_id: Any = None
    key: str | None = None
    value: Any = None
    out_id: Any = None
    in_id: Any = None

    @property
    def element_kind(self) -> str:
        """``vertex`` or ``edge``."""
        return OPS[self.op]

    @property
    def element_key(self) -> str:
        """The element's identity across kinds (``v:<id>`` / ``e:<id>``): the Kafka message key."""
        return f"{self.element_kind[0]}:{self.element_id}"

    @property
    def position(self) -> tuple[int, int]:
        """``(scn, seq)``: the event's place in the total order of changes."""
        return self.scn, self.seq


class LabelIndex:
    """The label of every live vertex and edge, kept current by the ops it sees.

    Seed it from a snapshot of the graph (:meth:`add_vertices`, :meth:`add_edges`) and feed it every
    transaction after that snapshot, in order, through :func:`ops_to_events`.
    """

    def __init__(self) -> None:
        self.vertices: dict[Any, str] = {}
        self.edges: dict[Any, str] = {}

    def add_vertices(self, pairs: Iterable[tuple[Any, str]]) -> None:
        """Remember ``(vertex id, label)`` pairs."""
        self.vertices.update(pairs)

    def add_edges(self, pairs: Iterable[tuple[Any, str]]) -> None:
        """Remember ``(edge id, label)`` pairs."""
        self.edges.update(pairs)

    def __len__(self) -> int:
        return len(self.vertices) + len(self.edges)


def ops_to_events(
    graph: str, scn: int, ops: list[tuple], timestamp_ms: int, labels: LabelIndex
) -> list[ChangeEvent]:
    """The change events of one committed transaction, in op order (``seq`` 0, 1, ...)."""
    vertices, edges = labels.vertices, labels.edges
    events = []
    for seq, op in enumerate(ops):
        kind = op[0]
        if kind == "addV":
            vertices[op[1]] = op[2]
            event = ChangeEvent(graph, scn, seq, timestamp_ms, kind, op[1], op[2])
        elif kind == "addE":
            edges[op[1]] = op[2]
            event = ChangeEvent(graph, scn, seq, timestamp_ms, kind, op[1], op[2], out_id=op[3], in_id=op[4])
        elif kind == "addVP" or kind == "setMeta":
            event = ChangeEvent(
                graph, scn, seq, timestamp_ms, kind, op[1], vertices.get(op[1]), op[2], op[3], op[4]
            )
        elif kind == "dropVP":
            event = ChangeEvent(graph, scn, seq, timestamp_ms, kind, op[1], vertices.get(op[1]), op[2])
        elif kind == "dropMeta":
            event = ChangeEvent(graph, scn, seq, timestamp_ms, kind, op[1], vertices.get(op[1]), op[2], op[3])
        elif kind == "setEP":
            event = ChangeEvent(
                graph, scn, seq, timestamp_ms, kind, op[1], edges.get(op[1]), None, op[2], op[3]
            )
        elif kind == "dropEP":
            event = ChangeEvent(graph, scn, seq, timestamp_ms, kind, op[1], edges.get(op[1]), None, op[2])
        elif kind == "dropV":
            event = ChangeEvent(graph, scn, seq, timestamp_ms, kind, op[1], vertices.pop(op[1], None))
        elif kind == "dropE":
            event = ChangeEvent(graph, scn, seq, timestamp_ms, kind, op[1], edges.pop(op[1], None))
        else:
            raise ChangeCaptureError(
                f"transaction {scn} holds an op this version does not understand: {op!r}",
                hint="upgrade lineage-platform on the relay to the version that wrote the store",
            )
        events.append(event)
    return events
