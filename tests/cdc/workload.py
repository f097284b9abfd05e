"""Workloads for change-capture tests: random graph changes of every kind (some several to a transaction,
through Gremlin on an embedded graph) and lineage statements for the writer's outbox."""

from __future__ import annotations

import datetime as dt
import decimal
import random
import uuid
from pathlib import Path
from typing import Any

from gremlin_python.process.anonymous_traversal import traversal
from gremlin_python.process.graph_traversal import GraphTraversalSource

from lineage_platform.cdc.content import GraphContent
from lineage_platform.cdc.outbox import COUNTER_LABEL, OUTBOX_LABEL
from lineage_platform.graph.connect import EmbeddedRemoteConnection
from lineage_platform.graph.embedded.engine import EmbeddedGraph
from lineage_platform.model import ColumnEdge, Dataset, StatementLineage

LABELS = ("table", "column", "process", "file")
EDGE_LABELS = ("usedBy", "generated", "flowsTo", "hasColumn")


def open_store(path: Path) -> tuple[EmbeddedGraph, GraphTraversalSource]:
    """An embedded graph on a durable store at ``path`` (no fsync: tests need speed, not crash safety)."""
    graph = EmbeddedGraph(path, sync=False)
    return graph, traversal().with_remote(EmbeddedRemoteConnection(graph))


def _value(rng: random.Random) -> Any:
    return rng.choice(
        [
            lambda: rng.randint(-(10**12), 10**12),
            lambda: rng.random(),
            lambda: f"text-{rng.randint(0, 999)}",
            lambda: rng.random() < 0.5,
            lambda: dt.datetime(2026, 1, 1) + dt.timedelta(seconds=rng.randint(0, 10**7)),
            lambda: uuid.UUID(int=rng.getrandbits(128)),
            lambda: decimal.Decimal(rng.randint(0, 10**6)) / 100,
            lambda: [rng.randint(0, 9) for _ in range(3)],
            lambda: {"k": rng.randint(0, 9)},
        ]
    )()


def _one_change(g: GraphTraversalSource, rng: random.Random) -> None:
    vertices = g.V().id_().to_list()
    edges = g.E().id_().to_list()
    choice = rng.random()
    if choice < 0.35 or len(vertices) < 2:
        g.add_v(rng.choice(LABELS)).property("qualifiedName", f"db.t{rng.getrandbits(40)}").property(
            "p", _value(rng)
        ).iterate()
    elif choice < 0.55:
        out_id, in_id = rng.sample(vertices, 2)
        g.V(out_id).as_("a").V(in_id).add_e(rng.choice(EDGE_LABELS)).from_("a").property(
            "strength", _value(rng)
        ).iterate()
    elif choice < 0.7:
        g.V(rng.choice(vertices)).property("p", _value(rng)).iterate()
    elif choice < 0.75:
        g.V(rng.choice(vertices)).properties("p").property("source", _value(rng)).iterate()
    elif choice < 0.8 and edges:
        g.E(rng.choice(edges)).property("strength", _value(rng)).iterate()
    elif choice < 0.85 and edges:
        g.E(rng.choice(edges)).properties("strength").drop().iterate()
    elif choice < 0.9:
        g.V(rng.choice(vertices)).properties("p").drop().iterate()
    elif choice < 0.95 and edges:
        g.E(rng.choice(edges)).drop().iterate()
    else:
        g.V(rng.choice(vertices)).drop().iterate()


def run_workload(g: GraphTraversalSource, rng: random.Random, transactions: int) -> None:
    """Commit ``transactions`` random transactions; about one in five holds several changes."""
    for _ in range(transactions):
        if rng.random() < 0.2:
            tx = g.tx()
            gtx = tx.begin()
            for _ in range(rng.randint(2, 5)):
                _one_change(gtx, rng)
            tx.commit()
        else:
            _one_change(g, rng)


CDC_LABELS = {OUTBOX_LABEL, COUNTER_LABEL}


def statements(count: int, offset: int = 0) -> list[StatementLineage]:
    """A chain of INSERT statements, each reading the previous table."""
    return [
        StatementLineage(
            index=n,
            operation="INSERT",
            sql=f"INSERT INTO db.t{n + 1} SELECT id FROM db.t{n}",
            inputs=(Dataset(f"db.t{n}"),),
            outputs=(Dataset(f"db.t{n + 1}"),),
            column_edges=(ColumnEdge(f"db.t{n}.id", f"db.t{n + 1}.id"),),
        )
        for n in range(offset, offset + count)
    ]


def by_key(content: GraphContent, skip: set) -> tuple[set, set, set, set]:
    """Content with vertex properties named by key (the outbox does not know property ids)."""
    return (
        {v for v in content.vertices if v[0] not in skip},
        {(vid, key, value) for vid, _, key, value in content.properties if vid not in skip},
        set(content.edges),
        set(content.edge_properties),
    )
