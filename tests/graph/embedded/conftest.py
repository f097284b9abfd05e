"""Fixtures for the embedded engine tests: a graph, a traversal source bound to it, and TinkerPop's modern graph."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from gremlin_python.process.anonymous_traversal import traversal
from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.process.traversal import T

from lineage_platform.graph.connect import EmbeddedRemoteConnection
from lineage_platform.graph.embedded.engine import EmbeddedGraph


@pytest.fixture
def graph() -> Iterator[EmbeddedGraph]:
    """A memory-only graph with a unique, indexed table qualifiedName and an indexed name."""
    embedded = EmbeddedGraph(unique=[("table", "qualifiedName")], indexed=["name"], lock_timeout=2.0)
    yield embedded
    embedded.close()


@pytest.fixture
def g(graph: EmbeddedGraph) -> GraphTraversalSource:
    """A gremlinpython traversal source executing on ``graph``."""
    return traversal().with_remote(EmbeddedRemoteConnection(graph))


@pytest.fixture
def modern(g: GraphTraversalSource) -> GraphTraversalSource:
    """TinkerPop's modern graph (ids 1-6 for vertices, 7-12 for edges) loaded into ``g``."""
    people = [(1, "marko", 29), (2, "vadas", 27), (4, "josh", 32), (6, "peter", 35)]
    software = [(3, "lop", "java"), (5, "ripple", "java")]
    for vid, name, age in people:
        g.add_v("person").property(T.id, vid).property("name", name).property("age", age).iterate()
    for vid, name, lang in software:
        g.add_v("software").property(T.id, vid).property("name", name).property("lang", lang).iterate()
    edges = [
        (7, 1, "knows", 2, 0.5),
        (8, 1, "knows", 4, 1.0),
        (9, 1, "created", 3, 0.4),
        (10, 4, "created", 5, 1.0),
        (11, 4, "created", 3, 0.4),
        (12, 6, "created", 3, 0.2),
    ]
    for eid, out_id, label, in_id, weight in edges:
        g.V(out_id).add_e(label).to(__.V(in_id)).property(T.id, eid).property("weight", weight).iterate()
    return g


@pytest.fixture
def cycle(g: GraphTraversalSource) -> GraphTraversalSource:
    """Two vertices a and b with edges a -> b -> a: repeat() over them never ends by itself."""
    g.add_v("node").property("name", "a").as_("a").add_v("node").property("name", "b").as_("b").add_e(
        "next"
    ).from_("a").to("b").add_e("next").from_("b").to("a").iterate()
    return g
