"""SubgraphStrategy and PartitionStrategy: the graph seen through filters, as TinkerPop's decoration strategies.

Both become a :class:`View` that rewrites the steps of the root traversal and of every nested one (but not of the
criteria it inserts) before the engine's own strategies run:

- a step that yields vertices (``V``, ``out``/``in``/``both``, ``outV``/``inV``/``bothV``/``otherV``) is followed
  by a filter on the vertex criterion, a step that yields edges (``E``, ``outE``/``inE``/``bothE``) by one on the
  edge criterion; given an edge criterion, ``out()``/``in()``/``both()`` cross only the edges that pass it (the
  path then holds the edges too, as TinkerPop's ``outE().filter(...).inV()`` rewrite leaves it);
  ``checkAdjacentVertices`` (default true) also requires both ends of an edge to pass the vertex criterion.
  PartitionStrategy filters the vertices ``out()``/``in()``/``both()`` reach, not the edges they cross, as
  TinkerPop's does;
- ``properties()``/``values()`` keep the vertex properties that pass the vertex-property criterion (edge
  properties are not filtered);
- PartitionStrategy reads through ``has(partitionKey, within(readPartitions))`` on vertices and edges, and writes
  ``partitionKey = writePartition`` on every vertex and edge that ``addV``/``addE``/``mergeV``/``mergeE`` create.

>>> from gremlin_python.process.graph_traversal import __
>>> from lineage_platform.graph.embedded.step_calls import group_steps
>>> view = View(vertices=__.has("name", "a").bytecode)
>>> [str(c) for c in view.rewrite(group_steps(__.V().out("x").bytecode.step_instructions), None)]
['V()', "filter(__.has('name', 'a'))", "out('x')", "filter(__.has('name', 'a'))"]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from gremlin_python.process.graph_traversal import __
from gremlin_python.process.traversal import Bytecode, Merge, P

from lineage_platform.errors import TraversalError, UnsupportedStepError
from lineage_platform.graph.embedded.memgraph import VertexPropRec
from lineage_platform.graph.embedded.pipeline import Compiler, StepFn, Trav, step
from lineage_platform.graph.embedded.step_calls import StepCall, as_bytecode
from lineage_platform.graph.embedded.steps_navigation import adjacent_sources, edges_of

VIEW_STRATEGIES = frozenset({"SubgraphStrategy", "PartitionStrategy"})
VERTEX_STEPS = frozenset({"V", "out", "in", "both", "outV", "inV", "bothV", "otherV"})
EDGE_STEPS = frozenset({"E", "outE", "inE", "bothE"})
_ADJACENT_STEPS = frozenset({"out", "in", "both"})
_PROPERTY_FILTER = "viewProperties"  # internal step: vertex properties through the criterion, others kept
_ADJACENT = "viewAdjacent"  # internal step: out/in/both over the edges that pass the criterion


@dataclass(frozen=True)
class View:
    """Criteria (bytecode, None for no filter) and the partition written by creating steps."""

    vertices: Bytecode | None = None
    edges: Bytecode | None = None
    vertex_properties: Bytecode | None = None
    partition: tuple[str, Any, frozenset[Any]] | None = None  # (key, write partition, read partitions)
    cross_edges: bool = False  # out()/in()/both() cross only edges that pass (an edge criterion was given)

    def criteria(self) -> Iterator[Bytecode]:
        """The criteria the view inserts (compiled without the view)."""
        yield from (c for c in (self.vertices, self.edges, self.vertex_properties) if c is not None)

    def rewrite(self, calls: list[StepCall], context: Any) -> list[StepCall]:
        """The steps with the view's filters and partition writes inserted (a strategy of the engine's kind)."""
        out: list[StepCall] = []
        for call in calls:
            if call.name in _ADJACENT_STEPS and self.cross_edges:
                out.append(
                    StepCall(_ADJACENT, [call.name, tuple(call.args), self.edges], leading=call.leading)
                )
                out += [_filter(self.vertices)] if self.vertices is not None else []
            elif call.name == "values" and self.vertex_properties is not None:
                out += [
                    StepCall("properties", list(call.args), leading=call.leading),
                    StepCall(_PROPERTY_FILTER, [self.vertex_properties]),
                    StepCall("value", [], modulators=call.modulators),
                ]
            else:
                out += self._written(call)
                out += self._filters_after(call.name)
        return out

    def _filters_after(self, name: str) -> list[StepCall]:
        if name in VERTEX_STEPS and self.vertices is not None:
            return [_filter(self.vertices)]
        if name in EDGE_STEPS and self.edges is not None:
            return [_filter(self.edges)]
        if name == "properties" and self.vertex_properties is not None:
            return [StepCall(_PROPERTY_FILTER, [self.vertex_properties])]
        return []

    def _written(self, call: StepCall) -> list[StepCall]:
        """``call``, writing the partition key on what it creates."""
        if self.partition is None or call.name not in ("addV", "addE", "mergeV", "mergeE"):
            return [call]
        key, write, reads = self.partition
        if write is None:
            raise TraversalError(
                f"{call.name}() under PartitionStrategy needs a writePartition",
                hint="give write_partition='...' to PartitionStrategy to write through it",
            )
        if call.name in ("addV", "addE"):
            return [call, StepCall("property", [key, write])]
        if reads != {write}:
            raise UnsupportedStepError(
                f"{call.name}() under PartitionStrategy is supported when readPartitions is exactly [writePartition]",
                hint="give PartitionStrategy readPartitions=[writePartition] for merges, or use addV/addE",
            )
        merge = replace(
            call,
            args=[_with_partition(a, key, write, call.name) for a in call.args],
            modulators=[
                (name, [args[0], _with_partition(args[1], key, write, call.name)])
                if name == "option" and len(args) == 2 and args[0] == Merge.on_create
                else (name, args)
                for name, args in call.modulators
            ],
        )
        return [merge]


def _filter(criterion: Bytecode) -> StepCall:
    return StepCall("filter", [criterion])


def _with_partition(value: Any, key: str, write: Any, step_name: str) -> Any:
    """A merge map with the partition key added; a traversal argument is refused (its maps are not known here)."""
    if value is None:
        return value
    if isinstance(value, dict):
        return {**value, key: write}
    raise UnsupportedStepError(
        f"{step_name}() under PartitionStrategy takes literal maps in the embedded engine",
        hint="pass the match and onCreate maps as values, not traversals",
    )


def view_of(strategy_name: str, configuration: dict[str, Any]) -> View:
    """The view a SubgraphStrategy or PartitionStrategy configuration (as gremlinpython sends it) describes."""
    if strategy_name == "PartitionStrategy":
        key = configuration.get("partitionKey")
        if not key:
            raise UnsupportedStepError(
                "PartitionStrategy needs a partitionKey", hint="give partition_key='...' to PartitionStrategy"
            )
        given = configuration.get("readPartitions") or []
        reads = [given] if isinstance(given, str) else given
        if not isinstance(reads, (list, tuple, set, frozenset)):
            raise TraversalError(
                f"PartitionStrategy readPartitions must be a list of partitions, got {given!r}",
                hint="give read_partitions=['a', 'b'] to PartitionStrategy",
            )
        within = __.has(key, P.within(*reads)).bytecode
        partition = (key, configuration.get("writePartition"), frozenset(reads))
        meta = bool(configuration.get("includeMetaProperties"))
        return View(
            vertices=within, edges=within, vertex_properties=within if meta else None, partition=partition
        )
    vertices = _criterion(configuration, "vertices")
    edges = crossed = _criterion(configuration, "edges")
    # gremlinpython 3.7 sends check_adjacent_vertices as "checkAdjacentProperties", which Gremlin Server ignores;
    # so does the engine (the same traversal gives the same answer everywhere)
    check = configuration.get("checkAdjacentVertices", True)
    if vertices is not None and check is not False:
        ends = [__.in_v().filter_(vertices), __.out_v().filter_(vertices)]
        edges = (__.and_(*ends) if edges is None else __.and_(edges, *ends)).bytecode
    return View(
        vertices, edges, _criterion(configuration, "vertexProperties"), cross_edges=crossed is not None
    )


def _criterion(configuration: dict[str, Any], name: str) -> Bytecode | None:
    """SubgraphStrategy's ``name`` criterion as bytecode (None when not given); anything but a traversal is refused."""
    value = configuration.get(name)
    if value is None:
        return None
    bytecode = as_bytecode(value)
    if bytecode is None:
        raise TraversalError(
            f"SubgraphStrategy {name} must be a traversal, got {value!r}",
            hint=f"give SubgraphStrategy({name}=__.has(...)) a filter traversal",
        )
    return bytecode


def nested_bytecodes(bytecode: Bytecode) -> Iterator[Bytecode]:
    """``bytecode`` and every traversal nested in its arguments, at any depth."""
    yield bytecode
    for _, *args in bytecode.step_instructions:
        for arg in args:
            nested = as_bytecode(arg)
            if nested is not None:
                yield from nested_bytecodes(nested)


@step(_PROPERTY_FILTER)
def compile_view_properties(call: StepCall, c: Compiler) -> StepFn:
    """Vertex properties that pass the view's criterion; anything else (edge properties) passes."""
    pipeline = c.sub(call.args[0], "properties")
    return lambda travs: (t for t in travs if not isinstance(t.obj, VertexPropRec) or pipeline.has_result(t))


@step(_ADJACENT)
def compile_view_adjacent(call: StepCall, c: Compiler) -> StepFn:
    """out()/in()/both() over the edges that pass the view's edge criterion, each edge on the path before the
    vertex it leads to."""
    name, labels, criterion = call.args
    sources = adjacent_sources(name, labels, c.mutating)
    passes = c.sub(criterion, name)
    check_cancelled = c.check_cancelled

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            check_cancelled()
            for source, end in sources:
                for e in edges_of(source, t.obj, name):
                    if passes.has_result(t.replace(e)):
                        yield t.split(e).split(getattr(e, end))

    return run
