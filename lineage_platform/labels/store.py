"""Labels in the graph: one ``classification`` vertex per label, ``taggedWith`` edges from the labelled vertex.

Each ``taggedWith`` edge records how the vertex got the label: ``origin`` declared (``declaredBy``) or propagated
(``fromName`` and ``fromLabel``: the vertex and label it came from; ``via``: the process; ``rule``: the edge
transform or rule that carried it; ``round``: the propagation round).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.process.traversal import Direction, Merge, P, T
from gremlin_python.statics import long

from lineage_platform.graph.outbox import change_set, matching_edges, op_id, record_drops, record_state
from lineage_platform.labels.label import Label


@dataclass(frozen=True)
class Tagging:
    """One label on one vertex, with its provenance."""

    vertex: Any
    label: Label
    origin: str  # declared | propagated
    from_name: str = ""
    from_label: str = ""
    via: str = ""
    rule: str = ""
    round: int = 0
    declared_by: str = ""

    def properties(self) -> dict[str, Any]:
        """The edge properties that store this tagging."""
        return {
            "origin": self.origin,
            "fromName": self.from_name,
            "fromLabel": self.from_label,
            "via": self.via,
            "rule": self.rule,
            "round": self.round,
            "declaredBy": self.declared_by,
        }


def classification_ids(g: GraphTraversalSource, labels: Iterable[Label]) -> dict[Label, Any]:
    """Upsert the classification vertices of these labels; their ids by label."""
    with change_set(g) as (source, ops):
        return _upsert_classifications(source, labels, ops)


def _upsert_classifications(
    g: GraphTraversalSource, labels: Iterable[Label], ops: list[tuple] | None
) -> dict[Label, Any]:
    wanted = sorted(set(labels))
    if not wanted:
        return {}
    rows = [
        {
            "match": {T.label: "classification", "qualifiedName": str(label)},
            "create": {
                "name": str(label),
                "typeName": "classification",
                "labelKey": label.key,
                "labelValue": label.value,
            },
        }
        for label in wanted
    ]
    ids = (
        g.inject(*rows)
        .merge_v(__.select("match"))
        .option(Merge.on_create, __.select("create"))
        .id_()
        .to_list()
    )
    record_state(g, ops, vertices=ids)
    return dict(zip(wanted, ids))


def read_taggings(
    g: GraphTraversalSource, *, origin: str | None = None, vertices: Iterable[Any] | None = None
):
    """Stored taggings (optionally of one origin, or of some vertices) with their edge ids: [(edge id, Tagging)]."""
    start = (
        g.V(*vertices).out_e("taggedWith")
        if vertices is not None
        else g.V().has_label("classification").in_e("taggedWith")
    )
    if origin:
        start = start.has("origin", origin)
    rows = (
        start.project("id", "v", "label", "props")
        .by(T.id)
        .by(__.out_v().id_())
        .by(__.in_v().values("qualifiedName"))
        .by(__.value_map())
        .to_list()
    )
    result = []
    for row in rows:
        props = {k: (v[0] if isinstance(v, list) else v) for k, v in row["props"].items()}
        result.append(
            (
                row["id"],
                Tagging(
                    row["v"],
                    Label.parse(row["label"]),
                    props.get("origin", ""),
                    props.get("fromName", ""),
                    props.get("fromLabel", ""),
                    props.get("via", ""),
                    props.get("rule", ""),
                    int(props.get("round", 0)),
                    props.get("declaredBy", ""),
                ),
            )
        )
    return result


def write_taggings(g: GraphTraversalSource, taggings: list[Tagging], batch_size: int = 500) -> int:
    """Upsert taggedWith edges: one per (vertex, label, origin); provenance is updated on a match. One transaction:
    any error leaves the graph unchanged."""
    with change_set(g, atomic=True) as (source, ops):
        return _upsert_taggings(source, taggings, batch_size, ops)


def _upsert_taggings(
    g: GraphTraversalSource, taggings: list[Tagging], batch_size: int, ops: list[tuple] | None
) -> int:
    ids = _upsert_classifications(g, (t.label for t in taggings), ops)
    written = 0
    for start in range(0, len(taggings), batch_size):
        keys = [(t.vertex, ids[t.label], {"origin": t.origin}) for t in taggings[start : start + batch_size]]
        before = matching_edges(g, "taggedWith", keys) if ops is not None else []
        rows = [
            {
                "match": {
                    T.label: "taggedWith",
                    Direction.OUT: tagging.vertex,
                    Direction.IN: ids[tagging.label],
                    "origin": tagging.origin,
                },
                "props": tagging.properties(),
            }
            for tagging in taggings[start : start + batch_size]
        ]
        edge_ids = (
            g.inject(*rows)
            .merge_e(__.select("match"))
            .option(Merge.on_create, __.select("props"))
            .option(Merge.on_match, __.select("props"))
            .id_()
            .to_list()
        )
        if ops is not None:  # an updated edge may have a new id (JanusGraph): record it as now found
            after = matching_edges(g, "taggedWith", keys)
            kept = {op_id(edge_id) for edge_id in after}
            record_drops(g, ops, edges=[edge_id for edge_id in before if op_id(edge_id) not in kept])
            record_state(g, ops, edges=after)
        written += len(edge_ids)
    return written


def drop_edges(g: GraphTraversalSource, edge_ids: list[Any], batch_size: int = 500) -> None:
    """Remove taggedWith edges by id (integer ids go out as Longs: TinkerGraph finds no edge by an Integer id)."""
    ids = [long(i) if type(i) is int else i for i in edge_ids]
    with change_set(g) as (source, ops):
        for start in range(0, len(ids), batch_size):
            batch = source.E(*ids[start : start + batch_size]).has_label("taggedWith")
            if ops is not None:
                record_drops(source, ops, edges=batch.clone().id_().to_list())
            batch.drop().iterate()


def vertex_names(g: GraphTraversalSource, ids: Iterable[Any]) -> dict[Any, str]:
    """qualifiedName of each vertex id."""
    wanted = list(set(ids))
    if not wanted:
        return {}
    rows = g.V(*wanted).project("id", "name").by(T.id).by(__.values("qualifiedName")).to_list()
    return {row["id"]: row["name"] for row in rows}


def vertex_ids(g: GraphTraversalSource, names: Iterable[str]) -> dict[str, Any]:
    """Vertex id of each existing dataset or column qualifiedName."""
    wanted = sorted(set(names))
    if not wanted:
        return {}
    rows = (
        g.V()
        .has("qualifiedName", P.within(*wanted))
        .has_label(P.within("table", "column", "file", "topic"))
        .project("id", "name")
        .by(T.id)
        .by(__.values("qualifiedName"))
        .to_list()
    )
    return {row["name"]: row["id"] for row in rows}


def tagged_with(g: GraphTraversalSource, label: Label, *, origin: str | None = None) -> list[str]:
    """qualifiedNames of the vertices holding ``label`` (optionally of one origin), sorted."""
    edges = g.V().has("classification", "qualifiedName", str(label)).in_e("taggedWith")
    if origin:
        edges = edges.has("origin", origin)
    return sorted(set(edges.out_v().values("qualifiedName").to_list()))
