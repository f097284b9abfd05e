"""Differential testing: random traversals over random graphs, run on the embedded engine and on TinkerGraph.

A seeded generator builds small property graphs (people, software and places joined by ``knows``,
``created`` and ``uses`` edges carrying weights) and, for each graph, traversals over the steps the product
and its docs rely on: navigation, filters, repeat/emit/until, path/select/by, group/groupCount/fold/unfold,
order/dedup/range, sack/math, mergeV/mergeE, side effects, string steps, branching and reducers. Each
traversal runs as the same bytecode on the embedded engine and on a reference TinkerPop Gremlin Server;
results are compared under TinkerPop's rules (``compare.canonical``): top-level results as a multiset unless
the traversal ends in a total ``order()``, lists as multisets unless an ``order(local)`` or a path made them,
doubles to 14 significant digits (Java's double addition order differs from Python's in the last bit).

Some traversals start under a ``SubgraphStrategy`` or a read-only ``PartitionStrategy`` (on ``lang``), and
``match()`` joins random patterns (not followed by ``path()``: TinkerPop's path then holds entries of the match's
internal steps, which the engine does not emulate). ``aggregate()`` is left out inside a ``sideEffect()`` child
after several flatMap steps: TinkerPop's LazyBarrierStrategy merges traversers there, which the engine does
not emulate (embedded README, *Differences*). Both sides are given explicit ids, so elements
compare by id. A traversal that writes gets a freshly loaded graph before and after it.

    python -m tools.conformance.differential --count 10000 --seed 1
"""

from __future__ import annotations

import logging
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import click
from gremlin_python.process.anonymous_traversal import traversal
from gremlin_python.process.graph_traversal import GraphTraversal, GraphTraversalSource, __
from gremlin_python.process.strategies import PartitionStrategy, SubgraphStrategy
from gremlin_python.process.translator import Translator
from gremlin_python.process.traversal import Bytecode, Cardinality, Merge, Operator, Order, P, Scope, T, TextP
from gremlin_python.structure.graph import Graph, Path

from tools.conformance.compare import canonical

VERTEX_LABELS = ("person", "software", "place")
EDGE_LABELS = ("knows", "created", "uses")
NAMES = ("marko", "vadas", "lop", "josh", "ripple", "peter", "ana", "bo", "cy", "dee", "eve", "fay")
LANGS = ("java", "python", "go")
TIMEOUT_MS = 5_000  # per traversal, on both sides: a traversal that runs away is a mismatch, not a hang


@dataclass(frozen=True)
class RandomGraph:
    """Vertices ``(id, label, {key: value})`` and edges ``(id, label, out_id, in_id, weight)``."""

    vertices: tuple[tuple[int, str, dict[str, Any]], ...]
    edges: tuple[tuple[int, str, int, int, float], ...]


def random_graph(rng: random.Random, max_vertices: int = 10) -> RandomGraph:
    """A small random property graph; some vertices lack some keys, so has()/values() miss sometimes."""
    count = rng.randint(1, max_vertices)
    vertices = []
    for vertex_id in range(1, count + 1):
        label = rng.choice(VERTEX_LABELS)
        properties: dict[str, Any] = {"name": rng.choice(NAMES)}
        if label == "person" or rng.random() < 0.3:
            properties["age"] = rng.randint(18, 60)
        if label == "software" or rng.random() < 0.2:
            properties["lang"] = rng.choice(LANGS)
        vertices.append((vertex_id, label, properties))
    edges = []
    for edge_id in range(100, 100 + rng.randint(0, count * 2)):
        out_id, in_id = rng.randint(1, count), rng.randint(1, count)
        weight = rng.choice((0.2, 0.4, 0.5, 1.0, 0.1, 0.3))
        edges.append((edge_id, rng.choice(EDGE_LABELS), out_id, in_id, weight))
    return RandomGraph(tuple(vertices), tuple(edges))


def load_graph(g: GraphTraversalSource, graph: RandomGraph) -> None:
    """Replace everything in ``g`` with ``graph`` (explicit ids), in one traversal."""
    g.V().drop().iterate()
    t: GraphTraversal | None = None
    for vertex_id, label, properties in graph.vertices:
        t = (g if t is None else t).add_v(label).property(T.id, vertex_id)
        for key, value in properties.items():
            t = t.property(Cardinality.single, key, value)
    for edge_id, label, out_id, in_id, weight in graph.edges:
        t = (g if t is None else t).add_e(label).from_(__.V(out_id)).to(__.V(in_id))
        t = t.property(T.id, edge_id).property("weight", weight)
    if t is not None:
        t.iterate()


# --- the generator -------------------------------------------------------------------------------------
# Traversers are typed as the generator goes: "v" vertex, "e" edge, "n" number, "s" string, "m" map,
# "l" list, "p" path. Each step builder takes (rng, traversal) and returns (traversal, new type).

Step = Callable[[random.Random, GraphTraversal], tuple[GraphTraversal, str]]


def _edge_label(rng: random.Random) -> tuple[str, ...]:
    return () if rng.random() < 0.4 else (rng.choice(EDGE_LABELS),)


def _number_predicate(rng: random.Random) -> P:
    bound = rng.randint(18, 60)
    return rng.choice(
        (
            P.gt(bound),
            P.lte(bound),
            P.between(bound, bound + 15),
            P.within(bound, bound + 1, 30),
            P.neq(bound),
            P.inside(bound - 10, bound + 10),
        )
    )


def _name_predicate(rng: random.Random) -> P:
    name = rng.choice(NAMES)
    return rng.choice(
        (
            P.eq(name),
            P.within(name, rng.choice(NAMES)),
            P.without(name),
            TextP.starting_with(name[:2]),
            TextP.containing(name[1:3]),
            TextP.not_ending_with(name[-1]),
        )
    )


def _vertex_filter(rng: random.Random) -> GraphTraversal:
    """An anonymous filter over a vertex traverser."""
    choice = rng.randrange(7)
    if choice == 0:
        return __.has("age", _number_predicate(rng))
    if choice == 1:
        return __.has("name", _name_predicate(rng))
    if choice == 2:
        return __.has_label(rng.choice(VERTEX_LABELS))
    if choice == 3:
        return __.out(*_edge_label(rng))
    if choice == 4:
        return __.has("lang")
    if choice == 5:
        return __.has_not("age")
    return __.both(*_edge_label(rng)).has("age", _number_predicate(rng))


def _vertex_steps() -> list[tuple[int, Step]]:
    def nav(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        step = rng.choice(("out", "in_", "both"))
        return getattr(t, step)(*_edge_label(rng)), "v"

    def to_edges(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        step = rng.choice(("out_e", "in_e", "both_e"))
        return getattr(t, step)(*_edge_label(rng)), "e"

    def filter_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        kind = rng.randrange(5)
        if kind == 0:
            return t.where(_vertex_filter(rng)), "v"
        if kind == 1:
            return t.not_(_vertex_filter(rng)), "v"
        if kind == 2:
            return t.and_(_vertex_filter(rng), _vertex_filter(rng)), "v"
        if kind == 3:
            return t.or_(_vertex_filter(rng), _vertex_filter(rng)), "v"
        return t.filter_(_vertex_filter(rng)), "v"

    def has_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        kind = rng.randrange(4)
        if kind == 0:
            return t.has("age", _number_predicate(rng)), "v"
        if kind == 1:
            return t.has("name", _name_predicate(rng)), "v"
        if kind == 2:
            return t.has_label(rng.choice(VERTEX_LABELS), rng.choice(VERTEX_LABELS)), "v"
        return t.has(rng.choice(VERTEX_LABELS), "name", rng.choice(NAMES)), "v"

    def repeat_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        body = rng.choice((__.out(*_edge_label(rng)), __.both(*_edge_label(rng)), __.in_()))
        # dedup() or simplePath(), not both: which path a dedup() keeps then decides what simplePath() drops,
        # and that follows adjacency order, which TinkerPop does not promise
        if rng.random() < 0.3:
            body = body.dedup()
        elif rng.random() < 0.2:
            body = body.simple_path()
        kind = rng.randrange(5)
        times = rng.randint(1, 3)
        if kind == 0:
            return t.repeat(body).times(times), "v"
        if kind == 1:
            return t.repeat(body).emit().times(times), "v"
        if kind == 2:
            return t.emit().repeat(body).times(times), "v"
        if kind == 3:
            return t.repeat(body).until(_vertex_filter(rng).or_().loops().is_(times)), "v"
        return t.repeat(body).emit(_vertex_filter(rng)).times(times), "v"

    def values_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        key = rng.choice(("age", "name", "lang"))
        return t.values(key), ("n" if key == "age" else "s")

    def maps(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        kind = rng.randrange(6)
        if kind == 0:
            return t.value_map("name", "age"), "m"
        if kind == 1:
            return t.element_map("name", "age"), "m"
        if kind == 2:
            return t.group().by(T.label).by(__.count()), "m"
        if kind == 3:
            return t.group_count().by("name"), "m"
        if kind == 4:
            return t.project("n", "deg").by("name").by(__.both_e().count()), "m"
        return t.group().by("name").by(__.values("age").sum_()), "m"

    def labels(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        return (t.label(), "s") if rng.random() < 0.5 else (t.id_(), "n")

    def path_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        body = rng.choice((__.out(*_edge_label(rng)), __.both()))
        t = t.as_("a").repeat(body).times(rng.randint(1, 2)).as_("b")
        if rng.random() < 0.5:
            return t.path().by("name"), "p"
        return t.select("a", "b").by("name"), "m"

    def branch(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        kind = rng.randrange(4)
        if kind == 0:
            return t.coalesce(__.values("age"), __.constant(0)), "n"
        if kind == 1:
            return t.choose(__.has("age"), __.values("age"), __.constant(-1)), "n"
        if kind == 2:
            return t.union(__.out(*_edge_label(rng)), __.in_(*_edge_label(rng))), "v"
        return t.optional(__.out(*_edge_label(rng))), "v"

    def side_effect(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        if rng.random() < 0.5:
            return t.aggregate("x").out().where(P.without("x")), "v"
        return t.aggregate("x").cap("x"), "l"

    def sack_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        return t.out_e().sack(Operator.mult).by("weight").in_v().sack(), "n"

    def dedup_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        return t.dedup(), "v"

    def match_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        def hop(start: str, end: str) -> GraphTraversal:
            return getattr(__.as_(start), rng.choice(("out", "in_", "both")))(*_edge_label(rng)).as_(end)

        patterns = [hop("a", "b")]
        if rng.random() < 0.5:
            patterns.append(hop("b", "c"))
        extra = rng.randrange(4)
        if extra == 0:
            patterns.append(__.as_("b").where(_vertex_filter(rng)))
        elif extra == 1:
            patterns.append(__.not_(hop("a", "b")) if len(patterns) == 1 else __.not_(hop("a", "c")))
        elif extra == 2:
            patterns.append(__.where("a", P.neq("b")))
        rng.shuffle(patterns)
        t = t.match(*patterns)
        if rng.random() < 0.5:
            return t.select("b"), "v"
        return t.select("a", "b").by(T.id), "m"

    return [
        (8, nav),
        (3, to_edges),
        (4, filter_),
        (4, has_),
        (4, repeat_),
        (4, values_),
        (3, maps),
        (1, labels),
        (2, path_),
        (3, branch),
        (2, side_effect),
        (1, sack_),
        (2, dedup_),
        (2, match_),
    ]


def _edge_steps() -> list[tuple[int, Step]]:
    def vertex(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        return getattr(t, rng.choice(("in_v", "out_v", "other_v", "both_v")))(), "v"

    def weight(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        return t.values("weight"), "n"

    def has_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        return t.has("weight", rng.choice((P.gt(0.3), P.lt(0.5), P.within(0.2, 1.0)))), "e"

    def label_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        return t.label(), "s"

    return [(5, vertex), (3, weight), (2, has_), (1, label_)]


def _number_steps() -> list[tuple[int, Step]]:
    def reduce_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        return getattr(t, rng.choice(("sum_", "max_", "min_", "mean", "count")))(), "n"

    def filter_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        return t.is_(_number_predicate(rng)), "n"

    def math_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        return t.math(rng.choice(("_ + 1", "_ * 2", "_ / 4", "_ - 18"))), "n"

    def order_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        return t.order().by(rng.choice((Order.asc, Order.desc))).limit(rng.randint(1, 4)), "n"

    def fold_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        return t.fold(), "l"

    def dedup_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        return t.dedup(), "n"

    return [(3, reduce_), (2, filter_), (2, math_), (2, order_), (1, fold_), (1, dedup_)]


def _string_steps() -> list[tuple[int, Step]]:
    def string_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        kind = rng.randrange(5)
        if kind == 0:
            return t.to_upper(), "s"
        if kind == 1:
            return t.concat("-", "x"), "s"
        if kind == 2:
            return t.substring(1, 3), "s"
        if kind == 3:
            return t.length(), "n"
        return t.replace("a", "A"), "s"

    def group_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        return t.group_count(), "m"

    def order_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        return t.order().by(rng.choice((Order.asc, Order.desc))), "s"

    def dedup_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        return t.dedup(), "s"

    def fold_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        return t.fold(), "l"

    return [(3, string_), (2, group_), (1, order_), (1, dedup_), (1, fold_)]


def _collection_steps() -> list[tuple[int, Step]]:
    def unfold_(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        return t.unfold(), "x"

    def count_local(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        return t.count(Scope.local), "n"

    def dedup_local(rng: random.Random, t: GraphTraversal) -> tuple[GraphTraversal, str]:
        return t.dedup(Scope.local), "l"

    return [(3, unfold_), (2, count_local), (1, dedup_local)]


STEPS: dict[str, list[tuple[int, Step]]] = {
    "v": _vertex_steps(),
    "e": _edge_steps(),
    "n": _number_steps(),
    "s": _string_steps(),
    "l": _collection_steps(),
    "m": _collection_steps()[:2],
}


def _pick(rng: random.Random, steps: list[tuple[int, Step]]) -> Step:
    total = sum(weight for weight, _ in steps)
    point = rng.uniform(0, total)
    for weight, step in steps:
        point -= weight
        if point <= 0:
            return step
    return steps[-1][1]


@dataclass(frozen=True)
class Case:
    """One generated traversal: its bytecode, its text, whether its order is defined and whether it writes."""

    bytecode: Bytecode
    text: str
    ordered: bool
    writes: bool


def _start(rng: random.Random, g: GraphTraversalSource, graph: RandomGraph) -> tuple[GraphTraversal, str]:
    kind = rng.randrange(10)
    ids = [vertex[0] for vertex in graph.vertices]
    if kind == 0:
        return g.V(*rng.sample(ids, min(len(ids), rng.randint(1, 3)))), "v"
    if kind == 3:
        return g.V(rng.choice(ids)), "v"
    if kind == 1:
        return g.E(), "e"
    if kind == 2:
        return g.with_sack(1.0).V(), "v"
    if kind == 4:
        return g.with_strategies(_view(rng)).V(), "v"
    return g.V(), "v"


def _view(rng: random.Random) -> SubgraphStrategy | PartitionStrategy:
    """A SubgraphStrategy over the random graph, or a read-only PartitionStrategy on ``lang``."""
    if rng.random() < 0.25:
        reads = rng.sample(LANGS, rng.randint(1, 2))
        return PartitionStrategy(partition_key="lang", write_partition=reads[0], read_partitions=reads)
    edges = __.has("weight", rng.choice((P.gt(0.3), P.lt(0.5)))) if rng.random() < 0.5 else None
    vertices = _vertex_filter(rng) if edges is None or rng.random() < 0.5 else None
    strategy = SubgraphStrategy(vertices=vertices, edges=edges)
    if rng.random() < 0.3:  # gremlinpython's check_adjacent_vertices writes a key servers ignore
        strategy.configuration["checkAdjacentVertices"] = False
    return strategy


def _write_case(rng: random.Random, g: GraphTraversalSource, graph: RandomGraph) -> GraphTraversal:
    """mergeV / mergeE / property writes, answered with what they touched."""
    name = rng.choice(NAMES)
    label = rng.choice(VERTEX_LABELS)
    kind = rng.randrange(4)
    if kind == 0:
        return (
            g.merge_v({T.label: label, "name": name})
            .option(Merge.on_create, {"age": rng.randint(18, 60)})
            .option(Merge.on_match, {"lang": "go"})
            .value_map("name", "age", "lang")
        )
    if kind == 1:
        return g.inject(1).merge_v({T.label: label, "name": name}).fold().count(Scope.local)
    ids = [vertex[0] for vertex in graph.vertices]
    out_id, in_id = rng.choice(ids), rng.choice(ids)
    if kind == 2:
        return (
            g.merge_e({T.label: rng.choice(EDGE_LABELS), "weight": 0.5})
            .option(Merge.out_v, {T.id: out_id})
            .option(Merge.in_v, {T.id: in_id})
            .values("weight")
        )
    return g.V(out_id).property(Cardinality.single, "age", 77).values("age")


def random_case(rng: random.Random, graph: RandomGraph) -> Case:
    """A random traversal over ``graph`` (read-only nine times in ten)."""
    while True:
        case = _random_case(rng, graph)
        if _order_free(case.text) and not ("match(" in case.text and "path(" in case.text):
            return case


SINGLE_START = re.compile(r"g\.withStrategies\([^)]*\)\)\.V\(\d+\)\.(emit\(\)\.)?repeat\(")


def _order_free(text: str) -> bool:
    """A dedup() in a repeat() body keeps what reaches it first, so its result depends on the order traversers
    arrive in, which TinkerPop does not promise, except for one start vertex walked breadth-first (a vertex is
    first reached at its shortest distance). Only that shape is compared."""
    return "dedup())" not in text or (text.count("repeat(") == 1 and SINGLE_START.match(text) is not None)


def _random_case(rng: random.Random, graph: RandomGraph) -> Case:
    source = traversal().with_graph(Graph()).with_("evaluationTimeout", TIMEOUT_MS)
    if rng.random() < 0.1:
        t = _write_case(rng, source, graph)
        return Case(t.bytecode, Translator("g").translate(t.bytecode), False, True)
    t, kind = _start(rng, source, graph)
    for _ in range(rng.randint(1, 4)):
        steps = STEPS.get(kind)
        if not steps:
            break
        t, kind = _pick(rng, steps)(rng, t)
    ordered = False
    if kind in ("v", "e") and rng.random() < 0.3:
        t = t.order().by(T.id, rng.choice((Order.asc, Order.desc))).range_(0, rng.randint(1, 5))
        ordered = True
    elif kind in ("n", "s") and rng.random() < 0.3:
        t = t.order()
        ordered = True
    return Case(t.bytecode, Translator("g").translate(t.bytecode), ordered, False)


# --- comparison ----------------------------------------------------------------------------------------


def _loose(value: Any) -> Any:
    """``canonical`` with lists as multisets (fold/aggregate order is not promised) and paths kept in order."""
    if isinstance(value, Path):
        return ("path", tuple(_loose(item) for item in value.objects))
    if isinstance(value, list | tuple):
        return ("bag", frozenset(Counter(_loose(item) for item in value).items()))
    if isinstance(value, dict):
        return ("map", frozenset(Counter((_loose(k), _loose(v)) for k, v in value.items()).items()))
    if isinstance(value, set | frozenset):
        return ("set", frozenset(_loose(item) for item in value))
    return canonical(value)


def same_results(case: Case, embedded: list[Any], reference: list[Any]) -> bool:
    """Whether two result lists are equal under TinkerPop's rules for this traversal."""
    if case.ordered:
        return [_loose(v) for v in embedded] == [_loose(v) for v in reference]
    return Counter(_loose(v) for v in embedded) == Counter(_loose(v) for v in reference)


def _run(g: GraphTraversalSource, bytecode: Bytecode) -> tuple[str, Any]:
    """("ok", results) or ("error", short message): both sides must agree on which."""
    connection = g.traversal_strategies.traversal_strategies[0].remote_connection
    try:
        return "ok", list(connection.submit(bytecode))
    except Exception as error:
        return "error", str(error).splitlines()[0][:200] if str(error) else type(error).__name__


def _results(traversers: list[Any]) -> list[Any]:
    out = []
    for traverser in traversers:
        bulk = getattr(traverser, "bulk", 1)
        out.extend([getattr(traverser, "object", traverser)] * bulk)
    return out


@dataclass
class Report:
    """What a differential run compared and where the two sides differed."""

    compared: int = 0
    both_refused: int = 0
    mismatches: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        """The one line ``make conformance`` prints."""
        return (
            f"{self.compared} traversals, {len(self.mismatches)} mismatches "
            f"({self.both_refused} refused by both sides; {self.seconds:.1f} s)"
        )


def run_differential(
    embedded: GraphTraversalSource,
    reference: GraphTraversalSource,
    *,
    seed: int,
    count: int,
    per_graph: int = 25,
    on_progress: Callable[[int], None] | None = None,
) -> Report:
    """Compare ``count`` random traversals (``per_graph`` per random graph) between the two sources."""
    rng = random.Random(seed)
    report = Report()
    started = time.perf_counter()
    graph: RandomGraph | None = None
    for index in range(count):
        if index % per_graph == 0 or graph is None:
            graph = random_graph(rng)
            load_graph(embedded, graph)
            load_graph(reference, graph)
        case = random_case(rng, graph)
        mine, theirs = _run(embedded, case.bytecode), _run(reference, case.bytecode)
        report.compared += 1
        if mine[0] == "error" and theirs[0] == "error":
            report.both_refused += 1
        elif mine[0] != theirs[0] or not same_results(case, _results(mine[1]), _results(theirs[1])):
            report.mismatches.append(f"{case.text}\n  embedded:  {mine}\n  reference: {theirs}")
        if case.writes:
            load_graph(embedded, graph)
            load_graph(reference, graph)
        if on_progress is not None and (index + 1) % 500 == 0:
            on_progress(index + 1)
    report.seconds = time.perf_counter() - started
    return report


def schemaless_engine() -> GraphTraversalSource:
    """A fresh in-memory embedded graph without the lineage schema's rules (like an empty TinkerGraph)."""
    from lineage_platform.graph.connect import EmbeddedRemoteConnection
    from lineage_platform.graph.embedded.engine import EmbeddedGraph

    return traversal().with_remote(EmbeddedRemoteConnection(EmbeddedGraph(None)))


@click.command()
@click.option("--count", type=click.IntRange(min=1), default=10_000, show_default=True)
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--server-url", default=None, help="A running TinkerPop Gremlin Server (default: start one).")
@click.option("-v", "--verbose", is_flag=True, help="Print every mismatch.")
def main(count: int, seed: int, server_url: str | None, verbose: bool) -> None:
    """Run random traversals on the embedded engine and the reference TinkerGraph; print the mismatches."""
    from lineage_platform.graph.connect import connect
    from tools.conformance.reference_server import ReferenceServer, server_home

    logging.getLogger("gremlinpython").setLevel(logging.CRITICAL)  # refusals are results here, not news
    server = None
    if server_url is None:
        server = ReferenceServer("tinkerpop", server_home("tinkerpop"))
        server_url = server.start()
    try:
        report = run_differential(
            schemaless_engine(),
            connect(server_url),
            seed=seed,
            count=count,
            on_progress=lambda n: click.echo(f"  {n}/{count} traversals", err=True),
        )
    finally:
        if server is not None:
            server.stop()
    for mismatch in report.mismatches if verbose else report.mismatches[:10]:
        click.echo(mismatch + "\n")
    click.echo(report.summary())
    sys.exit(1 if report.mismatches else 0)


if __name__ == "__main__":
    main()
