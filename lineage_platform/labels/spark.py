"""The scale path: the same propagation rounds as a PySpark job over exported edge and label tables.

``export_tables`` writes three Parquet tables from the graph (lineage hops, processes, declared labels);
``run_rounds`` iterates on them until a round adds nothing, checkpointing every few rounds; ``propagate_spark``
does both and stores the result exactly as the Gremlin path does. The rules themselves are the Gremlin path's
(``carry`` runs inside the executors), so both paths agree label for label and provenance for provenance: each
round pushes the labels that were new in the previous one (semi-naive evaluation), which reaches the same
fixpoint as pushing every label of a changed vertex, and ties are broken by the same (source, process, label)
order.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
from gremlin_python.process.graph_traversal import GraphTraversalSource
from gremlin_python.process.traversal import P, T

from lineage_platform.graph.dsl import __, lineage_source
from lineage_platform.graph.vocabulary import Key, LabelGroup
from lineage_platform.labels.label import Label
from lineage_platform.labels.propagate import (
    COPY_OPERATIONS,
    FLOW_EDGE_FIELDS,
    Hop,
    ProcessInfo,
    PropagationSummary,
    carry,
    flow_edge_fields,
    hop_kind,
    store_taggings,
)
from lineage_platform.labels.rules import RuleSet
from lineage_platform.labels.store import Tagging, read_taggings

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

CHECKPOINT_EVERY = 5


def export_tables(g: GraphTraversalSource, directory: str | Path) -> Path:
    """Write hops.parquet, processes.parquet and labels.parquet for the Spark path; returns the directory."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    g = lineage_source(g)
    names = {
        row["id"]: row["name"]
        for row in g.V()
        .has_label(P.within(*LabelGroup.LABELLED))
        .project("id", "name")
        .by(T.id)
        .by(__.qualified_name())
        .to_list()
    }
    hops: list[dict[str, Any]] = []
    for row in flow_edge_fields(
        g.flows()
        .project("s", "t", "kind", *FLOW_EDGE_FIELDS)
        .by(__.out_v().id_())
        .by(__.in_v().id_())
        .by(__.in_v().label())
    ).to_list():
        hops.append(_hop_row(row["s"], row["t"], row["p"], "column", hop_kind(row["kind"]), row))
    processes = []
    for row in (
        g.processes()
        .project("name", "operation", "predicates", "propagate", "ins", "outs", "in_columns")
        .by(__.qualified_name())
        .by(__.coalesce(__.values(Key.OPERATION), __.constant("")))
        .by(__.coalesce(__.values(Key.PREDICATES), __.constant("[]")))
        .by(__.coalesce(__.values(Key.PROPAGATE), __.constant(True)))
        .by(__.inputs().id_().fold())
        .by(__.outputs().id_().fold())
        .by(__.inputs().columns_of().id_().fold())
        .to_list()
    ):
        processes.append(
            {"name": row["name"], "predicates": row["predicates"], "propagate": bool(row["propagate"])}
        )
        for source in row["ins"]:
            hops += [_hop_row(source, target, row["name"], "table", "table") for target in row["outs"]]
        if row["operation"] in COPY_OPERATIONS:
            for source in row["in_columns"]:
                hops += [_hop_row(source, target, row["name"], "copy", "table") for target in row["outs"]]
    for hop in hops:
        hop["source_name"] = names.get(hop["source"], "")
    labels = [
        {"vertex": t.vertex, "key": t.label.key, "value": t.label.value, "declared_by": t.declared_by}
        for _, t in read_taggings(g, origin="declared")
    ]
    pq.write_table(pa.Table.from_pylist(hops, schema=HOPS), directory / "hops.parquet")
    pq.write_table(pa.Table.from_pylist(processes, schema=PROCESSES), directory / "processes.parquet")
    pq.write_table(pa.Table.from_pylist(labels, schema=LABELS), directory / "labels.parquet")
    return directory


HOPS = pa.schema(
    [
        ("source", pa.int64()),
        ("source_name", pa.string()),
        ("target", pa.int64()),
        ("process", pa.string()),
        ("level", pa.string()),
        ("target_kind", pa.string()),
        ("strength", pa.string()),
        ("transform", pa.string()),
        ("masking", pa.bool_()),
        ("propagate", pa.bool_()),
    ]
)
PROCESSES = pa.schema([("name", pa.string()), ("predicates", pa.string()), ("propagate", pa.bool_())])
PROPOSED = "vertex long, key string, value string, round int, from_name string, from_label string, via string, rule string"
LABELS = pa.schema(
    [("vertex", pa.int64()), ("key", pa.string()), ("value", pa.string()), ("declared_by", pa.string())]
)


def _hop_row(
    source: Any, target: Any, process: str, level: str, target_kind: str, row: dict | None = None
) -> dict:
    row = row or {}
    return {
        "source": source,
        "target": target,
        "process": process,
        "level": level,
        "target_kind": target_kind,
        "strength": row.get("strength", "strong"),
        "transform": row.get("transform", "IDENTITY"),
        "masking": bool(row.get("masking", False)),
        "propagate": bool(row.get("propagate", True)),
    }


def _candidates(rows: Iterator[Any], rules: RuleSet) -> Iterator[tuple]:
    """Executor side: apply the rules to (label, hop, process) rows; yields proposed labels with provenance."""
    for row in rows:
        if not (row.propagate and row.process_propagate is not False):
            continue
        hop = Hop(
            row.target, row.process, row.level, row.target_kind, row.strength, row.transform, row.masking
        )
        process = ProcessInfo(tuple(json.loads(row.predicates or "[]")), True)
        label = Label(row.key, row.value)
        carried = carry(label, rules.rule(label.key), hop, process, row.source_name)
        if carried is not None:
            rule = row.transform if row.level == "column" else row.level
            yield (
                row.target,
                carried.key,
                carried.value,
                row.round + 1,
                row.source_name,
                str(label),
                row.process,
                rule,
            )


def run_rounds(spark: SparkSession, directory: str | Path, rules: RuleSet | None = None):
    """Iterate on the exported tables until a round adds nothing; returns (propagated rows, rounds)."""
    from pyspark.sql import functions as F

    rules = rules or RuleSet()
    directory = Path(directory)
    hops = spark.read.parquet(str(directory / "hops.parquet"))
    processes = spark.read.parquet(str(directory / "processes.parquet")).withColumnRenamed(
        "propagate", "process_propagate"
    )
    enriched = hops.join(processes, hops.process == processes.name, "left").drop("name").cache()
    declared = spark.read.parquet(str(directory / "labels.parquet"))
    declared = declared.where(
        F.col("key").isin([k for k, r in rules.rules.items() if not r.enabled]) == F.lit(False)
    )
    if not rules.default.enabled:
        declared = declared.where(F.col("key").isin(list(k for k, r in rules.rules.items() if r.enabled)))
    state = declared.select("vertex", "key", "value", F.lit(0).alias("round")).cache()
    frontier = state
    propagated: DataFrame | None = None
    rounds = 0
    while True:
        rounds += 1
        joined = frontier.join(enriched, frontier.vertex == enriched.source)
        proposed = spark.createDataFrame(
            joined.rdd.mapPartitions(lambda rows: _candidates(rows, rules)), PROPOSED
        )
        fresh = proposed.join(state, ["vertex", "key", "value"], "left_anti")
        best = (
            fresh.groupBy("vertex", "key", "value")
            .agg(F.min(F.struct("from_name", "via", "from_label", "rule", "round")).alias("best"))
            .select(
                "vertex",
                "key",
                "value",
                "best.round",
                "best.from_name",
                "best.from_label",
                "best.via",
                "best.rule",
            )
        )
        if rounds % CHECKPOINT_EVERY == 0:
            best = best.localCheckpoint()
        else:
            best = best.cache()
        if best.isEmpty():
            break
        propagated = best if propagated is None else propagated.unionByName(best)
        state = state.unionByName(best.select("vertex", "key", "value", "round"))
        frontier = best.select("vertex", "key", "value", "round")
    return ([] if propagated is None else propagated.collect()), rounds


def propagate_spark(
    g: GraphTraversalSource, spark: SparkSession, work_dir: str | Path, rules: RuleSet | None = None
) -> PropagationSummary:
    """Export, run the rounds on Spark, and store the result like ``propagate(g)`` (full mode)."""
    started = time.perf_counter()
    export_tables(g, work_dir)
    rows, rounds = run_rounds(spark, work_dir, rules)
    desired = [
        Tagging(
            r.vertex, Label(r.key, r.value), "propagated", r.from_name, r.from_label, r.via, r.rule, r.round
        )
        for r in rows
    ]
    summary = PropagationSummary(rounds=rounds, labelled=len({t.vertex for t in desired}))
    summary.added, summary.withdrawn = store_taggings(g, desired, incremental=False)
    summary.seconds = time.perf_counter() - started
    return summary
