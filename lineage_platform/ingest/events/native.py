"""The platform's own hook event: what an engine or scheduler publishes about one query it ran.

Two kinds, both JSON objects with ``"format": "lineage-platform"`` and ``"version": 1``:

* ``"kind": "query"`` — the SQL text (a script is fine: ``SET``/``USE`` apply as in the job logs), an optional
  ``default_db`` and ``run``, the provenance of the run: ``status`` (SUCCEEDED/FAILED or a synonym), ``user``,
  ``start_time``, ``end_time``, ``host``, ``cluster``, ``engine`` (picks the SQL dialect), ``job``, ``queue``.
  The collector parses the SQL; failed runs moved no data and are skipped.
* ``"kind": "lineage"`` — pre-parsed ``statements`` in the SQL lineage JSON contract
  (``lineage_platform/sql/README.md``) and an optional ``run`` as above.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import fields
from typing import TYPE_CHECKING, Any, get_args

from lineage_platform.errors import IngestError
from lineage_platform.ingest.catalog_index import CatalogIndex
from lineage_platform.ingest.events.items import LineageItems, field
from lineage_platform.ingest.records import FAILED, SUCCEEDED, QueryRecord, status_of
from lineage_platform.ingest.statements import prepare_query
from lineage_platform.model import (
    ColumnEdge,
    Dataset,
    Operation,
    Predicate,
    RunInfo,
    StatementLineage,
    Transform,
)

if TYPE_CHECKING:
    from lineage_platform.sql.function_rules import FunctionRule

FORMAT = "lineage-platform"
VERSION = 1
RUN_FIELDS = tuple(f.name for f in fields(RunInfo) if f.name != "source")
_OPERATIONS = frozenset(get_args(Operation))
_TRANSFORMS = frozenset(get_args(Transform))


def query_event(sql: str, *, default_db: str | None = None, **run: str | None) -> dict[str, Any]:
    """A ``query`` event for ``sql``; ``run`` takes the provenance fields of :data:`RUN_FIELDS`.

    >>> query_event("insert into t select * from s", user="alice", status="SUCCEEDED")["run"]
    {'user': 'alice', 'status': 'SUCCEEDED'}
    """
    unknown = set(run) - set(RUN_FIELDS)
    if unknown:
        raise IngestError(f"unknown run fields {sorted(unknown)}", hint=f"use {', '.join(RUN_FIELDS)}")
    event: dict[str, Any] = {"format": FORMAT, "version": VERSION, "kind": "query", "sql": sql}
    if default_db:
        event["default_db"] = default_db
    event["run"] = {key: value for key, value in run.items() if value is not None}
    return event


def lineage_event(statements: Iterable[StatementLineage], run: RunInfo | None = None) -> dict[str, Any]:
    """A ``lineage`` event carrying already extracted statements and, optionally, the run that executed them."""
    event: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "kind": "lineage",
        "statements": [statement.to_dict() for statement in statements],
    }
    if run is not None:
        event["run"] = {key: getattr(run, key) for key in RUN_FIELDS if getattr(run, key) is not None}
    return event


def is_native(event: dict[str, Any]) -> bool:
    """Whether ``event`` claims to be a platform event."""
    return event.get("format") == FORMAT


def lineage_items(
    event: dict[str, Any],
    source: str,
    catalog: CatalogIndex,
    function_rules: Mapping[str, FunctionRule] | None = None,
) -> LineageItems:
    """The (statement, run) pairs of a platform event; raises IngestError for anything it cannot use.
    ``function_rules`` (user UDFs) apply to the SQL of query events."""
    if event.get("version") != VERSION:
        raise IngestError(
            f"unsupported {FORMAT} event version {event.get('version')!r}",
            hint=f"this collector reads version {VERSION}; upgrade it",
        )
    kind = event.get("kind")
    if kind == "query":
        return _query_items(event, source, catalog, function_rules)
    if kind == "lineage":
        run = _run(event, source) if "run" in event else None
        statements = field(event, "statements", list, "event")
        return [(statement_from_dict(item, f"statements[{n}]"), run) for n, item in enumerate(statements)]
    raise IngestError(f"unknown {FORMAT} event kind {kind!r}", hint="kind is 'query' or 'lineage'")


def _run(event: dict[str, Any], source: str) -> RunInfo:
    run = event.get("run", {})
    if not isinstance(run, dict):
        raise IngestError("event.run is not a JSON object", hint="run holds the provenance fields")
    unknown = set(run) - set(RUN_FIELDS)
    if unknown:
        raise IngestError(f"unknown run fields {sorted(unknown)}", hint=f"use {', '.join(RUN_FIELDS)}")
    status = status_of(run.get("status", SUCCEEDED))
    if status is None:
        raise IngestError(f"unknown run status {run.get('status')!r}", hint="use SUCCEEDED or FAILED")
    values = {key: None if run.get(key) is None else str(run[key]) for key in RUN_FIELDS}
    return RunInfo(**{**values, "status": status, "source": source})


def _query_items(
    event: dict[str, Any],
    source: str,
    catalog: CatalogIndex,
    function_rules: Mapping[str, FunctionRule] | None,
) -> LineageItems:
    from lineage_platform.ingest.bulk_load import parse_statement

    sql = field(event, "sql", str, "event")
    run = _run(event, source)
    record = QueryRecord(sql=sql, **vars(run))
    if record.status == FAILED:
        return []
    prepared = prepare_query(record.sql, record.engine, event.get("default_db"), record.start_time)
    items: LineageItems = []
    for statement in prepared.statements:
        parsed = parse_statement(statement, (run,), catalog, function_rules)
        if parsed.error:
            raise IngestError(f"SQL {parsed.error}", hint="fix the statement and re-send the event")
        items.extend((lineage, run) for lineage in parsed.lineage)
    return items


def statement_from_dict(item: Any, where: str) -> StatementLineage:
    """A StatementLineage from its JSON contract form, checking names and field types on the way."""
    operation = field(item, "operation", str, where)
    if operation not in _OPERATIONS:
        raise IngestError(
            f"{where}.operation {operation!r} is unknown", hint=f"use one of {sorted(_OPERATIONS)}"
        )
    inputs = tuple(_dataset(d, f"{where}.inputs[{n}]") for n, d in enumerate(item.get("inputs") or []))
    outputs = tuple(_dataset(d, f"{where}.outputs[{n}]") for n, d in enumerate(item.get("outputs") or []))
    known = {d.name for d in inputs + outputs}
    edges = []
    for n, edge in enumerate(item.get("column_edges") or []):
        at = f"{where}.column_edges[{n}]"
        source, target = field(edge, "source", str, at), field(edge, "target", str, at)
        for name, tables in (
            (source, (source.rpartition(".")[0],)),
            (target, (target, target.rpartition(".")[0])),
        ):
            if not known.intersection(tables):
                raise IngestError(
                    f"{at} refers to {name!r}, whose table is not among the statement's inputs or outputs",
                    hint="list every table an edge touches in inputs or outputs",
                )
        strength, transform = edge.get("strength", "strong"), edge.get("transform", "IDENTITY")
        if strength not in ("strong", "weak") or transform not in _TRANSFORMS:
            raise IngestError(
                f"{at} has strength {strength!r} and transform {transform!r}",
                hint=f"strength is strong or weak; transform one of {sorted(_TRANSFORMS)}",
            )
        edges.append(
            ColumnEdge(
                source=source,
                target=target,
                strength=strength,
                transform=transform,
                masking=bool(edge.get("masking", False)),
                key_path=edge.get("key_path"),
            )
        )
    predicates = tuple(
        Predicate(
            table=field(p, "table", str, f"{where}.predicates[{n}]"),
            column=field(p, "column", str, f"{where}.predicates[{n}]"),
            op=field(p, "op", str, f"{where}.predicates[{n}]"),
            value=p.get("value"),
        )
        for n, p in enumerate(item.get("predicates") or [])
    )
    return StatementLineage(
        index=int(item.get("index", 0)),
        operation=operation,
        sql=field(item, "sql", str, where),
        inputs=inputs,
        outputs=outputs,
        column_edges=tuple(edges),
        predicates=predicates,
    )


def _dataset(item: Any, where: str) -> Dataset:
    kind = item.get("kind", "table") if isinstance(item, dict) else None
    if kind not in ("table", "view", "path", "temp"):
        raise IngestError(f"{where}.kind {kind!r} is unknown", hint="kind is table, view, path or temp")
    columns = item.get("columns") or []
    return Dataset(name=field(item, "name", str, where), kind=kind, columns=tuple(str(c) for c in columns))
