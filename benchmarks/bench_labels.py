"""Label propagation to fixpoint: the Gremlin path vs a networkx implementation of the same rules, and vs Spark.

    python benchmarks/bench_labels.py                      # 20k column vertices, Spark at 5k and 20k
    python benchmarks/bench_labels.py --columns 1000000 --spark-columns 20000,100000
    python benchmarks/bench_labels.py --columns 200000 --spark-columns ''   # Gremlin vs networkx only

The networkx baseline runs the same rounds with the same rule function (``carry``) over an in-memory DiGraph of the
same edges, so the ratio is the cost of doing it through Gremlin on the graph. Both must reach the same labels.
Neither side's timing counts building its graph (loading the embedded store, building the networkx DiGraph).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import defaultdict

import networkx as nx
from synthetic_lineage import column_warehouse, load_warehouse  # beside this script

from lineage_platform.graph import connect
from lineage_platform.labels import Declaration, Label, declare, propagate
from lineage_platform.labels.propagate import Hop, ProcessInfo, carry
from lineage_platform.labels.rules import RuleSet
from lineage_platform.labels.store import read_taggings

TABLE_WIDTH = 20  # columns per table


def networkx_graph(warehouse: dict) -> nx.MultiDiGraph:
    """The warehouse's lineage as a networkx graph whose edges carry the Hop the rules read."""
    graph = nx.MultiDiGraph()
    for source, target, process, strength, transform, masking in warehouse["flows"]:
        kind = "column" if target.count(".") == 2 else "table"
        graph.add_edge(source, target, hop=Hop(target, process, "column", kind, strength, transform, masking))
    for process, sources, target, _ in warehouse["processes"]:
        for source in sources:
            graph.add_edge(source, target, hop=Hop(target, process, "table"))
    return graph


def networkx_fixpoint(
    graph: nx.MultiDiGraph, warehouse: dict, rules: RuleSet
) -> tuple[dict[str, set[str]], int]:
    """The same rounds on a networkx graph: returns propagated labels by vertex name, and rounds."""
    processes = {p: ProcessInfo(tuple(preds), True) for p, _, _, preds in warehouse["processes"]}
    state: dict[str, dict[Label, int]] = defaultdict(dict)
    for name, text in warehouse["declared"]:
        state[name][Label.parse(text)] = 0
    frontier = set(state)
    rounds = 0
    while frontier:
        rounds += 1
        changed = set()
        for source in frontier:
            for _, target, data in graph.out_edges(source, data=True):
                hop = data["hop"]
                for label in list(state[source]):
                    carried = carry(label, rules.rule(label.key), hop, processes[hop.process], source)
                    if carried is not None and carried not in state[target]:
                        state[target][carried] = rounds
                        changed.add(target)
        frontier = changed
    declared = {(name, text) for name, text in warehouse["declared"]}
    result = {
        name: {str(label) for label in labels if (name, str(label)) not in declared}
        for name, labels in state.items()
    }
    return {k: v for k, v in result.items() if v}, rounds


def gremlin_fixpoint(warehouse: dict, rules: RuleSet):
    g = connect("memory:")
    started = time.perf_counter()
    ids = load_warehouse(g, warehouse)
    loaded = time.perf_counter() - started
    by_name: dict[str, list[Label]] = defaultdict(list)
    for name, text in warehouse["declared"]:
        by_name[name].append(Label.parse(text))
    declare(g, [Declaration(name, tuple(labels)) for name, labels in by_name.items()])
    started = time.perf_counter()
    summary = propagate(g, rules)
    seconds = time.perf_counter() - started
    names = {vid: name for name, vid in ids.items()}
    result: dict[str, set[str]] = defaultdict(set)
    for _, tagging in read_taggings(g, origin="propagated"):
        result[names[tagging.vertex]].add(str(tagging.label))
    return g, dict(result), summary, seconds, loaded


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--columns", type=int, default=20_000, help="column vertices of the big comparison")
    parser.add_argument(
        "--spark-columns", default="5000,20000", help="graph sizes for Gremlin vs Spark (empty: no Spark)"
    )
    args = parser.parse_args()
    rules = RuleSet()

    warehouse = column_warehouse(args.columns // TABLE_WIDTH, TABLE_WIDTH, seed=3)
    _, by_gremlin, summary, gremlin_s, loaded = gremlin_fixpoint(warehouse, rules)
    started = time.perf_counter()
    graph = networkx_graph(warehouse)
    built = time.perf_counter() - started
    started = time.perf_counter()
    by_networkx, nx_rounds = networkx_fixpoint(graph, warehouse, rules)
    nx_s = time.perf_counter() - started
    assert by_gremlin == by_networkx, "the Gremlin path and the networkx baseline disagree"
    print(
        f"{args.columns} column vertices, {len(warehouse['flows'])} column edges (graph loaded in {loaded:.1f}s,"
        f" networkx graph built in {built:.1f}s)"
    )
    print(f"{'path':<10} {'rounds':>6} {'seconds':>8} {'labelled':>9}")
    print(f"{'gremlin':<10} {summary.rounds:>6} {gremlin_s:>8.2f} {summary.labelled:>9}")
    print(f"{'networkx':<10} {nx_rounds:>6} {nx_s:>8.2f} {len(by_networkx):>9}")
    print(f"gremlin / networkx: {gremlin_s / nx_s:.1f}x (neither counts building its graph)")

    if not args.spark_columns:
        return
    from lineage_platform.ingest.spark import session
    from lineage_platform.labels.spark import propagate_spark

    spark = session("local[2]")
    print(f"\n{'columns':>8} {'gremlin s':>10} {'spark s':>8} {'spark / gremlin':>16}")
    for columns in (int(c) for c in args.spark_columns.split(",")):
        small = column_warehouse(columns // TABLE_WIDTH, TABLE_WIDTH, seed=5)
        g, _, _, gremlin_small, _ = gremlin_fixpoint(small, rules)
        with tempfile.TemporaryDirectory() as work:
            started = time.perf_counter()
            propagate_spark(g, spark, work, rules)
            spark_s = time.perf_counter() - started
        print(f"{columns:>8} {gremlin_small:>10.2f} {spark_s:>8.2f} {spark_s / gremlin_small:>16.2f}")
    print(
        json.dumps(
            {"note": "spark includes export to Parquet and write-back; a local[2] session, not a cluster"}
        )
    )


if __name__ == "__main__":
    main()
