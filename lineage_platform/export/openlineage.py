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

from gremlin_python.process.graph_traversal import GraphTraversalSource

from lineage_platform.graph.dsl import LineageTraversalSource, __, lineage_source
from lineage_platform.graph.vocabulary import Key, VertexLabel
from lineage_platform.graph.writer import RUN_PROPERTIES, statement_key
from lineage_platform.ingest.events.native import RUN_FIELDS
from lineage_platform.ingest.events.openlineage import (
    DATASET_FACET,
    PROCESS_FACET,
    RUN_FACET,
    RUN_ID_FIELD,
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
            "run": {RUN_ID_FIELD: run_uuid, "facets": run_facets},
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
    g = lineage_source(g)
    datasets = _datasets(g)
    edges = _column_edges(g)
    processes = (
        g.processes()
        .project("p", "runs", "reads", "writes")
        .by(__.element_map())
        .by(__.run_maps())
        .by(__.inputs().qualified_name().fold())
        .by(__.outputs().qualified_name().fold())
        .to_list()
    )
    for row in sorted(processes, key=lambda r: r["p"][Key.QUALIFIED_NAME]):
        process = row["p"]
        name = process[Key.QUALIFIED_NAME]
        result_name = f"{RESULT_DATASET}:{name.removeprefix('process:')}"
        first_output = process[Key.NAME].partition(" ")[2]

        def public(qualified_name: str, result_name: str = result_name) -> str:
            return (
                RESULT_DATASET + qualified_name[len(result_name) :]
                if qualified_name.startswith(result_name)
                else qualified_name
            )

        statement = StatementLineage(
            index=0,
            operation=process[Key.OPERATION],
            sql=process[Key.QUERY_TEXT],
            inputs=tuple(_as_dataset(datasets[d], public(d)) for d in sorted(row["reads"])),
            outputs=tuple(
                _as_dataset(datasets[d], public(d))
                for d in sorted(row["writes"], key=lambda d: (public(d) != first_output, d))
            ),
            column_edges=tuple(
                ColumnEdge(public(e.source), public(e.target), e.strength, e.transform, e.masking, e.key_path)
                for e in edges.get(name, ())
            ),
            predicates=tuple(Predicate(**p) for p in json.loads(process.get(Key.PREDICATES) or "[]")),
        )
        yield _ProcessLineage(name, statement, _runs(row["runs"]), process[Key.CREATE_TIME])


def _as_dataset(row: dict[str, Any], name: str) -> Dataset:
    kind = "temp" if row["kind"] == "result" else row["kind"]
    return Dataset(name=name, kind=kind, columns=tuple(sorted(row["columns"])))


def _datasets(g: LineageTraversalSource) -> dict[str, dict[str, Any]]:
    rows = (
        g.V()
        .has_label(VertexLabel.TABLE, VertexLabel.FILE)
        .project("name", "kind", "columns")
        .by(Key.QUALIFIED_NAME)
        .by(__.coalesce(__.values(Key.DATASET_KIND), __.constant("table")))
        .by(__.columns_of().values(Key.NAME).fold())
        .to_list()
    )
    return {row["name"]: row for row in rows}


def _column_edges(g: LineageTraversalSource) -> dict[str, list[ColumnEdge]]:
    keys = (Key.PROCESS, Key.STRENGTH, Key.TRANSFORM, Key.KEY_PATH, Key.MASKING)
    rows = g.flows().project("source", "target", *keys)
    rows = rows.by(__.out_v().qualified_name()).by(__.in_v().qualified_name())
    for key in keys:
        rows = rows.by(key)
    edges: dict[str, list[ColumnEdge]] = {}
    for row in sorted(
        rows.to_list(), key=lambda r: (r[Key.PROCESS], r["target"], r["source"], r[Key.TRANSFORM])
    ):
        edges.setdefault(row[Key.PROCESS], []).append(
            ColumnEdge(
                row["source"],
                row["target"],
                row[Key.STRENGTH],
                row[Key.TRANSFORM],
                row[Key.MASKING],
                row[Key.KEY_PATH] or None,
            )
        )
    return edges


def _runs(maps: list[dict[Any, Any]]) -> tuple[RunInfo, ...]:
    """A process's runs from their element maps, by start time (runs without one first)."""
    ordered = sorted(maps, key=lambda run: (Key.START_TIME in run, run.get(Key.START_TIME, "")))
    return tuple(
        RunInfo(**{field: run[key] for key, field in RUN_PROPERTIES.items() if key in run}) for run in ordered
    )
