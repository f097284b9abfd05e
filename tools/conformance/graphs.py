"""The graphs scenarios run on: TinkerPop's data graphs, each loaded through the GraphSON reader into its
own embedded graph, plus the empty graph.

Read-only scenarios share one loaded copy per data graph; a scenario that may write gets a fresh copy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gremlin_python.process.anonymous_traversal import traversal
from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.structure.graph import Edge, Vertex, VertexProperty

from lineage_platform.errors import GraphError
from lineage_platform.graph.connect import EmbeddedRemoteConnection
from lineage_platform.graph.embedded.engine import EmbeddedGraph
from lineage_platform.graph.graphson import IdStrategy, import_graph

DATA_FILES: dict[str, str] = {
    "modern": "tinkerpop-modern.json",
    "classic": "tinkerpop-classic.json",
    "crew": "tinkerpop-crew.json",
    "sink": "tinkerpop-sink.json",
    "grateful": "grateful-dead.json",
}


@dataclass
class ScenarioGraph:
    """One embedded graph, its connection and a traversal source on it."""

    graph: EmbeddedGraph
    connection: EmbeddedRemoteConnection
    g: GraphTraversalSource

    @classmethod
    def empty(cls) -> ScenarioGraph:
        """A new memory-only graph."""
        graph = EmbeddedGraph(None)
        connection = EmbeddedRemoteConnection(graph)
        return cls(graph, connection, traversal().with_remote(connection))

    def close(self) -> None:
        """Release the graph."""
        self.connection.close()
        self.graph.close()


@dataclass
class DataGraphs:
    """Loads TinkerPop's data graphs from `data_dir` on first use and hands out shared or fresh copies."""

    data_dir: Path
    _shared: dict[str, ScenarioGraph] = field(default_factory=dict)

    def load(self, name: str) -> ScenarioGraph:
        """A freshly loaded copy of the data graph `name` ("empty" gives a new empty graph)."""
        scenario_graph = ScenarioGraph.empty()
        if name != "empty":
            if name not in DATA_FILES:
                raise GraphError(f"unknown data graph {name!r}", hint=f"use one of {', '.join(DATA_FILES)}")
            import_graph(scenario_graph.g, self.data_dir / DATA_FILES[name], id_strategy=IdStrategy.KEEP)
        return scenario_graph

    def shared(self, name: str) -> ScenarioGraph:
        """The copy of `name` shared by read-only scenarios, loaded once."""
        if name not in self._shared:
            self._shared[name] = self.load(name)
        return self._shared[name]

    def discard(self, name: str) -> None:
        """Forget the shared copy of `name` (after a scenario that may have left it damaged)."""
        graph = self._shared.pop(name, None)
        if graph is not None:
            graph.close()

    def close(self) -> None:
        """Release every shared graph."""
        for name in list(self._shared):
            self.discard(name)


class GraphLookup:
    """Finds the elements the typed-value notation names, by the vertices' ``name`` property."""

    def __init__(self, g: GraphTraversalSource) -> None:
        self.g = g

    def _one(self, found: list[Any], what: str) -> Any:
        if len(found) != 1:
            raise GraphError(f"{what}: found {len(found)} matches, expected exactly one")
        return found[0]

    def vertex(self, name: str) -> Vertex:
        """The vertex whose ``name`` is `name`."""
        return self._one(self.g.V().has("name", name).to_list(), f"vertex {name!r}")

    def edge(self, out_name: str, label: str, in_name: str) -> Edge:
        """The edge `label` from the vertex named `out_name` to the vertex named `in_name`."""
        found = self.g.V().has("name", out_name).out_e(label).where(__.in_v().has("name", in_name)).to_list()
        return self._one(found, f"edge {out_name}-{label}->{in_name}")

    def vertex_property(self, name: str, key: str, value: Any) -> VertexProperty:
        """The property `key` = `value` of the vertex named `name`."""
        found = self.g.V().has("name", name).properties(key).has_value(value).to_list()
        return self._one(found, f"vertex property {name}-{key}->{value!r}")
