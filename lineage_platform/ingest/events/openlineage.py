"""OpenLineage events (spec 2-0-2): reading them into lineage records, and the facet names both directions use.

The spec's three kinds of event, told apart by shape (:func:`is_openlineage`):

* a RunEvent has ``run`` (``runId``, ``facets``) and ``job``; ``eventType`` (START, RUNNING, COMPLETE, ABORT, FAIL,
  OTHER) is optional in the spec and an event without one adds lineage only, like OTHER;
* a JobEvent has ``job`` and ``inputs``/``outputs`` but no ``run``: the job's static lineage, written without a run;
* a DatasetEvent has ``dataset`` and no ``job``: the dataset and its ``schema`` columns, written without a process.

A job has ``namespace``/``name`` and ``inputs``/``outputs`` datasets (``namespace``, ``name``, ``facets``). Used:

* dataset facet ``schema`` (``fields[].name``) — the dataset's columns;
* output facet ``columnLineage``: ``fields.<column>.inputFields[]`` (``namespace``, ``name``, ``field``,
  ``transformations[]`` with ``type`` DIRECT/INDIRECT, ``subtype``, ``description``, ``masking``) and ``dataset[]``
  (inputs that affect every row: filters, joins, grouping). DIRECT is a strong edge, INDIRECT a weak one; the
  subtype is the edge's transform; a description ``key path K`` is its JSON/map key path. Facet 1-0 gave one
  ``transformationType`` per output field (IDENTITY, or another word: AGGREGATE/AGGREGATION is an aggregation, the
  rest a transformation). An input field with neither says only that the value flows: a TRANSFORMATION, or,
  when the ``sql`` facet parses, the SQL's own edge between the same columns (dbt sends ``transformations: []``).
  A dataset the column lineage reads that ``inputs`` does not list is read all the same:
  it becomes an input of the statement (Spark's Iceberg and Delta commands name their sources only there);
* output facet ``lifecycleStateChange`` (CREATE, OVERWRITE, DROP, TRUNCATE, RENAME) — the operation when neither
  SQL nor ``jobType`` tells it (:data:`LIFECYCLE_OPERATIONS`);
* job facet ``sql`` (``query``) — the statement text (without it the process is keyed by the job's name);
* the platform's own facets, written by ``lineage export openlineage`` so that a round trip keeps everything:
  job facet :data:`PROCESS_FACET` (``operation``, ``predicates``), run facet :data:`RUN_FACET` (the run's
  provenance fields) and dataset facet :data:`DATASET_FACET` (``kind``).

The ``sql`` facet's tables are matched to the event's datasets by name: a table the SQL names with fewer parts
(``orders``, ``public.orders``) is the one event dataset whose name ends with those parts
(``shop.public.orders``), so the SQL's column lineage lands on the datasets the event names.

A dataset whose ``symlinks`` facet names a ``TABLE`` identifier (``identifiers[]``: ``namespace``, ``name``,
``type``; Spark names a Hive table by its storage path and gives the table there) is that table, named as the SQL
logs name it (``dws.orders_daily``). Other datasets in a file-system namespace (``hdfs://nn:8020`` +
``/warehouse/t``) are paths named by the joined URL, as are names that are file-system URLs themselves
(``file://host/in.txt``) or absolute paths (``/mnt/raw/events`` in any other namespace); the rest are tables named
by ``name``; a ``temp`` dataset named ``$result:<key>`` (a plain SELECT's result, as
the export names it) is the statement's ``$result``, so the writer keys it again from the statement.

Runs: every START, RUNNING, COMPLETE, FAIL and ABORT event updates the one run of its ``run.runId`` (state
RUNNING, SUCCEEDED, FAILED or ABORTED; start = the START's ``eventTime`` or ``nominalTime.nominalStartTime``,
end = the terminal event's ``eventTime``; times are stored as ISO-8601 UTC with milliseconds, a time without a
zone is UTC, and a time that is no ISO-8601 time rejects the event); OTHER events add lineage only. The operation comes from the SQL of
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
from lineage_platform.ingest.records import ABORTED, FAILED, RUNNING, SUCCEEDED, iso_from_value
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
LIFECYCLE_OPERATIONS: dict[str, Operation] = {
    "CREATE": "CREATE_AS_SELECT",  # CREATE_TABLE when the event reads nothing
    "OVERWRITE": "INSERT_OVERWRITE",
    "DROP": "DROP",
    "TRUNCATE": "DELETE",
    "RENAME": "ALTER_RENAME",
}
"""Operation of an event by its outputs' ``lifecycleStateChange`` facet, when neither SQL nor ``jobType`` tells."""
LEGACY_TRANSFORMS: dict[str, Transform] = {
    "IDENTITY": "IDENTITY",
    "AGGREGATE": "AGGREGATION",
    "AGGREGATION": "AGGREGATION",
}
"""Transform of a column lineage facet 1-0 ``transformationType``; any other word is a TRANSFORMATION."""
SQL_DEFAULT_DB = "default"
"""Database the SQL parser gives unqualified names; such a name matches the event dataset it is the tail of."""
SQL_DIALECTS = {"spark": "spark", "hive": "hive", "trino": "trino"}
"""sqlglot dialect of the ``sql`` facet by the ``jobType`` facet's integration, unless the facet names its dialect."""
_TRANSFORMS = frozenset(get_args(Transform))
_OPERATIONS = frozenset(get_args(Operation))


def is_openlineage(event: dict[str, Any]) -> bool:
    """Whether ``event`` looks like an OpenLineage RunEvent (``run`` and ``job``), JobEvent (``job``) or
    DatasetEvent (``dataset``)."""
    return "job" in event or ("dataset" in event and "eventTime" in event)


def dataset_name(namespace: str, name: str) -> tuple[str, bool]:
    """(platform dataset name, is a path) of an OpenLineage dataset identifier (the inverse of
    ``sql.openlineage.dataset_identifier``).

    >>> dataset_name("hdfs://nn:8020", "/warehouse/t")
    ('hdfs://nn:8020/warehouse/t', True)
    >>> dataset_name("s3://bucket", "logs/day=1"), dataset_name("file", "/tmp/out")
    (('s3://bucket/logs/day=1', True), ('/tmp/out', True))
    >>> dataset_name("hive://metastore:9083", "DWD.Users")
    ('dwd.users', False)
    >>> dataset_name("file.localhost", "file://localhost/in.txt"), dataset_name("dbfs", "/mnt/raw/events")
    (('file://localhost/in.txt', True), ('/mnt/raw/events', True))
    """
    if name.partition("://")[0].lower() in FILE_SYSTEM_SCHEMES and "://" in name:
        return name, True
    if namespace == "file":
        return "/" + name.lstrip("/"), True
    if namespace.partition("://")[0].lower() in FILE_SYSTEM_SCHEMES:
        return namespace.rstrip("/") + "/" + name.lstrip("/"), True
    if name.startswith("/"):  # no table name starts with a slash: a path in a namespace of no known scheme
        return name, True
    return name.lower(), False


def lineage_items(event: dict[str, Any], source: str, catalog: CatalogIndex | None = None) -> LineageItems:
    """The one (statement, run or None) pair of a RunEvent, JobEvent or DatasetEvent; raises IngestError for what
    it cannot use. ``catalog``: table schemas for parsing the ``sql`` job facet."""
    if "job" not in event:
        return [(_dataset_statement(event), None)]
    event_type = field(event, "eventType", str, "event") if "eventType" in event else "OTHER"
    if event_type not in EVENT_TYPES:
        raise IngestError(
            f"unknown OpenLineage eventType {event_type!r}", hint=f"use one of {sorted(EVENT_TYPES)}"
        )
    job = field(event, "job", dict, "event")
    run = _run(event, event_type, job, source) if "run" in event else None  # a JobEvent has no run
    return [(_job_statement(event, job, catalog), run)]


def _dataset_statement(event: dict[str, Any]) -> StatementLineage:
    """A DatasetEvent: its dataset and columns, declared without a process (a schema change's operation)."""
    dataset = _dataset(field(event, "dataset", dict, "event"), "dataset", {})
    return StatementLineage(
        index=0, operation="ALTER_ADD_COLUMNS", sql=f"dataset:{dataset.name}", outputs=(dataset,)
    )


def _job_statement(
    event: dict[str, Any], job: dict[str, Any], catalog: CatalogIndex | None
) -> StatementLineage:
    """The lineage of a RunEvent's or JobEvent's job: its datasets, column lineage, SQL and operation."""
    job_facets = job.get("facets") or {}
    datasets: dict[tuple[str, str], Dataset] = {}
    raw_outputs = event.get("outputs") or []
    inputs = tuple(_dataset(d, f"inputs[{n}]", datasets) for n, d in enumerate(event.get("inputs") or []))
    outputs = tuple(_dataset(d, f"outputs[{n}]", datasets) for n, d in enumerate(raw_outputs))
    listed = set(datasets)
    unspecified: set[tuple[str, str]] = set()  # column pairs the facet gives without a transformation
    edges = [
        edge
        for n, output in enumerate(raw_outputs)
        for edge in _column_edges(output, datasets, f"outputs[{n}]", unspecified)
    ]
    inputs += tuple(
        dataset for key, dataset in datasets.items() if key not in listed
    )  # read by column lineage
    process = job_facets.get(PROCESS_FACET) or {}
    query = (job_facets.get("sql") or {}).get("query")
    parsed = _parsed_sql(query, job_facets, catalog) if isinstance(query, str) and not process else None
    if parsed is not None:
        parsed = _named_as_event(parsed, inputs + outputs)
        inputs, outputs = inputs or parsed.inputs, outputs or parsed.outputs
        sql_edges = _sql_edges(parsed, inputs, outputs)
        edges = _refined(edges, unspecified, sql_edges) if edges else sql_edges
    operation = process.get("operation") or _operation(parsed, inputs, outputs, job_facets, raw_outputs)
    if operation not in _OPERATIONS:
        raise IngestError(
            f"unknown operation {operation!r} in {PROCESS_FACET}", hint=f"use {sorted(_OPERATIONS)}"
        )
    job_name = f"{field(job, 'namespace', str, 'job')}/{field(job, 'name', str, 'job')}"
    return StatementLineage(
        index=0,
        operation=operation,
        sql=query if isinstance(query, str) else f"job:{job_name}",
        inputs=inputs,
        outputs=outputs,
        column_edges=tuple(edges),
        predicates=_predicates(process.get("predicates") or []),
        process_key=None if process else job_name,  # the platform's own export keeps its process keys
    )


def _parsed_sql(
    query: str, job_facets: dict[str, Any], catalog: CatalogIndex | None
) -> StatementLineage | None:
    """The lineage of the job's SQL (its last statement that reads or writes data), or None if it does not parse
    (the event's own lineage stands without it). A statement with columns the parser could not place (no schema)
    is used: its other lineage holds."""
    from lineage_platform.sql import extract_lineage

    integration = str((job_facets.get("jobType") or {}).get("integration") or "").lower()
    dialect = (job_facets.get("sql") or {}).get("dialect") or SQL_DIALECTS.get(integration, "hive")
    try:
        statements = extract_lineage(
            query,
            schema=catalog.subset(query) if catalog else None,
            dialect=str(dialect).lower(),
            default_db=SQL_DEFAULT_DB,
        )
    except LineageError:
        return None
    usable = [  # a column it could not place (no schema) leaves the rest of the statement's lineage sound
        s for s in statements if all(i.kind == "unresolved" for i in s.errors) and (s.inputs or s.outputs)
    ]
    return usable[-1] if usable else None


def _named_as_event(parsed: StatementLineage, datasets: tuple[Dataset, ...]) -> StatementLineage:
    """The parsed SQL with each table it names renamed to the event's dataset it is (:func:`event_name`). Tables the
    SQL names unqualified that the event does not list (a START event's output) get the database/schema prefix the
    event gave the SQL's other unqualified tables, when that is one prefix: the session's current schema."""
    known = {d.name for d in datasets}
    names = {d.name: event_name(d.name, known) for d in parsed.inputs + parsed.outputs}
    unqualified = {sql_name: sql_name.removeprefix(SQL_DEFAULT_DB + ".") for sql_name in names}
    prefixes = {
        names[sql_name].removesuffix(tail)
        for sql_name, tail in unqualified.items()
        if tail != sql_name and names[sql_name] != sql_name and names[sql_name].endswith("." + tail)
    }
    if len(prefixes) == 1:
        [prefix] = prefixes
        for sql_name, tail in unqualified.items():
            if tail != sql_name and names[sql_name] == sql_name and sql_name not in known:
                names[sql_name] = prefix + tail

    def renamed(column_or_table: str) -> str:
        if column_or_table in names:
            return names[column_or_table]
        table, _, column = column_or_table.rpartition(".")
        return f"{names[table]}.{column}" if table in names else column_or_table

    return replace(
        parsed,
        inputs=tuple(replace(d, name=names[d.name]) for d in parsed.inputs),
        outputs=tuple(replace(d, name=names[d.name]) for d in parsed.outputs),
        column_edges=tuple(
            replace(e, source=renamed(e.source), target=renamed(e.target)) for e in parsed.column_edges
        ),
    )


def event_name(sql_name: str, known: set[str]) -> str:
    """The name among ``known`` (an event's datasets) of the table the SQL names ``sql_name``: itself, else the one
    known name ending with its parts (without the parser's default database); else ``sql_name`` unchanged.

    >>> event_name("default.orders", {"shop.public.orders", "shop.public.items"})
    'shop.public.orders'
    >>> event_name("public.orders", {"a.public.orders", "b.public.orders"})  # two candidates: no guess
    'public.orders'
    """
    if sql_name in known:
        return sql_name
    tails = {sql_name}
    if sql_name.startswith(SQL_DEFAULT_DB + "."):
        tails.add(sql_name[len(SQL_DEFAULT_DB) + 1 :])
    candidates = {name for name in known for tail in tails if name == tail or name.endswith("." + tail)}
    return candidates.pop() if len(candidates) == 1 else sql_name


def _refined(
    edges: list[ColumnEdge], unspecified: set[tuple[str, str]], sql_edges: list[ColumnEdge]
) -> list[ColumnEdge]:
    """The event's column edges, those it gave without a transformation replaced by the SQL's strong edge between
    the same columns (how the value flows: identity, transformation, aggregation ...)."""
    by_pair = {(e.source, e.target): e for e in sql_edges if e.strength == "strong"}
    return [by_pair.get((e.source, e.target), e) if (e.source, e.target) in unspecified else e for e in edges]


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
    parsed: StatementLineage | None,
    inputs: tuple[Dataset, ...],
    outputs: tuple[Dataset, ...],
    job_facets: dict[str, Any],
    raw_outputs: list[Any],
) -> str:
    """The SQL's operation, else the ``jobType``'s, else the outputs' ``lifecycleStateChange``'s, else OTHER."""
    if parsed is not None and not (parsed.operation == "SELECT" and outputs):
        return parsed.operation
    job_type = str((job_facets.get("jobType") or {}).get("jobType") or "").upper()
    if job_type in JOB_TYPE_OPERATIONS:
        return JOB_TYPE_OPERATIONS[job_type]
    for output in raw_outputs:
        change = ((output.get("facets") or {}).get("lifecycleStateChange") or {}).get("lifecycleStateChange")
        operation = LIFECYCLE_OPERATIONS.get(str(change).upper())
        if operation:
            return "CREATE_TABLE" if operation == "CREATE_AS_SELECT" and not inputs else operation
    return "OTHER"


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
    output: dict[str, Any],
    datasets: dict[tuple[str, str], Dataset],
    where: str,
    unspecified: set[tuple[str, str]],
) -> list[ColumnEdge]:
    """The edges of an output's ``columnLineage`` facet; adds to ``unspecified`` the pairs it gives no
    transformation for."""
    facet = (output.get("facets") or {}).get("columnLineage")
    if not facet:
        return []
    target = datasets[(output["namespace"], output["name"])].name
    edges = []
    for column, spec in (facet.get("fields") or {}).items():
        for n, input_field in enumerate((spec or {}).get("inputFields") or []):
            at = f"{where}.columnLineage.fields.{column}.inputFields[{n}]"
            edges += _edges(input_field, f"{target}.{column.lower()}", spec, datasets, at, unspecified)
    for n, input_field in enumerate(facet.get("dataset") or []):
        edges += _edges(input_field, target, {}, datasets, f"{where}.columnLineage.dataset[{n}]", unspecified)
    return edges


def _edges(
    input_field: Any,
    target: str,
    spec: dict[str, Any],
    datasets: dict[tuple[str, str], Dataset],
    where: str,
    unspecified: set[tuple[str, str]],
) -> list[ColumnEdge]:
    namespace, name = field(input_field, "namespace", str, where), field(input_field, "name", str, where)
    dataset = datasets.get((namespace, name)) or _dataset(
        {"namespace": namespace, "name": name}, where, datasets
    )
    source = f"{dataset.name}.{field(input_field, 'field', str, where).lower()}"
    transformations = input_field.get("transformations") or [_legacy_transformation(spec)]
    if not input_field.get("transformations") and not spec.get("transformationType"):
        unspecified.add((source, target))
    return [_edge(source, target, t, f"{where}.transformations") for t in transformations]


def _legacy_transformation(spec: dict[str, Any]) -> dict[str, Any]:
    """Column lineage facet 1-0 kept one ``transformationType`` per output field (:data:`LEGACY_TRANSFORMS`); a
    field with neither that nor ``transformations`` says only that the value flows: a TRANSFORMATION."""
    kind = str(spec.get("transformationType") or "").upper()
    return {"type": "DIRECT", "subtype": LEGACY_TRANSFORMS.get(kind, "TRANSFORMATION")}


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
    event_time = _time(field(event, "eventTime", str, "event"), "event.eventTime")
    start_time = event_time if event_type == "START" else nominal.get("nominalStartTime")
    return RunInfo(
        status=EVENT_STATUS[event_type],
        start_time=_time(start_time, "run.facets.nominalTime.nominalStartTime") if start_time else None,
        end_time=event_time if EVENT_STATUS[event_type] != RUNNING else None,
        engine=(facets.get("processing_engine") or {}).get("name"),
        job=f"{job.get('namespace')}/{job.get('name')}",
        external_id=field(run, RUN_ID_FIELD, str, "event.run"),
        source=source,
    )


def _time(value: Any, where: str) -> str:
    """``value`` (ISO-8601 text; UTC when it names no zone) as the platform spells times, or an IngestError."""
    try:
        return iso_from_value(value)
    except ValueError as exc:
        raise IngestError(f"{where}: {exc}", hint="OpenLineage times are ISO-8601 date-times") from exc
