"""Gremlin text -> bytecode speed of ``graph.gremlin_text`` against two baselines measured in the same run.

- API calls: building the same traversals with gremlinpython's Python API (no text at all: the floor);
- Python eval: ``eval`` of the same traversals written as Python text (text -> bytecode by CPython's compiler);
- the project: ``parse_traversal`` of the Gremlin text;
plus the parse rate over every TinkerPop feature traversal (informational, no Python translation exists).

Usage: ``python benchmarks/bench_gremlin_text.py [REPEAT]`` — each traversal parsed REPEAT times
(default 500; env BENCH_GREMLIN_TEXT_REPEAT).
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.process.strategies import SubgraphStrategy
from gremlin_python.process.traversal import Order, P, T, TextP, TraversalStrategies

from lineage_platform.graph.gremlin_text import parse_script, parse_traversal

_PARAMETER = re.compile(r"using the parameter (\w+) (?:defined as|of)")
FEATURES = Path(__file__).resolve().parents[2] / "shared" / "tinkerpop-features" / "features"

# (Gremlin text, the same traversal as Python text) — the shapes lineage users type
WORKLOAD = [
    (
        "g.V().has('table', 'qualifiedName', 'dw.orders').out('usedBy').out('generated').values('qualifiedName')",
        "g.V().has('table', 'qualifiedName', 'dw.orders').out('usedBy').out('generated').values('qualifiedName')",
    ),
    (
        "g.V().has('column', 'qualifiedName', 'dw.orders.id').repeat(out('flowsTo').simplePath())"
        ".until(outE('flowsTo').count().is(0)).path().by('qualifiedName').toList()",
        "g.V().has('column', 'qualifiedName', 'dw.orders.id').repeat(__.out('flowsTo').simple_path())"
        ".until(__.out_e('flowsTo').count().is_(0)).path().by('qualifiedName')",
    ),
    (
        "g.V().hasLabel('table').has('name', TextP.startingWith('fact_'))"
        ".project('name', 'columns').by('name').by(out('hasColumn').count())",
        "g.V().has_label('table').has('name', TextP.starting_with('fact_'))"
        ".project('name', 'columns').by('name').by(__.out('hasColumn').count())",
    ),
    (
        "g.V().hasLabel('process').has('createTime', P.between(1000l, 2000l)).order().by('createTime', desc)"
        ".limit(10).valueMap('name', 'createBy').by(unfold())",
        "g.V().has_label('process').has('createTime', P.between(1000, 2000)).order().by('createTime', Order.desc)"
        ".limit(10).value_map('name', 'createBy').by(__.unfold())",
    ),
    (
        "g.withStrategies(new SubgraphStrategy(vertices: __.has('typeName', P.within('hive_table', 'hive_column'))))"
        ".V().group().by(T.label).by(__.count())",
        "g.with_strategies(SubgraphStrategy(vertices=__.has('typeName', P.within('hive_table', 'hive_column'))))"
        ".V().group().by(T.label).by(__.count())",
    ),
    (
        "g.mergeV([(T.label): 'table', qualifiedName: 'dw.orders']).option(Merge.onCreate, [name: 'orders'])",
        "g.merge_v({T.label: 'table', 'qualifiedName': 'dw.orders'}).option(Merge.on_create, {'name': 'orders'})",
    ),
]


def _source() -> GraphTraversalSource:
    return GraphTraversalSource(None, TraversalStrategies())


def _namespace() -> dict[str, object]:
    from gremlin_python.process.traversal import Merge

    return {
        "g": _source(),
        "__": __,
        "P": P,
        "TextP": TextP,
        "T": T,
        "Order": Order,
        "Merge": Merge,
        "SubgraphStrategy": SubgraphStrategy,
    }


def _api_builders() -> list[Callable[[], object]]:
    """The workload as direct gremlinpython calls (compiled once, so only the calls are timed)."""
    namespace = _namespace()
    return [eval(compile(f"lambda: {python}", "<bench>", "eval"), namespace) for _, python in WORKLOAD]


def _time(run: Callable[[], object], repeat: int) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        run()
    return time.perf_counter() - started


def _feature_traversals() -> list[tuple[str, dict[str, str]]]:
    """Every traversal block of the feature files, with its scenario's parameters bound to placeholders."""
    found: list[tuple[str, dict[str, str]]] = []
    for path in sorted(FEATURES.rglob("*.feature")):
        lines = path.read_text(encoding="utf-8").splitlines()
        parameters: dict[str, str] = {}
        for index, line in enumerate(lines):
            if line.strip().startswith("Scenario"):
                parameters = {}
            if match := _PARAMETER.search(line):
                parameters[match.group(1)] = match.group(1)
            if line.strip() == '"""' and lines[index - 1].rstrip().endswith(
                ("the traversal of", "initializer of")
            ):
                end = next(i for i in range(index + 1, len(lines)) if lines[i].strip() == '"""')
                found.append(("\n".join(lines[index + 1 : end]), dict(parameters)))
    return found


def main() -> None:
    """Run the measurements and print the table."""
    repeat = int(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("BENCH_GREMLIN_TEXT_REPEAT", 500))
    builders = _api_builders()
    namespace = _namespace()
    count = repeat * len(WORKLOAD)

    api = _time(lambda: [build() for build in builders], repeat)
    python_eval = _time(lambda: [eval(python, namespace) for _, python in WORKLOAD], repeat)
    parser = _time(lambda: [parse_traversal(text) for text, _ in WORKLOAD], repeat)

    print(f"{len(WORKLOAD)} lineage traversals x {repeat} = {count} conversions")
    print(f"{'method':<32}{'µs / traversal':>16}{'parser ÷ method':>18}")
    for name, seconds in (
        ("gremlinpython API calls", api),
        ("Python eval of Python text", python_eval),
        ("gremlin_text.parse_traversal", parser),
    ):
        print(f"{name:<32}{seconds / count * 1e6:>16.1f}{parser / seconds:>18.2f}")

    if FEATURES.is_dir():
        texts = _feature_traversals()
        started = time.perf_counter()
        for text, parameters in texts:
            parse_script(text, parameters)
        seconds = time.perf_counter() - started
        print(
            f"TinkerPop corpus: {len(texts)} traversals in {seconds:.2f} s "
            f"({len(texts) / seconds:,.0f} traversals/s)"
        )


if __name__ == "__main__":
    main()
