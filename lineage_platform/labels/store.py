"""Labels in the graph: one ``classification`` vertex per label, ``taggedWith`` edges from the labelled vertex.

Each ``taggedWith`` edge records how the vertex got the label: ``origin`` declared (``declaredBy``) or propagated
(``fromName`` and ``fromLabel``: the vertex and label it came from; ``via``: the process; ``rule``: the edge
transform or rule that carried it; ``round``: the propagation round).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gremlin_python.process.graph_traversal import GraphTraversalSource
from gremlin_python.process.traversal import Direction, Merge, P, T
from gremlin_python.statics import long

from lineage_platform.graph.dsl import __, lineage_source
from lineage_platform.graph.outbox import change_set, matching_edges, op_id, record_drops, record_state
from lineage_platform.graph.vocabulary import EdgeLabel, Key, LabelGroup, VertexLabel
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
            Key.ORIGIN: self.origin,
            Key.FROM_NAME: self.from_name,
            Key.FROM_LABEL: self.from_label,
            Key.VIA: self.via,
            Key.RULE: self.rule,
            Key.ROUND: self.round,
            Key.DECLARED_BY: self.declared_by,
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
            "match": {T.label: VertexLabel.CLASSIFICATION, Key.QUALIFIED_NAME: str(label)},
            "create": {
                Key.NAME: str(label),
                Key.TYPE_NAME: VertexLabel.CLASSIFICATION,
                Key.LABEL_KEY: label.key,
                Key.LABEL_VALUE: label.value,
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
    lg = lineage_source(g)
    start = (
        lg.V(*vertices).taggings()
        if vertices is not None
        else lg.classifications().in_e(EdgeLabel.TAGGED_WITH)
    )
    if origin:
        start = start.has(Key.ORIGIN, origin)
    rows = (
        start.project("id", "v", "label", "props")
        .by(T.id)
        .by(__.out_v().id_())
        .by(__.in_v().qualified_name())
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
                    props.get(Key.ORIGIN, ""),
                    props.get(Key.FROM_NAME, ""),
                    props.get(Key.FROM_LABEL, ""),
                    props.get(Key.VIA, ""),
                    props.get(Key.RULE, ""),
                    int(props.get(Key.ROUND, 0)),
                    props.get(Key.DECLARED_BY, ""),
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
        batch = taggings[start : start + batch_size]
        keys = [(t.vertex, ids[t.label], {Key.ORIGIN: t.origin}) for t in batch]
        before = matching_edges(g, EdgeLabel.TAGGED_WITH, keys) if ops is not None else []
        rows = [
            {
                "match": {
                    T.label: EdgeLabel.TAGGED_WITH,
                    Direction.OUT: tagging.vertex,
                    Direction.IN: ids[tagging.label],
                    Key.ORIGIN: tagging.origin,
                },
                "props": tagging.properties(),
            }
            for tagging in batch
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
            after = matching_edges(g, EdgeLabel.TAGGED_WITH, keys)
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
            batch = source.E(*ids[start : start + batch_size]).has_label(EdgeLabel.TAGGED_WITH)
            if ops is not None:
                record_drops(source, ops, edges=batch.clone().id_().to_list())
            batch.drop().iterate()


def vertex_names(g: GraphTraversalSource, ids: Iterable[Any]) -> dict[Any, str]:
    """qualifiedName of each vertex id."""
    wanted = list(set(ids))
    if not wanted:
        return {}
    rows = lineage_source(g).V(*wanted).project("id", "name").by(T.id).by(__.qualified_name()).to_list()
    return {row["id"]: row["name"] for row in rows}


def vertex_ids(g: GraphTraversalSource, names: Iterable[str]) -> dict[str, Any]:
    """Vertex id of each existing dataset or column qualifiedName."""
    wanted = sorted(set(names))
    if not wanted:
        return {}
    rows = (
        lineage_source(g)
        .V()
        .has(Key.QUALIFIED_NAME, P.within(*wanted))
        .has_label(P.within(*LabelGroup.LABELLED))
        .project("id", "name")
        .by(T.id)
        .by(__.qualified_name())
        .to_list()
    )
    return {row["name"]: row["id"] for row in rows}


def tagged_with(g: GraphTraversalSource, label: Label, *, origin: str | None = None) -> list[str]:
    """qualifiedNames of the vertices holding ``label`` (optionally of one origin), sorted."""
    edges = lineage_source(g).classifications(str(label)).in_e(EdgeLabel.TAGGED_WITH)
    if origin:
        edges = edges.has(Key.ORIGIN, origin)
    return sorted(set(edges.out_v().qualified_name().to_list()))
