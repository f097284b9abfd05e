"""OpenLineage RunEvents (spec 2-0-2): reading them into lineage records, and the facet names both directions use.

A RunEvent has ``eventType`` (START, RUNNING, COMPLETE, ABORT, FAIL, OTHER), ``eventTime``, ``run.runId``,
``job.namespace``/``job.name`` and ``inputs``/``outputs`` datasets (``namespace``, ``name``, ``facets``). Used:

* dataset facet ``schema`` (``fields[].name``) — the dataset's columns;
* output facet ``columnLineage``: ``fields.<column>.inputFields[]`` (``namespace``, ``name``, ``field``,
  ``transformations[]`` with ``type`` DIRECT/INDIRECT, ``subtype``, ``description``, ``masking``) and ``dataset[]``
  (inputs that affect every row: filters, joins, grouping). DIRECT is a strong edge, INDIRECT a weak one; the
  subtype is the edge's transform; a description ``key path K`` is its JSON/map key path;
* job facet ``sql`` (``query``) — the statement text (without it the process is keyed by the job's name);
* the platform's own facets, written by ``lineage export openlineage`` so that a round trip keeps everything:
  job facet :data:`PROCESS_FACET` (``operation``, ``predicates``), run facet :data:`RUN_FACET` (the run's
  provenance fields) and dataset facet :data:`DATASET_FACET` (``kind``).

A dataset whose ``symlinks`` facet names a ``TABLE`` identifier (``identifiers[]``: ``namespace``, ``name``,
``type``; Spark names a Hive table by its storage path and gives the table there) is that table, named as the SQL
logs name it (``dws.orders_daily``). Other datasets in a file-system namespace (``hdfs://nn:8020`` +
``/warehouse/t``) are paths named by the joined URL; the rest are tables named by ``name``; a ``temp`` dataset named ``$result:<key>`` (a plain SELECT's result, as
the export names it) is the statement's ``$result``, so the writer keys it again from the statement. Column lineage from a dataset the
event neither reads nor writes rejects the event.

Runs: every START, RUNNING, COMPLETE, FAIL and ABORT event updates the one run of its ``run.runId`` (state
RUNNING, SUCCEEDED, FAILED or ABORTED; start = the START's ``eventTime`` or ``nominalTime.nominalStartTime``,
end = the terminal event's ``eventTime``); OTHER events add lineage only. The operation comes from the SQL of
the ``sql`` job facet (parsed: INSERT, CREATE_AS_SELECT, ...; its column lineage is used when the event has no
``columnLineage``), or, when that is a plain SELECT writing the event's output (dbt models) or there is no SQL,
from the ``jobType`` job facet (:data:`JOB_TYPE_OPERATIONS`); else OTHER.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, get_args

from lineage_platform.errors import IngestError, LineageError
from lineage_platform.ingest.events.items import LineageItems, field
from lineage_platform.ingest.events.native import RUN_FIELDS
from lineage_platform.ingest.records import ABORTED, FAILED, RUNNING, SUCCEEDED
from lineage_platform.model import (
    RESULT_DATASET,
    ColumnEdge,
    Dataset,
    Operation,
    Predicate,
    RunInfo,
    StatementLineage,
    Transform,
)

if TYPE_CHECKING:
    from lineage_platform.ingest.catalog_index import CatalogIndex

SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
PROCESS_FACET = "lineagePlatform_process"
RUN_FACET = "lineagePlatform_run"
DATASET_FACET = "lineagePlatform_dataset"
RUN_ID_FIELD = "runId"  # a RunEvent run's id (OpenLineage's field; the graph keeps it as Key.RUN_ID)
KEY_PATH_PREFIX = "key path "
FILE_SYSTEM_SCHEMES = frozenset(
    {"hdfs", "s3", "s3a", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs", "file", "oss"}
)
EVENT_STATUS = {"START": RUNNING, "RUNNING": RUNNING, "COMPLETE": SUCCEEDED, "FAIL": FAILED, "ABORT": ABORTED}
EVENT_TYPES = frozenset({"OTHER", *EVENT_STATUS})
JOB_TYPE_OPERATIONS: dict[str, Operation] = {
    "MODEL": "CREATE_AS_SELECT",  # dbt builds a model as CREATE TABLE/VIEW ... AS its compiled SELECT
    "SNAPSHOT": "MERGE",  # dbt snapshots merge changed rows into the snapshot table
    "SEED": "LOAD",  # dbt seeds load a CSV file
}
"""Operation of a job by its ``jobType`` facet's ``jobType``, when its SQL does not tell."""
SQL_DIALECTS = {"spark": "spark", "hive": "hive", "trino": "trino"}
"""sqlglot dialect of the ``sql`` facet by the ``jobType`` facet's integration, unless the facet names its dialect."""
_TRANSFORMS = frozenset(get_args(Transform))
_OPERATIONS = frozenset(get_args(Operation))


def is_run_event(event: dict[str, Any]) -> bool:
    """Whether ``event`` looks like an OpenLineage RunEvent."""
    return "eventType" in event and "run" in event and "job" in event


def dataset_name(namespace: str, name: str) -> tuple[str, bool]:
    """(platform dataset name, is a path) of an OpenLineage dataset identifier (the inverse of
    ``sql.openlineage.dataset_identifier``).

    >>> dataset_name("hdfs://nn:8020", "/warehouse/t")
    ('hdfs://nn:8020/warehouse/t', True)
    >>> dataset_name("s3://bucket", "logs/day=1"), dataset_name("file", "/tmp/out")
    (('s3://bucket/logs/day=1', True), ('/tmp/out', True))
    >>> dataset_name("hive://metastore:9083", "DWD.Users")
    ('dwd.users', False)
    """
    if namespace == "file":
        return "/" + name.lstrip("/"), True
    if namespace.partition("://")[0].lower() in FILE_SYSTEM_SCHEMES:
        return namespace.rstrip("/") + "/" + name.lstrip("/"), True
    return name.lower(), False


def lineage_items(event: dict[str, Any], source: str, catalog: CatalogIndex | None = None) -> LineageItems:
    """The one (statement, run or None) pair of a RunEvent; raises IngestError for what it cannot use.
    ``catalog``: table schemas for parsing the ``sql`` job facet."""
    event_type = field(event, "eventType", str, "event")
    if event_type not in EVENT_TYPES:
        raise IngestError(
            f"unknown OpenLineage eventType {event_type!r}", hint=f"use one of {sorted(EVENT_TYPES)}"
        )
    job = field(event, "job", dict, "event")
    job_facets = job.get("facets") or {}
    datasets: dict[tuple[str, str], Dataset] = {}
    inputs = tuple(_dataset(d, f"inputs[{n}]", datasets) for n, d in enumerate(event.get("inputs") or []))
    outputs = tuple(_dataset(d, f"outputs[{n}]", datasets) for n, d in enumerate(event.get("outputs") or []))
    edges = [
        edge
        for n, output in enumerate(event.get("outputs") or [])
        for edge in _column_edges(output, datasets, f"outputs[{n}]")
    ]
    process = job_facets.get(PROCESS_FACET) or {}
    query = (job_facets.get("sql") or {}).get("query")
    parsed = _parsed_sql(query, job_facets, catalog) if isinstance(query, str) and not process else None
    if parsed is not None:
        inputs, outputs = inputs or parsed.inputs, outputs or parsed.outputs
        edges = edges or _sql_edges(parsed, inputs, outputs)
    operation = process.get("operation") or _operation(parsed, outputs, job_facets)
    if operation not in _OPERATIONS:
        raise IngestError(
            f"unknown operation {operation!r} in {PROCESS_FACET}", hint=f"use {sorted(_OPERATIONS)}"
        )
    job_name = f"{field(job, 'namespace', str, 'job')}/{field(job, 'name', str, 'job')}"
    statement = StatementLineage(
        index=0,
        operation=operation,
        sql=query if isinstance(query, str) else f"job:{job_name}",
        inputs=inputs,
        outputs=outputs,
        column_edges=tuple(edges),
        predicates=_predicates(process.get("predicates") or []),
        process_key=None if process else job_name,  # the platform's own export keeps its process keys
    )
    return [(statement, _run(event, event_type, job, source))]


def _parsed_sql(
    query: str, job_facets: dict[str, Any], catalog: CatalogIndex | None
) -> StatementLineage | None:
    """The lineage of the job's SQL (its last statement that reads or writes data), or None if it does not parse:
    the event's own lineage stands without it."""
    from lineage_platform.sql import extract_lineage

    integration = str((job_facets.get("jobType") or {}).get("integration") or "").lower()
    dialect = (job_facets.get("sql") or {}).get("dialect") or SQL_DIALECTS.get(integration, "hive")
    try:
        statements = extract_lineage(
            query, schema=catalog.subset(query) if catalog else None, dialect=str(dialect).lower()
        )
    except LineageError:
        return None
    usable = [s for s in statements if not s.errors and (s.inputs or s.outputs)]
    return usable[-1] if usable else None


def _sql_edges(
    parsed: StatementLineage, inputs: tuple[Dataset, ...], outputs: tuple[Dataset, ...]
) -> list[ColumnEdge]:
    """The parsed SQL's column edges between the event's datasets; a SELECT's result is the event's one output
    (a dbt model's SQL is the SELECT that builds the model)."""
    result = outputs[0].name if parsed.operation == "SELECT" and len(outputs) == 1 else None

    def named(name: str) -> str:
        return result + name[len(RESULT_DATASET) :] if result and name.startswith(RESULT_DATASET) else name

    known = {d.name for d in inputs + outputs}
    edges = [replace(e, source=named(e.source), target=named(e.target)) for e in parsed.column_edges]
    return [
        e
        for e in edges
        if e.source.rpartition(".")[0] in known
        and (e.target in known or e.target.rpartition(".")[0] in known)
    ]


def _operation(
    parsed: StatementLineage | None, outputs: tuple[Dataset, ...], job_facets: dict[str, Any]
) -> str:
    if parsed is not None and not (parsed.operation == "SELECT" and outputs):
        return parsed.operation
    job_type = str((job_facets.get("jobType") or {}).get("jobType") or "").upper()
    return JOB_TYPE_OPERATIONS.get(job_type, "OTHER")


def symlinked_table(facets: dict[str, Any], where: str) -> str | None:
    """The table a dataset is, by the first ``TABLE`` identifier of its ``symlinks`` facet (lower case), or None.

    >>> symlinked_table({"symlinks": {"identifiers": [
    ...     {"namespace": "hive://ms:9083", "name": "DWS.Orders_Daily", "type": "TABLE"}]}}, "outputs[0]")
    'dws.orders_daily'
    """
    identifiers = (facets.get("symlinks") or {}).get("identifiers") or []
    for n, identifier in enumerate(identifiers):
        at = f"{where}.symlinks.identifiers[{n}]"
        if str(field(identifier, "type", str, at)).upper() == "TABLE":
            return dataset_name(field(identifier, "namespace", str, at), field(identifier, "name", str, at))[
                0
            ]
    return None


def _predicates(items: list[Any]) -> tuple[Predicate, ...]:
    try:
        return tuple(Predicate(**item) for item in items)
    except TypeError as exc:
        raise IngestError(
            f"bad predicate in {PROCESS_FACET}: {exc}", hint="predicates are {table, column, op, value}"
        ) from exc


def _dataset(item: Any, where: str, datasets: dict[tuple[str, str], Dataset]) -> Dataset:
    namespace, name = field(item, "namespace", str, where), field(item, "name", str, where)
    facets = item.get("facets") or {}
    table = symlinked_table(facets, where)
    full_name, is_path = (table, False) if table else dataset_name(namespace, name)
    kind = (facets.get(DATASET_FACET) or {}).get("kind", "path" if is_path else "table")
    if kind not in ("table", "view", "path", "temp"):
        raise IngestError(f"{where}: unknown dataset kind {kind!r}", hint="kind is table, view, path or temp")
    schema_fields = (facets.get("schema") or {}).get("fields") or []
    columns = tuple(str(f["name"]).lower() for f in schema_fields if isinstance(f, dict) and "name" in f)
    if kind == "temp" and full_name.startswith(RESULT_DATASET + ":"):
        full_name = RESULT_DATASET
    dataset = Dataset(name=full_name, kind=kind, columns=columns)
    datasets[(namespace, name)] = dataset
    return dataset


def _column_edges(
    output: dict[str, Any], datasets: dict[tuple[str, str], Dataset], where: str
) -> list[ColumnEdge]:
    facet = (output.get("facets") or {}).get("columnLineage")
    if not facet:
        return []
    target = datasets[(output["namespace"], output["name"])].name
    edges = []
    for column, spec in (facet.get("fields") or {}).items():
        for n, input_field in enumerate((spec or {}).get("inputFields") or []):
            at = f"{where}.columnLineage.fields.{column}.inputFields[{n}]"
            edges += _edges(input_field, f"{target}.{column.lower()}", spec, datasets, at)
    for n, input_field in enumerate(facet.get("dataset") or []):
        edges += _edges(input_field, target, {}, datasets, f"{where}.columnLineage.dataset[{n}]")
    return edges


def _edges(
    input_field: Any, target: str, spec: dict[str, Any], datasets: dict[tuple[str, str], Dataset], where: str
) -> list[ColumnEdge]:
    namespace, name = field(input_field, "namespace", str, where), field(input_field, "name", str, where)
    dataset = datasets.get((namespace, name))
    if dataset is None:
        raise IngestError(
            f"{where} reads {namespace}/{name}, which is neither an input nor an output of the event",
            hint="list every dataset of the column lineage in inputs",
        )
    source = f"{dataset.name}.{field(input_field, 'field', str, where).lower()}"
    transformations = input_field.get("transformations") or [_legacy_transformation(spec)]
    return [_edge(source, target, t, f"{where}.transformations") for t in transformations]


def _legacy_transformation(spec: dict[str, Any]) -> dict[str, Any]:
    """Column lineage facet 1-0 kept one ``transformationType`` per output field."""
    identity = str(spec.get("transformationType", "IDENTITY")).upper() == "IDENTITY"
    return {"type": "DIRECT", "subtype": "IDENTITY" if identity else "TRANSFORMATION"}


def _edge(source: str, target: str, transformation: Any, where: str) -> ColumnEdge:
    kind = field(transformation, "type", str, where).upper()
    if kind not in ("DIRECT", "INDIRECT"):
        raise IngestError(f"{where}: transformation type {kind!r}", hint="type is DIRECT or INDIRECT")
    subtype = str(transformation.get("subtype") or "").upper()
    if subtype not in _TRANSFORMS:
        subtype = "TRANSFORMATION" if kind == "DIRECT" else "FILTER"
    description = transformation.get("description") or ""
    key_path = description[len(KEY_PATH_PREFIX) :] if description.startswith(KEY_PATH_PREFIX) else None
    return ColumnEdge(
        source=source,
        target=target,
        strength="strong" if kind == "DIRECT" else "weak",
        transform=subtype,
        masking=bool(transformation.get("masking", False)),
        key_path=key_path,
    )


def _run(event: dict[str, Any], event_type: str, job: dict[str, Any], source: str) -> RunInfo | None:
    if event_type not in EVENT_STATUS:
        return None
    run = field(event, "run", dict, "event")
    facets = run.get("facets") or {}
    provenance = {k: v for k, v in (facets.get(RUN_FACET) or {}).items() if not k.startswith("_")}
    if provenance:  # written by the platform's export: the run as it was, including where it was first read
        unknown = set(provenance) - {*RUN_FIELDS, "source"}
        if unknown or not isinstance(provenance.get("status"), str):
            raise IngestError(
                f"{RUN_FACET} has unknown fields {sorted(unknown)} or no status", hint="re-export it"
            )
        return RunInfo(**{"source": source, **provenance})
    nominal = facets.get("nominalTime") or {}
    event_time = field(event, "eventTime", str, "event")
    return RunInfo(
        status=EVENT_STATUS[event_type],
        start_time=event_time if event_type == "START" else nominal.get("nominalStartTime"),
        end_time=event_time if EVENT_STATUS[event_type] != RUNNING else None,
        engine=(facets.get("processing_engine") or {}).get("name"),
        job=f"{job.get('namespace')}/{job.get('name')}",
        external_id=field(run, RUN_ID_FIELD, str, "event.run"),
        source=source,
    )
