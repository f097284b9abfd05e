"""The lineage graph's Gremlin DSL: domain steps over gremlinpython's traversals, the way its DSL guide shows.

``LineageTraversalSource``, ``LineageTraversal`` and ``__`` subclass gremlinpython's ``GraphTraversalSource``,
``GraphTraversal`` and ``__``; every domain step only appends standard steps to the bytecode, so a DSL
traversal runs unchanged on the embedded engine, a served graph, TinkerGraph and JanusGraph. Label and key
names come from :mod:`lineage_platform.graph.vocabulary` (generated from graph_schema/schema.yaml).

>>> from gremlin_python.process.anonymous_traversal import traversal
>>> from gremlin_python.structure.graph import Graph
>>> g = traversal(LineageTraversalSource).with_graph(Graph())  # or lineage_source(connect(url))
>>> str(g.datasets("dw.orders").upstream().bytecode)
"[['V'], ['hasLabel', within(['table', 'file', 'topic'])], ['has', 'qualifiedName', 'dw.orders'], \
['in', 'generated'], ['in', 'usedBy']]"
>>> str(__.flows_in().bytecode)
"[['inE', 'flowsTo'], ['has', 'strength', 'strong']]"
"""

from __future__ import annotations

from typing import Any

from gremlin_python.process.graph_traversal import GraphTraversal, GraphTraversalSource
from gremlin_python.process.graph_traversal import __ as _AnonymousTraversal
from gremlin_python.process.traversal import Bytecode, Order, P

from lineage_platform.graph.vocabulary import EdgeLabel, Key, LabelGroup, VertexLabel

__all__ = [
    "LineageTraversal",
    "LineageTraversalSource",
    "__",
    "classification_name",
    "lineage_source",
]

STRONG, WEAK = "strong", "weak"  # the values of a flowsTo edge's strength
SELECT = "SELECT"  # the operation of a plain query, whose process writes only its own temporary result


def _one_or_within(names: tuple[str, ...]) -> Any:
    """A has() value for one name or any of several."""
    return names[0] if len(names) == 1 else P.within(*names)


def classification_name(key: str, value: str = "") -> str:
    """The qualifiedName of a classification vertex: ``KEY=value``, or ``KEY`` for a flag.

    >>> classification_name("APP", "douyin"), classification_name("PII")
    ('APP=douyin', 'PII')
    """
    return f"{key}={value}" if value else key


class LineageTraversal(GraphTraversal):
    """A GraphTraversal with the lineage graph's domain steps."""

    def qualified_name(self) -> LineageTraversal:
        """The qualifiedName of each element."""
        return self.values(Key.QUALIFIED_NAME)

    def named(self, *names: str) -> LineageTraversal:
        """Keep the elements with one of these qualifiedNames."""
        return self.has(Key.QUALIFIED_NAME, _one_or_within(names))

    def columns_of(self, *names: str) -> LineageTraversal:
        """From a table (or path) to its columns, or to those of them named."""
        columns = self.out(EdgeLabel.HAS_COLUMN)
        return columns.named(*names) if names else columns

    def table_of(self) -> LineageTraversal:
        """From a column to its table (or path)."""
        return self.in_(EdgeLabel.HAS_COLUMN)

    def readers(self, *, selects: bool = True) -> LineageTraversal:
        """From a dataset to the processes that read it (without plain SELECTs unless ``selects``)."""
        readers = self.out(EdgeLabel.USED_BY)
        return readers if selects else readers.not_(__.has(Key.OPERATION, SELECT))

    def writers(self) -> LineageTraversal:
        """From a dataset to the processes that wrote it."""
        return self.in_(EdgeLabel.GENERATED)

    def inputs(self) -> LineageTraversal:
        """From a process to the datasets it reads."""
        return self.in_(EdgeLabel.USED_BY)

    def outputs(self) -> LineageTraversal:
        """From a process to the datasets it writes."""
        return self.out(EdgeLabel.GENERATED)

    def flows_in(self, *, weak: bool = False) -> LineageTraversal:
        """From a column to its incoming column lineage edges (strong ones only unless ``weak``)."""
        edges = self.in_e(EdgeLabel.FLOWS_TO)
        return edges if weak else edges.has(Key.STRENGTH, STRONG)

    def flows_out(self, *, weak: bool = False) -> LineageTraversal:
        """From a column to its outgoing column lineage edges (strong ones only unless ``weak``)."""
        edges = self.out_e(EdgeLabel.FLOWS_TO)
        return edges if weak else edges.has(Key.STRENGTH, STRONG)

    def upstream(self, level: str = VertexLabel.TABLE, *, weak: bool = False) -> LineageTraversal:
        """One hop up: at table level through the processes that wrote the dataset to what they read, at column
        level along incoming lineage edges (strong ones only unless ``weak``)."""
        if level == VertexLabel.COLUMN:
            return self.flows_in(weak=weak).out_v()
        return self.writers().inputs()

    def downstream(self, level: str = VertexLabel.TABLE, *, weak: bool = False) -> LineageTraversal:
        """One hop down: the mirror of :meth:`upstream`."""
        if level == VertexLabel.COLUMN:
            return self.flows_out(weak=weak).in_v()
        return self.readers().outputs()

    def with_operation(self, *operations: str) -> LineageTraversal:
        """Keep the processes with one of these operations."""
        return self.has(Key.OPERATION, _one_or_within(operations))

    def runs(self, since: str | None = None) -> LineageTraversal:
        """From a process to its runs (those started at or after ``since``, an ISO-8601 time, if given)."""
        runs = self.out(EdgeLabel.HAS_RUN)
        return runs if since is None else runs.has(Key.START_TIME, P.gte(since))

    def latest_runs(self, count: int) -> LineageTraversal:
        """From a process to its ``count`` latest runs, newest first."""
        return self.runs().order().by(Key.START_TIME, Order.desc).limit(count)

    def run_maps(self, latest: int | None = None) -> LineageTraversal:
        """From a process to one list: the element maps of its runs (all of them, or its ``latest`` runs newest
        first), so a process is read with its runs in one ``project(...).by(__.run_maps())``."""
        runs = self.runs() if latest is None else self.latest_runs(latest)
        return runs.element_map().fold()

    def partitions(self) -> LineageTraversal:
        """From a dataset to the partitions the NetFlow catalog holds for it."""
        return self.out(EdgeLabel.HAS_PARTITION)

    def taggings(self) -> LineageTraversal:
        """From a vertex to its label edges (declared and propagated)."""
        return self.out_e(EdgeLabel.TAGGED_WITH)

    def labelled(self, key: str, value: str = "") -> LineageTraversal:
        """Keep the vertices that carry the label ``key`` (``=value``)."""
        return self.where(__.tagged_with(key, value))

    def tagged_with(self, key: str, value: str = "") -> LineageTraversal:
        """From a vertex to its classification vertex ``key`` (``=value``), if it carries that label."""
        return self.out(EdgeLabel.TAGGED_WITH).has(
            VertexLabel.CLASSIFICATION, Key.QUALIFIED_NAME, classification_name(key, value)
        )


class __(_AnonymousTraversal):  # gremlinpython's name for anonymous traversals
    """Anonymous traversals with the domain steps (every standard step returns a LineageTraversal too)."""

    graph_traversal = LineageTraversal


def _anonymous_step(name: str) -> classmethod:
    """``__.<name>(...)``: the domain step ``name`` on a fresh anonymous LineageTraversal."""

    def start(cls: type[__], *args: Any, **kwargs: Any) -> LineageTraversal:
        return getattr(cls.graph_traversal(None, None, Bytecode()), name)(*args, **kwargs)

    start.__name__ = name
    start.__doc__ = getattr(LineageTraversal, name).__doc__
    return classmethod(start)


DOMAIN_STEPS = tuple(name for name in vars(LineageTraversal) if not name.startswith("_"))
"""The steps LineageTraversal adds; each is also an anonymous ``__`` step (adding a step is one edit)."""
for _name in DOMAIN_STEPS:
    setattr(__, _name, _anonymous_step(_name))


class LineageTraversalSource(GraphTraversalSource):
    """A GraphTraversalSource whose traversals are LineageTraversals, with the domain's start steps."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.graph_traversal = LineageTraversal

    def _vertices(self, label: str | tuple[str, ...], names: tuple[str, ...]) -> LineageTraversal:
        """V() of a label (or any of several) with one of these qualifiedNames (any, if none is given)."""
        start = self.get_graph_traversal().V()
        if isinstance(label, str) and names:
            return start.has(label, Key.QUALIFIED_NAME, _one_or_within(names))
        vertices = start.has_label(label if isinstance(label, str) else P.within(*label))
        return vertices.named(*names) if names else vertices

    def named(self, *names: str) -> LineageTraversal:
        """The vertices of any label with one of these qualifiedNames."""
        return self.get_graph_traversal().V().named(*names)

    def datasets(self, *names: str) -> LineageTraversal:
        """Tables, paths and topics (those named, if names are given)."""
        return self._vertices(LabelGroup.DATASET, names)

    def tables(self, *names: str) -> LineageTraversal:
        """Tables (those named, if names are given)."""
        return self._vertices(VertexLabel.TABLE, names)

    def columns(self, *names: str) -> LineageTraversal:
        """Columns (those named, if names are given)."""
        return self._vertices(VertexLabel.COLUMN, names)

    def processes(self, *names: str) -> LineageTraversal:
        """Processes (those named, if names are given)."""
        return self._vertices(VertexLabel.PROCESS, names)

    def flows(self) -> LineageTraversal:
        """Every column lineage edge (strong and weak)."""
        return self.get_graph_traversal().E().has_label(EdgeLabel.FLOWS_TO)

    def classifications(self, *names: str) -> LineageTraversal:
        """Classification vertices, by their ``KEY=value`` names if given."""
        return self._vertices(VertexLabel.CLASSIFICATION, names)

    def principals(self, *names: str) -> LineageTraversal:
        """Principals (``user:NAME``, ``role:NAME``), those named if names are given."""
        return self._vertices(VertexLabel.PRINCIPAL, names)

    def labelled(self, key: str, value: str = "") -> LineageTraversal:
        """The vertices that carry the label ``key`` (``=value``)."""
        return self.classifications(classification_name(key, value)).in_(EdgeLabel.TAGGED_WITH)


def lineage_source(g: GraphTraversalSource) -> LineageTraversalSource:
    """The DSL source over the same connection (and strategies) as ``g``; ``g`` itself if it is one already."""
    if isinstance(g, LineageTraversalSource):
        return g
    source = LineageTraversalSource(g.graph, g.traversal_strategies, g.bytecode)
    source.remote_connection = g.remote_connection
    return source
