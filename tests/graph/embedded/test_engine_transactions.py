"""Autocommit and explicit transactions: atomicity, constraint violations, isolation by the graph lock."""

from __future__ import annotations

import threading
import time

import pytest
from gremlin_python.process.graph_traversal import GraphTraversalSource
from gremlin_python.process.traversal import TraversalStrategies
from gremlin_python.structure.graph import Graph

from lineage_platform.errors import ConstraintViolation, GraphBusyError, GraphError, TraversalError
from lineage_platform.graph.embedded.engine import EmbeddedGraph


def source() -> GraphTraversalSource:
    """A traversal source used only to build bytecode for EmbeddedGraph.execute()."""
    return GraphTraversalSource(Graph(), TraversalStrategies())


def count(graph: EmbeddedGraph, tx: object = None) -> int:
    """How many vertices the graph holds (read inside ``tx`` when given)."""
    return graph.execute(source().V().count().bytecode, tx)[0].object  # type: ignore[arg-type]


def add_table(graph: EmbeddedGraph, name: str, tx: object = None) -> None:
    """Add a table vertex with a qualifiedName."""
    graph.execute(source().add_v("table").property("qualifiedName", name).bytecode, tx)  # type: ignore[arg-type]


def test_rollback_leaves_the_graph_unchanged(graph: EmbeddedGraph) -> None:
    add_table(graph, "db.keep")
    tx = graph.begin()
    add_table(graph, "db.a", tx)
    graph.execute(source().V().has("qualifiedName", "db.keep").property("owner", "x").bytecode, tx)
    graph.execute(source().V().has("qualifiedName", "db.keep").drop().bytecode, tx)
    assert count(graph, tx) == 1
    tx.rollback()
    assert not tx.is_open
    assert count(graph) == 1
    assert graph.execute(source().V().has("qualifiedName", "db.keep").value_map().bytecode)[0].object == {
        "qualifiedName": ["db.keep"]
    }


def test_commit_keeps_writes(graph: EmbeddedGraph) -> None:
    tx = graph.begin()
    add_table(graph, "db.a", tx)
    tx.commit()
    assert count(graph) == 1


def test_constraint_violation_rolls_back_the_whole_traversal(graph: EmbeddedGraph) -> None:
    add_table(graph, "db.t")
    traversal = (
        source()
        .add_v("table")
        .property("qualifiedName", "db.new")
        .add_v("table")
        .property("qualifiedName", "db.t")
    )
    with pytest.raises(ConstraintViolation, match=r"'table' vertex with qualifiedName='db\.t'"):
        graph.execute(traversal.bytecode)
    assert count(graph) == 1
    # the same value under another label is allowed: uniqueness is per (label, key)
    graph.execute(source().add_v("column").property("qualifiedName", "db.t").bytecode)
    assert count(graph) == 2


def test_failed_statement_inside_a_transaction_is_undone_but_the_transaction_stays_open(
    graph: EmbeddedGraph,
) -> None:
    tx = graph.begin()
    add_table(graph, "db.a", tx)
    with pytest.raises(ConstraintViolation):
        graph.execute(
            source()
            .add_v("table")
            .property("qualifiedName", "db.b")
            .add_v("table")
            .property("qualifiedName", "db.a")
            .bytecode,
            tx,
        )
    assert count(graph, tx) == 1
    tx.commit()
    assert count(graph) == 1


def test_bad_value_type_is_a_traversal_error(graph: EmbeddedGraph) -> None:
    with pytest.raises(TraversalError, match="unsupported type object"):
        graph.execute(source().add_v("table").property("x", object()).bytecode)
    assert count(graph) == 0


def test_readers_wait_for_an_open_transaction_then_proceed(graph: EmbeddedGraph) -> None:
    tx = graph.begin()
    add_table(graph, "db.a", tx)
    seen: list[int] = []
    reader = threading.Thread(target=lambda: seen.append(count(graph)))
    reader.start()
    time.sleep(0.2)
    assert seen == []  # blocked: never sees the uncommitted vertex
    tx.commit()
    reader.join(timeout=5)
    assert seen == [1]


def test_waiting_longer_than_lock_timeout_is_graph_busy(graph: EmbeddedGraph) -> None:
    tx = graph.begin()
    add_table(graph, "db.a", tx)
    errors: list[Exception] = []

    def read() -> None:
        try:
            count(graph)
        except GraphError as exc:
            errors.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    reader.join(timeout=10)
    tx.rollback()
    assert len(errors) == 1 and "graph busy: a transaction has been open for" in str(errors[0])
    assert errors[0].hint and "commit or roll back" in errors[0].hint
    assert isinstance(errors[0], GraphBusyError) and errors[0].transient  # a retry may succeed


def test_transaction_lock_belongs_to_the_transaction_not_the_thread(graph: EmbeddedGraph) -> None:
    tx = graph.begin()
    worker = threading.Thread(target=lambda: add_table(graph, "db.a", tx))
    worker.start()
    worker.join(timeout=5)
    add_table(graph, "db.b", tx)  # same transaction from another thread: no deadlock
    tx.commit()
    assert count(graph) == 2


def test_closed_transaction_refuses_statements(graph: EmbeddedGraph) -> None:
    tx = graph.begin()
    tx.commit()
    with pytest.raises(GraphError, match="already closed"):
        count(graph, tx)


def test_gremlinpython_remote_transactions(g: GraphTraversalSource) -> None:
    tx = g.tx()
    gtx = tx.begin()
    gtx.add_v("table").property("qualifiedName", "db.x").iterate()
    assert gtx.V().count().next() == 1
    tx.rollback()
    assert g.V().count().next() == 0
    tx = g.tx()
    gtx = tx.begin()
    gtx.add_v("table").property("qualifiedName", "db.x").iterate()
    tx.commit()
    assert g.V().has("qualifiedName", "db.x").count().next() == 1
