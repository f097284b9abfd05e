"""Traversals built programmatically: thousands of chained steps run; too deep nesting is a clear error."""

from __future__ import annotations

import pytest
from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.process.traversal import TraversalStrategies
from gremlin_python.structure.graph import Graph

from lineage_platform.errors import TraversalError
from lineage_platform.graph.embedded.engine import EmbeddedGraph


def test_two_thousand_chained_steps_run(cycle: GraphTraversalSource) -> None:
    counting = cycle.inject(0)
    walking = cycle.V().has("name", "a")
    for _ in range(2000):
        counting = counting.math("_ + 1")
        walking = walking.out().as_("x")
    assert counting.to_list() == [2000]
    assert walking.values("name").to_list() == ["a"]  # an even number of hops around the cycle


def test_too_deeply_nested_traversals_get_a_clear_error(graph: EmbeddedGraph) -> None:
    nested = __.identity()
    for _ in range(2000):
        nested = __.map(nested)
    source = GraphTraversalSource(Graph(), TraversalStrategies())
    with pytest.raises(TraversalError, match="nests traversals too deeply"):
        graph.execute(source.inject(1).map(nested).bytecode)
