"""The graph's lineage as OpenLineage RunEvents, one JSON document per line.

Each process becomes one event per run (COMPLETE for a succeeded run, FAIL for a failed one) or, without runs,
one OTHER event. The event carries the process's statement (job facet ``sql``), its inputs and outputs with
their columns (dataset facet ``schema``) and, on each output, the ``columnLineage`` facet built by
``lineage_platform.sql.openlineage``. The platform's own facets (names in
``lineage_platform.ingest.events.openlineage``) keep what OpenLineage has no place for — the operation, the
predicates, the run's provenance, the dataset kind — so collecting the export into an empty graph rebuilds the
same lineage.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TextIO

from gremlin_python.process.graph_traversal import GraphTraversalSource, __

from lineage_platform.graph.writer import statement_key
from lineage_platform.ingest.events.native import RUN_FIELDS
from lineage_platform.ingest.events.openlineage import (
    DATASET_FACET,
    PROCESS_FACET,
    RUN_FACET,
    SCHEMA_URL,
)
from lineage_platform.model import RESULT_DATASET, ColumnEdge, Dataset, Predicate, RunInfo, StatementLineage
from lineage_platform.sql.openlineage import PRODUCER, dataset_identifier, to_openlineage_facet

FACET_SCHEMA_BASE = f"{PRODUCER}/blob/main/lineage_platform/export/facets"
"""Where the JSON schemas of the platform's own facets are published (the files in ``export/facets/``)."""
FACET_SCHEMAS = {
    PROCESS_FACET: "LineagePlatformProcessJobFacet",
    RUN_FACET: "LineagePlatformRunFacet",
    DATASET_FACET: "LineagePlatformDatasetFacet",
    "SQLJobFacet": "https://openlineage.io/spec/facets/1-0-1/SQLJobFacet.json#/$defs/SQLJobFacet",
}
SCHEMA_FACET_URL = (
    "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet"
)
EVENT_TYPES = {"SUCCEEDED": "COMPLETE", "FAILED": "FAIL", "RUNNING": "RUNNING", "ABORTED": "ABORT"}
RUN_ID_NAMESPACE = uuid.UUID("0b6f6a4e-3c59-4a51-9f7e-2d1c8e5b7a13")
_RUN_KEYS = (
    {"user": "user", "startTime": "start_time", "endTime": "end_time", "host": "host"}
    | {key: key for key in ("cluster", "engine", "job", "queue", "status", "source")}
    | {"runId": "external_id"}
)


@dataclass
class ExportSummary:
    """Counts of what an export wrote."""

    processes: int = 0
    events: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class _ProcessLineage:
    name: str
    statement: StatementLineage
    runs: tuple[RunInfo, ...]
    created: int


def export_openlineage(
    g: GraphTraversalSource, out: TextIO, namespace: str = "hive", table_namespace: str | None = None
) -> ExportSummary:
    """Write every process of the graph as OpenLineage RunEvents (JSON lines) to ``out``: jobs in ``namespace``,
    tables in ``table_namespace`` (the naming spec's ``hive://metastore-host:port``; default ``namespace``)."""
    started = time.perf_counter()
    summary = ExportSummary()
    for process in _processes(g):
        summary.processes += 1
        events = run_events(
            process.statement, process.runs, process.name, process.created, namespace, table_namespace
        )
        for event in events:
            out.write(json.dumps(event, sort_keys=True) + "\n")
            summary.events += 1
    summary.seconds = time.perf_counter() - started
    return summary


def run_events(
    statement: StatementLineage,
    runs: tuple[RunInfo, ...],
    job_name: str,
    created_millis: int = 0,
    namespace: str = "hive",
    table_namespace: str | None = None,
) -> Iterator[dict[str, Any]]:
    """The RunEvents of one statement: one per run, or one OTHER event when it has no run.

    A plain SELECT's ``$result`` is exported as ``$result:<process key>`` (kind temp), the name the graph gives it:
    every SELECT's result is a dataset of its own for OpenLineage consumers too.
    """
    tables = table_namespace or namespace
    facets = to_openlineage_facet(statement, tables)
    result_name = f"{RESULT_DATASET}:{statement_key(statement)}"
    inputs = [_dataset(d, tables, None, result_name) for d in statement.inputs]
    outputs = [_dataset(d, tables, facets.get(d.name), result_name) for d in statement.outputs]
    job = {
        "namespace": namespace,
        "name": job_name,
        "facets": {
            "sql": _facet("SQLJobFacet", query=statement.sql),
            PROCESS_FACET: _facet(
                PROCESS_FACET,
                operation=statement.operation,
                predicates=[p.to_dict() for p in statement.predicates],
            ),
        },
    }
    for run in runs or (None,):
        run_facets = {}
        if run is not None:
            fields = {
                key: getattr(run, key) for key in (*RUN_FIELDS, "source") if getattr(run, key) is not None
            }
            run_facets[RUN_FACET] = _facet(RUN_FACET, **fields)
        identity = f"{job_name}\x00{run.run_id(job_name) if run else ''}"
        run_uuid = (run and run.external_id) or str(uuid.uuid5(RUN_ID_NAMESPACE, identity))
        yield {
            "eventType": EVENT_TYPES.get(run.status, "OTHER") if run else "OTHER",
            "eventTime": (run and (run.end_time or run.start_time)) or _iso_millis(created_millis),
            "producer": PRODUCER,
            "schemaURL": SCHEMA_URL,
            "run": {"runId": run_uuid, "facets": run_facets},
            "job": job,
            "inputs": inputs,
            "outputs": outputs,
        }


def facet_schema_url(name: str) -> str:
    """The ``_schemaURL`` of a facet the export writes: the spec's for standard facets, the published schema
    file for the platform's own.

    >>> facet_schema_url("lineagePlatform_dataset").removeprefix(FACET_SCHEMA_BASE)
    '/LineagePlatformDatasetFacet.json#/$defs/LineagePlatformDatasetFacet'
    """
    schema = FACET_SCHEMAS[name]
    return schema if "://" in schema else f"{FACET_SCHEMA_BASE}/{schema}.json#/$defs/{schema}"


def _facet(name: str, **fields: Any) -> dict[str, Any]:
    return {"_producer": PRODUCER, "_schemaURL": facet_schema_url(name), **fields}


def _dataset(
    dataset: Dataset, namespace: str, column_lineage: dict[str, Any] | None, result_name: str
) -> dict[str, Any]:
    if dataset.name == RESULT_DATASET:
        identity = {"namespace": namespace, "name": result_name}
    else:
        identity = dict(zip(("namespace", "name"), dataset_identifier(dataset.name, namespace)))
    facets: dict[str, Any] = {DATASET_FACET: _facet(DATASET_FACET, kind=dataset.kind)}
    if dataset.columns:
        facets["schema"] = {
            "_producer": PRODUCER,
            "_schemaURL": SCHEMA_FACET_URL,
            "fields": [{"name": column} for column in dataset.columns],
        }
    if column_lineage and (column_lineage["fields"] or column_lineage["dataset"]):
        facets["columnLineage"] = column_lineage
    return {**identity, "facets": facets}


def _iso_millis(millis: int) -> str:
    """An epoch-milliseconds createTime as an ISO-8601 time."""
    return datetime.fromtimestamp(millis / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# ---- reading the graph back into records -------------------------------------------------------------


def _processes(g: GraphTraversalSource) -> Iterator[_ProcessLineage]:
    datasets = _datasets(g)
    reads = _pairs(g, "usedBy")
    writes = _pairs(g, "generated")
    edges = _column_edges(g)
    runs = _runs(g)
    processes = (
        g.V()
        .has_label("process")
        .project("name", "label", "operation", "sql", "predicates", "created")
        .by("qualifiedName")
        .by("name")
        .by("operation")
        .by("queryText")
        .by("predicates")
        .by("createTime")
        .to_list()
    )
    for row in sorted(processes, key=lambda r: r["name"]):
        name = row["name"]
        result_name = f"{RESULT_DATASET}:{name.removeprefix('process:')}"
        first_output = row["label"].partition(" ")[2]

        def public(qualified_name: str, result_name: str = result_name) -> str:
            return (
                RESULT_DATASET + qualified_name[len(result_name) :]
                if qualified_name.startswith(result_name)
                else qualified_name
            )

        statement = StatementLineage(
            index=0,
            operation=row["operation"],
            sql=row["sql"],
            inputs=tuple(_as_dataset(datasets[d], public(d)) for d in sorted(reads.get(name, ()))),
            outputs=tuple(
                _as_dataset(datasets[d], public(d))
                for d in sorted(writes.get(name, ()), key=lambda d: (public(d) != first_output, d))
            ),
            column_edges=tuple(
                ColumnEdge(public(e.source), public(e.target), e.strength, e.transform, e.masking, e.key_path)
                for e in edges.get(name, ())
            ),
            predicates=tuple(Predicate(**p) for p in json.loads(row["predicates"] or "[]")),
        )
        yield _ProcessLineage(name, statement, tuple(runs.get(name, ())), row["created"])


def _as_dataset(row: dict[str, Any], name: str) -> Dataset:
    kind = "temp" if row["kind"] == "result" else row["kind"]
    return Dataset(name=name, kind=kind, columns=tuple(sorted(row["columns"])))


def _datasets(g: GraphTraversalSource) -> dict[str, dict[str, Any]]:
    rows = (
        g.V()
        .has_label("table", "file")
        .project("name", "kind", "columns")
        .by("qualifiedName")
        .by(__.coalesce(__.values("datasetKind"), __.constant("table")))
        .by(__.out("hasColumn").values("name").fold())
        .to_list()
    )
    return {row["name"]: row for row in rows}


def _pairs(g: GraphTraversalSource, label: str) -> dict[str, list[str]]:
    """process name -> dataset names, for ``usedBy`` (dataset -> process) or ``generated`` (process -> dataset)."""
    process, dataset = (__.in_v(), __.out_v()) if label == "usedBy" else (__.out_v(), __.in_v())
    rows = (
        g.E()
        .has_label(label)
        .project("p", "d")
        .by(process.values("qualifiedName"))
        .by(dataset.values("qualifiedName"))
        .to_list()
    )
    pairs: dict[str, list[str]] = {}
    for row in rows:
        pairs.setdefault(row["p"], []).append(row["d"])
    return pairs


def _column_edges(g: GraphTraversalSource) -> dict[str, list[ColumnEdge]]:
    rows = (
        g.E()
        .has_label("flowsTo")
        .project("source", "target", "process", "strength", "transform", "keyPath", "masking")
        .by(__.out_v().values("qualifiedName"))
        .by(__.in_v().values("qualifiedName"))
        .by("process")
        .by("strength")
        .by("transform")
        .by("keyPath")
        .by("masking")
        .to_list()
    )
    edges: dict[str, list[ColumnEdge]] = {}
    for row in sorted(rows, key=lambda r: (r["process"], r["target"], r["source"], r["transform"])):
        edges.setdefault(row["process"], []).append(
            ColumnEdge(
                row["source"],
                row["target"],
                row["strength"],
                row["transform"],
                row["masking"],
                row["keyPath"] or None,
            )
        )
    return edges


def _runs(g: GraphTraversalSource) -> dict[str, list[RunInfo]]:
    rows = (
        g.E()
        .has_label("hasRun")
        .project("p", "run")
        .by(__.out_v().values("qualifiedName"))
        .by(__.in_v().value_map())
        .to_list()
    )
    runs: dict[str, list[RunInfo]] = {}
    for row in sorted(rows, key=lambda r: (r["p"], str(r["run"].get("startTime")))):
        values = {field: row["run"][key][0] for key, field in _RUN_KEYS.items() if key in row["run"]}
        runs.setdefault(row["p"], []).append(RunInfo(**values))
    return runs
