"""Batched, idempotent writer of lineage records into the graph.

Vertices are keyed by label + qualifiedName, edges by endpoints + label (+ process, strength, transform and key
path for column lineage). Every write is an upsert (``mergeV`` / ``mergeE``) sent as one traversal per batch, so the
same code serves the embedded engine and JanusGraph, and re-running a load changes nothing.

Graph shape written for one statement (see DESIGN.md):

    database -contains-> table -hasColumn-> column
    file -hasColumn-> column                               (a path with a known schema)
    dataset -usedBy-> process -generated-> dataset        (table level)
    column -flowsTo{process, strength, transform, keyPath, masking}-> column
    column -flowsTo{...}-> table                           (weak dependency on every column of the target)
    process -hasRun-> run                                  (who, when, where, which job, how)

A run with a producer's run id (``RunInfo.external_id``) and a process with a producer's key
(``StatementLineage.process_key``) are reported by several events: their properties are merged (``merge_run``,
``merge_process``) within a batch and with what the graph holds, so event order and re-reads do not matter.

A plain SELECT's temporary result is a dataset of its own (``$result:<process key>``, datasetKind ``result``), so
downstream traces show where data was read out to, as in the DAG provenance model.

Provenance attributes (the DAG provenance model's): every vertex has ``guid``, ``name``, ``typeName`` (``Dataset``
for databases, tables, columns and files, ``Process`` for processes and their runs) with the concrete label in
``kind``, ``createTime``, ``createBy`` and ``version``; every edge has ``guid``, ``name`` and ``typeName`` (its
label). ``createBy`` of a dataset is the user of the earliest run (by start time) of a process that generates it,
of a process the user of its earliest run, else the writer's ``created_by``. ``version`` of a dataset counts its
definitions: one per generating process, plus one per further column list a CREATE statement gave it; it is
recomputed from the graph after each flush. ``firstRunStart`` keeps the start of the run behind ``createBy``, so a
flush compares only its own earliest run with it (and a writer does not read a process's again while its runs are
no earlier than the earliest it last read or wrote: the graph's can only have become earlier). Re-running the same
logs, in any order, changes neither, and rolling old runs up (graph/run_history.py) does not change ``createBy``.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from gremlin_python.process.graph_traversal import GraphTraversal, GraphTraversalSource
from gremlin_python.process.traversal import Cardinality, Direction, Merge, T
from gremlin_python.statics import long

from lineage_platform.gc_pause import gc_paused
from lineage_platform.graph.dsl import __
from lineage_platform.graph.outbox import Outbox, change_set, outbox_of
from lineage_platform.graph.retry import retry_transient
from lineage_platform.graph.vocabulary import EdgeLabel, Key, VertexLabel
from lineage_platform.model import RESULT_DATASET

if TYPE_CHECKING:
    from lineage_platform.model import Dataset, RunInfo, StatementLineage

KNOWN_EDGES_LIMIT = 1_000_000  # edge keys a writer remembers before it starts over (memory bound)
GUID_NAMESPACE = uuid.UUID("5f0c7d2e-8a43-4c0e-9a51-6b3c1f2d7e90")
PROCESS_LABELS = frozenset({VertexLabel.PROCESS, VertexLabel.RUN, VertexLabel.RUN_DAY, VertexLabel.RUN_MONTH})
"""Vertex labels whose provenance ``typeName`` is ``Process``; every other label the writer makes is a ``Dataset``."""
DEFINING_OPERATIONS = frozenset({"CREATE_AS_SELECT", "CREATE_TABLE", "CREATE_VIEW"})
"""Operations that state a dataset's whole column list (a new list is a new definition, a new version)."""
SCHEMA_OPERATIONS = frozenset({"ALTER_ADD_COLUMNS"})
"""Operations that only declare columns of their outputs (a catalog's schema change): the datasets and their
``hasColumn`` edges are written, no process and no run (nothing ran, no data moved)."""

_token_lock = threading.Lock()
_last_token = [0]  # the last createTime handed out in this process


def _create_time() -> int:
    """createTime of one flush: epoch milliseconds, strictly increasing within the process.

    A flush recognises what its upserts created by this value (a match keeps the older createTime), so two flushes
    of the same process never share one, even within a millisecond.
    """
    with _token_lock:
        _last_token[0] = max(time.time_ns() // 1_000_000, _last_token[0] + 1)
        return _last_token[0]


def statement_key(statement: StatementLineage) -> str:
    """Stable identity of a process: a hash of the normalised statement text and its outputs, or of the producer's
    ``process_key`` when the statement has one."""
    if statement.process_key:
        return hashlib.sha1(f"job\x00{statement.process_key}".encode()).hexdigest()[:20]
    text = " ".join(statement.sql.split()).lower()
    outputs = ",".join(sorted(d.name for d in statement.outputs))
    return hashlib.sha1(f"{text}\x00{outputs}".encode()).hexdigest()[:20]


def guid(label: str, qualified_name: str) -> str:
    """Deterministic guid for a vertex, so re-runs and other writers agree on it."""
    return str(uuid.uuid5(GUID_NAMESPACE, f"{label}:{qualified_name}"))


def edge_guid(label: str, out: tuple[str, str], in_: tuple[str, str], key: tuple) -> str:
    """Deterministic guid for an edge: its label, its ends and the properties that tell it apart."""
    return str(uuid.uuid5(GUID_NAMESPACE, f"{label}:{out[0]}:{out[1]}->{in_[0]}:{in_[1]}:{key!r}"))


def type_name(label: str) -> str:
    """The DAG provenance model's ``typeName`` of a vertex label: ``Process`` or ``Dataset``."""
    return "Process" if label in PROCESS_LABELS else "Dataset"


@dataclass
class WriteSummary:
    """Counts of what a write created (upserts that matched existing elements are not counted)."""

    statements: int = 0
    vertices: int = 0
    edges: int = 0
    processes: int = 0
    runs: int = 0
    seconds: float = 0.0

    def add(self, other: WriteSummary) -> None:
        """Accumulate another summary into this one."""
        for name in ("statements", "vertices", "edges", "processes", "runs", "seconds"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


PropertyMerge = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]
"""How a vertex's properties absorb another report of it: (current, new) -> merged."""
TERMINAL_STATUSES = frozenset({"SUCCEEDED", "FAILED", "ABORTED"})
RUN_PROPERTIES = {
    Key.RUN_ID: "external_id",
    Key.USER: "user",
    Key.START_TIME: "start_time",
    Key.END_TIME: "end_time",
    Key.HOST: "host",
    Key.CLUSTER: "cluster",
    Key.ENGINE: "engine",
    Key.JOB: "job",
    Key.QUEUE: "queue",
    Key.STATUS: "status",
    Key.SOURCE: "source",
}
"""A run vertex's property keys and the :class:`~lineage_platform.model.RunInfo` fields they hold."""
RUN_STATE_KEYS = (Key.STATUS, Key.START_TIME, Key.END_TIME)


def merge_run(current: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """What a run vertex becomes when another event of the same producer run arrives, in any order.

    The start is the earliest known start; a terminal status (SUCCEEDED, FAILED, ABORTED) with its end time
    beats RUNNING, and of two terminal ones the later end wins; the other provenance fields keep their first value.

    >>> merge_run({"status": "SUCCEEDED", "endTime": "T2"}, {"status": "RUNNING", "startTime": "T1"})
    {'status': 'SUCCEEDED', 'startTime': 'T1', 'endTime': 'T2'}
    """
    merged = {**new, **{k: v for k, v in current.items() if v is not None}}
    starts = [t for t in (current.get(Key.START_TIME), new.get(Key.START_TIME)) if t]
    merged[Key.START_TIME] = min(starts) if starts else None

    def rank(run: dict[str, Any]) -> tuple[bool, str]:
        return run.get(Key.STATUS) in TERMINAL_STATUSES, run.get(Key.END_TIME) or ""

    latest = max(current, new, key=rank)
    merged[Key.STATUS], merged[Key.END_TIME] = latest.get(Key.STATUS), latest.get(Key.END_TIME)
    return {k: v for k, v in merged.items() if v is not None}


def merge_process(current: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """What a producer-keyed process becomes when another event of its job arrives: the first report that
    carries the job's SQL gives the query text, operation and name (an event without SQL is keyed ``job:…``).

    >>> merge_process({"queryText": "job:ns/j", "operation": "OTHER"}, {"queryText": "INSERT …", "operation": "INSERT"})
    {'queryText': 'INSERT …', 'operation': 'INSERT'}
    """
    has_sql = not str(current.get(Key.QUERY_TEXT, "job:")).startswith("job:")
    if has_sql or str(new.get(Key.QUERY_TEXT, "job:")).startswith("job:"):
        return {**new, **current}
    return {**current, **new}


class _Added(NamedTuple):
    """A statement whose lineage a batch holds: its process key, process vertex (None for a schema change) and the
    datasets it generates (whose provenance its runs decide)."""

    statement: StatementLineage
    key: str
    process: tuple[str, str] | None
    outputs: list[tuple[str, str]]


@dataclass
class _Batch:
    """Vertices and edges of some statements, de-duplicated by key, ready to upsert."""

    vertices: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    edges: dict[tuple, dict[str, Any]] = field(default_factory=dict)
    statements: int = 0
    # provenance to recompute after the flush: generated datasets, processes with runs, CREATE column lists
    provenance: set[tuple[str, str]] = field(default_factory=set)
    definitions: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    first_runs: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)  # key -> (start, user)
    generators: dict[tuple[str, str], set[tuple[str, str]]] = field(
        default_factory=dict
    )  # dataset -> processes
    merges: dict[tuple[str, str], PropertyMerge] = field(
        default_factory=dict
    )  # vertices merged with the graph's
    lineage: dict[int, _Added] = field(default_factory=dict)  # statements added so far, by id()
    # column vertices added with their hasColumn edge, by (qualifiedName, the dataset vertex the statement gave)
    columns: dict[tuple[str, tuple[str, str] | None], tuple[str, str]] = field(default_factory=dict)

    def run_of(self, key: tuple[str, str], run: RunInfo | None) -> None:
        """Remember ``run`` as the earliest of ``key``'s generating runs seen in this batch, if it is."""
        if run is not None and run.user and run.start_time:
            self.first_runs[key] = min(
                self.first_runs.get(key, (run.start_time, run.user)), (run.start_time, run.user)
            )

    def vertex(self, label: str, qualified_name: str, **properties: Any) -> tuple[str, str]:
        key = (label, qualified_name)
        props = self.vertices.get(key)
        if props is None:
            props = self.vertices[key] = {
                Key.NAME: qualified_name.rsplit(".", 1)[-1],
                Key.TYPE_NAME: type_name(label),
                Key.KIND: label,
            }
        for k, v in properties.items():
            if v is not None:
                props[k] = v
        return key

    def merged_vertex(
        self, label: str, qualified_name: str, merge: PropertyMerge | None, **properties: Any
    ) -> tuple[str, str]:
        """A vertex whose properties, when ``merge`` is given, are merged with ``merge`` (current, new) -> merged,
        both with what this batch already holds for it and, after the upsert, with what the graph holds."""
        key = (label, qualified_name)
        if merge is None:
            return self.vertex(label, qualified_name, **properties)
        new = {k: v for k, v in properties.items() if v is not None}
        if key in self.vertices:
            self.vertices[key] = merge(self.vertices[key], new)
        else:
            self.vertex(label, qualified_name, **new)
        self.merges[key] = merge
        return key

    def edge(self, label: str, out: tuple[str, str], in_: tuple[str, str], **properties: Any) -> None:
        props = {k: v for k, v in properties.items() if v is not None}
        self.edges[(label, out, in_, tuple(sorted(props.items())))] = props


def _dataset_vertex(batch: _Batch, dataset: Dataset, result_name: str) -> tuple[str, str]:
    if dataset.kind == "path":
        dataset_key = batch.vertex(
            VertexLabel.FILE, dataset.name, **{Key.NAME: dataset.name, Key.DATASET_KIND: "path"}
        )
    elif dataset.name == RESULT_DATASET:
        dataset_key = batch.vertex(
            VertexLabel.TABLE, result_name, **{Key.NAME: "query result", Key.DATASET_KIND: "result"}
        )
    else:
        dataset_key = batch.vertex(VertexLabel.TABLE, dataset.name, **{Key.DATASET_KIND: dataset.kind})
        if "." in dataset.name:
            database = batch.vertex(VertexLabel.DATABASE, dataset.name.split(".", 1)[0])
            batch.edge(EdgeLabel.CONTAINS, database, dataset_key)
    for column in dataset.columns:
        _column_vertex(batch, f"{dataset_key[1]}.{column}", {dataset_key[1]: dataset_key})
    return dataset_key


def _column_vertex(
    batch: _Batch, qualified_name: str, datasets: dict[str, tuple[str, str]]
) -> tuple[str, str]:
    """The column vertex, under its dataset: a path's columns hang off its ``file`` vertex, never off a ``table``
    twin of the same name; a column of a dataset the statement does not list belongs to a table.

    Neither vertex nor edge carries properties here, so adding them again changes nothing: a batch adds them once
    (the statements of a batch mostly touch the same columns)."""
    parent_name = qualified_name.rsplit(".", 1)[0]
    given = datasets.get(parent_name)
    column = batch.columns.get((qualified_name, given))
    if column is None:
        column = batch.columns[(qualified_name, given)] = batch.vertex(VertexLabel.COLUMN, qualified_name)
        parent = given or batch.vertex(VertexLabel.TABLE, parent_name)
        batch.edge(EdgeLabel.HAS_COLUMN, parent, column)
    return column


def _add_statement(batch: _Batch, statement: StatementLineage, run: RunInfo | None) -> None:
    """Add a (statement, run) pair: the statement's lineage once per batch however many of its runs the batch
    holds (a bulk load hands each distinct statement over with all its runs), then the run."""
    added = batch.lineage.get(id(statement))
    if added is None or added.statement is not statement:
        added = batch.lineage[id(statement)] = _add_lineage(batch, statement)
    process = added.process
    for output in added.outputs:
        batch.run_of(output, run)
    if run is not None and process is not None:
        run_vertex = batch.merged_vertex(
            VertexLabel.RUN,
            f"run:{run.run_id(added.key)}",
            merge_run if run.external_id else None,
            **{Key.NAME: run.start_time or added.key},
            **{prop: getattr(run, field) for prop, field in RUN_PROPERTIES.items()},
        )
        batch.edge(EdgeLabel.HAS_RUN, process, run_vertex)
        batch.provenance.add(process)  # a process's createBy is the user of its earliest run
        batch.run_of(process, run)
    batch.statements += 1


def _add_lineage(batch: _Batch, statement: StatementLineage) -> _Added:
    """Add a statement's datasets, process and edges (no process for a schema change)."""
    key = statement_key(statement)
    result_name = f"{RESULT_DATASET}:{key}"  # a SELECT's temporary result: one dataset per process
    if statement.operation in SCHEMA_OPERATIONS:
        for dataset in statement.outputs:
            _dataset_vertex(batch, dataset, result_name)
        return _Added(statement, key, None, [])

    def name(target: str) -> str:
        return result_name + target[len(RESULT_DATASET) :] if target.startswith(RESULT_DATASET) else target

    first_output = statement.outputs[0].name if statement.outputs else "-"
    process = batch.merged_vertex(
        VertexLabel.PROCESS,
        f"process:{key}",
        merge_process if statement.process_key else None,
        **{
            Key.NAME: f"{statement.operation} {first_output}",
            Key.OPERATION: statement.operation,
            Key.QUERY_TEXT: statement.sql,
            Key.PREDICATES: json.dumps([p.to_dict() for p in statement.predicates], default=str),
        },
    )
    datasets: dict[str, tuple[str, str]] = {}  # the statement's datasets by graph name: their vertex keys
    for dataset in statement.inputs:
        datasets[name(dataset.name)] = _dataset_vertex(batch, dataset, result_name)
        batch.edge(EdgeLabel.USED_BY, datasets[name(dataset.name)], process)
    outputs = []
    for dataset in statement.outputs:
        output = datasets[name(dataset.name)] = _dataset_vertex(batch, dataset, result_name)
        outputs.append(output)
        batch.edge(EdgeLabel.GENERATED, process, output)
        batch.provenance.add(output)
        batch.generators.setdefault(output, set()).add(process)
        if statement.operation in DEFINING_OPERATIONS and dataset.columns:
            columns = "\0".join(dataset.columns).lower()
            batch.definitions.setdefault(output, set()).add(hashlib.sha1(columns.encode()).hexdigest()[:12])
    output_names = {name(d.name) for d in statement.outputs}
    for edge in statement.column_edges:
        source = _column_vertex(batch, edge.source, datasets)
        target_name = name(edge.target)
        if target_name in output_names:
            target = datasets[target_name]
        else:
            target = _column_vertex(batch, target_name, datasets)
        batch.edge(
            EdgeLabel.FLOWS_TO,
            source,
            target,
            **{
                Key.PROCESS: process[1],
                Key.STRENGTH: edge.strength,
                Key.TRANSFORM: edge.transform,
                Key.KEY_PATH: edge.key_path or "",
                Key.MASKING: bool(edge.masking),
            },
        )
    return _Added(statement, key, process, outputs)


class LineageWriter:
    """Upserts lineage records into a graph in batches of ``batch_size`` elements per traversal."""

    def __init__(
        self,
        g: GraphTraversalSource,
        *,
        batch_size: int = 500,
        created_by: str = "lineage",
        outbox: Outbox | None = None,
    ) -> None:
        """outbox: change capture's hook (default: the one bound to ``g``'s connection, see graph/outbox.py); with
        one, each flush is one transaction that also records the elements it created (as op tuples) through
        ``outbox.record(g, ops)``."""
        self.g = g
        self.batch_size = batch_size
        self.created_by = created_by
        self.outbox = outbox or outbox_of(g)
        self._ids: dict[tuple[str, str], Any] = {}
        # edges this writer has upserted: later runs of the same statement skip them (bounded; only saves work)
        self._known_edges: set[tuple] = set()
        # (start, user) of the earliest run of processes, as this writer last read or wrote it: the graph's can only
        # have become earlier since, so a later run need not read it again (bounded; only saves reads)
        self._first_runs: dict[tuple[str, str], tuple[str, str]] = {}
        self._open: tuple[GraphTraversalSource, list[tuple] | None] | None = None  # see transaction()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Make every flush inside the block part of one transaction, committed when the block ends and rolled
        back if it raises: one durable commit for many statements (a batch of events, a bulk-load batch).

        Inside, a transient refusal is not retried flush by flush: it rolls the whole block back and propagates,
        for the caller to run the block again (``retry_transient``). On a graph without transactions the flushes
        stand alone, as outside a block. Blocks do not nest: an inner block joins the outer one.
        """
        if self._open is not None:
            yield
            return
        try:
            with change_set(self.g, self.outbox, atomic=True) as opened:
                self._open = opened
                yield
        except BaseException:
            self._forget()  # ids and edges learnt in a rolled-back transaction may not exist
            raise
        finally:
            self._open = None

    def write_together(self, items: Iterable[tuple[StatementLineage, RunInfo | None]]) -> WriteSummary:
        """Write (statement, run) pairs in one transaction (see :meth:`transaction`), run again from the start
        while the graph refuses it for a passing reason (lock contention).

        The cyclic GC is paused meanwhile: building and sending the batch makes many short-lived objects, and
        with the GC on it would scan them again and again (a fifth of a collector's time)."""
        items = list(items)

        def once() -> WriteSummary:
            with gc_paused(), self.transaction():
                return self.write_runs(items)

        return retry_transient(once)

    def write(self, statements: Iterable[StatementLineage], run: RunInfo | None = None) -> WriteSummary:
        """Write statements that share one run's provenance (or none)."""
        return self.write_runs((statement, run) for statement in statements)

    def write_runs(self, items: Iterable[tuple[StatementLineage, RunInfo | None]]) -> WriteSummary:
        """Write (statement, run) pairs; vertices and edges go out in traversals of about ``batch_size``.

        Outside a transaction every ``batch_size`` elements are flushed (and committed) on their own; inside one
        (:meth:`transaction`) the pairs are one flush, so what several of them share is written once."""
        summary = WriteSummary()
        batch = _Batch()
        for statement, run in items:
            _add_statement(batch, statement, run)
            if self._open is None and len(batch.vertices) + len(batch.edges) >= self.batch_size:
                summary.add(self._flush(batch))
                batch = _Batch()
        if batch.statements:
            summary.add(self._flush(batch))
        return summary

    def _flush(self, batch: _Batch) -> WriteSummary:
        """Upsert the batch; tried again when the backend refuses it for a passing reason (lock contention).

        Every attempt uses the same createTime, so what an earlier attempt created is still counted once.
        """
        token = long(_create_time())
        if self._open is not None:
            g, ops = self._open
            return self._flush_through(g, batch, token, ops)
        return retry_transient(lambda: self._flush_once(batch, token), on_retry=self._forget)

    def _forget(self) -> None:
        """Drop the ids, edges and first runs learnt so far: a failed flush may have rolled them back."""
        self._ids.clear()
        self._known_edges.clear()
        self._first_runs.clear()

    def _flush_once(self, batch: _Batch, token: int) -> WriteSummary:
        try:
            with change_set(self.g, self.outbox) as (g, created):
                return self._flush_through(g, batch, token, created)
        except BaseException:
            self._forget()  # ids and edges learnt in a rolled-back transaction may not exist
            raise

    def _flush_through(
        self, g: GraphTraversalSource, batch: _Batch, token: int, created_ops: list[tuple] | None
    ) -> WriteSummary:
        """Upsert the batch through ``g`` with createTime ``token`` (epoch ms, a Long as the schema wants: it marks
        what this flush created); append op tuples of what it created to ``created_ops`` if given."""
        started = time.perf_counter()
        summary = WriteSummary(statements=batch.statements)
        missing = [key for key in batch.vertices if key not in self._ids]
        new_keys: set[tuple[str, str]] = set()  # created now: their provenance came from this batch alone
        for chunk in _chunks(missing, self.batch_size):
            created = self._upsert_vertices(g, chunk, batch, token)
            new_keys.update(key for key, c in zip(chunk, created) if c)
            summary.vertices += sum(created)
            summary.processes += sum(c for key, c in zip(chunk, created) if key[0] == VertexLabel.PROCESS)
            summary.runs += sum(c for key, c in zip(chunk, created) if key[0] == VertexLabel.RUN)
            for key in (key for key, c in zip(chunk, created) if c):
                if created_ops is not None:
                    created_ops.extend(self._vertex_ops(key, batch, token))
                if key[0] == VertexLabel.PROCESS and key in batch.first_runs:
                    self._learn_first_run(key, batch.first_runs[key])
        merged = sorted(set(batch.merges) - new_keys)
        for chunk in _chunks(merged, self.batch_size):
            self._merge_existing(g, chunk, batch, created_ops)
        edges = [(key, props) for key, props in batch.edges.items() if key not in self._known_edges]
        for chunk in _chunks(edges, self.batch_size):
            summary.edges += self._upsert_edges(g, chunk, token, created_ops)
            if len(self._known_edges) > KNOWN_EDGES_LIMIT:
                self._known_edges.clear()
            self._known_edges.update(key for key, _ in chunk)
        stale = sorted(key for key in batch.provenance - new_keys if not self._first_run_stands(key, batch))
        for chunk in _chunks(stale, self.batch_size):
            self._update_provenance(g, chunk, batch, created_ops)
        summary.seconds = time.perf_counter() - started
        return summary

    def _first_run_stands(self, key: tuple[str, str], batch: _Batch) -> bool:
        """Whether a process's ``createBy`` and ``firstRunStart`` stay as they are without reading them: this batch
        brings no run of it earlier than the earliest this writer last read or wrote (the graph's is that one or an
        earlier one another writer or load brought since)."""
        known = self._first_runs.get(key)
        ours = batch.first_runs.get(key)
        return key[0] == VertexLabel.PROCESS and known is not None and (ours is None or ours >= known)

    def _learn_first_run(self, key: tuple[str, str], first: tuple[str, str]) -> None:
        if len(self._first_runs) > KNOWN_EDGES_LIMIT:
            self._first_runs.clear()
        self._first_runs[key] = first

    def _merge_existing(
        self,
        g: GraphTraversalSource,
        keys: list[tuple[str, str]],
        batch: _Batch,
        changed_ops: list[tuple] | None,
    ) -> None:
        """Merge what this batch says of vertices that existed before it into them (their ``PropertyMerge``)."""
        rows = g.V(*[self._ids[key] for key in keys]).value_map().to_list()
        updates = []
        for key, row in zip(keys, rows):
            current = {name: values[0] for name, values in row.items()}
            merged = batch.merges[key](current, batch.vertices[key])
            changed = {k: v for k, v in merged.items() if current.get(k) != v}
            if changed:
                updates.append((self._ids[key], changed))
        self._set_properties(g, updates, changed_ops)

    def _set_properties(
        self,
        g: GraphTraversalSource,
        updates: list[tuple[Any, dict[str, Any]]],
        changed_ops: list[tuple] | None,
    ) -> None:
        """Set (single cardinality) the changed properties of vertices in one traversal; record them for CDC."""
        if not updates:
            return
        traversal = g.V(updates[0][0])
        for number, (vertex_id, changed) in enumerate(updates):
            if number:
                traversal = traversal.V(vertex_id)
            for name, value in changed.items():
                traversal = traversal.property(Cardinality.single, name, value)
        traversal.iterate()
        if changed_ops is not None:
            changed_ops.extend(
                ("addVP", vertex_id, name, name, value)
                for vertex_id, changed in updates
                for name, value in changed.items()
            )

    def _update_provenance(
        self,
        g: GraphTraversalSource,
        keys: list[tuple[str, str]],
        batch: _Batch,
        changed_ops: list[tuple] | None,
    ) -> None:
        """Bring ``createBy`` and ``version`` of generated datasets and of processes that existed before this flush
        up to date (so the result does not depend on load order or repeats); write those that changed.

        ``createBy`` is the user of the earliest run, ``firstRunStart`` its start: each vertex keeps the earliest
        (start, user) seen so far and a flush only compares its own earliest run with it, so the cost does not grow
        with the runs a process has, and rolling old runs up (graph/run_history.py) changes neither. A vertex
        written before ``firstRunStart`` existed gets it from its runs once."""
        rows = (
            g.V(*[self._ids[key] for key in keys])
            .project("first", "processes", "hashes", "creator", "versions")
            .by(__.coalesce(__.values(Key.FIRST_RUN_START), __.constant("")))
            .by(__.writers().dedup().count())
            .by(__.coalesce(__.values(Key.SCHEMA_HASHES), __.constant("[]")))
            .by(__.coalesce(__.values(Key.CREATE_BY), __.constant("")))
            .by(__.coalesce(__.values(Key.VERSION), __.constant(1)))
            .to_list()
        )
        legacy = [key for key, row in zip(keys, rows) if not row["first"] and key in batch.first_runs]
        earliest = self._earliest_runs(g, legacy)
        updates: list[tuple[Any, dict[str, Any]]] = []
        for key, row in zip(keys, rows):
            hashes = sorted(set(json.loads(row["hashes"])) | batch.definitions.get(key, set()))
            stored = (row["first"], row["creator"]) if row["first"] else earliest.get(key)
            known = [run for run in (stored, batch.first_runs.get(key)) if run]
            wanted: dict[str, Any] = {Key.CREATE_BY: row["creator"]}
            if known:
                wanted[Key.FIRST_RUN_START], wanted[Key.CREATE_BY] = min(known)
                if key[0] == VertexLabel.PROCESS:
                    self._learn_first_run(key, min(known))
            if key[0] not in PROCESS_LABELS:
                wanted[Key.VERSION] = max(1, row["processes"]) + max(0, len(hashes) - 1)
                wanted[Key.SCHEMA_HASHES] = json.dumps(hashes)
            current = {
                Key.CREATE_BY: row["creator"],
                Key.VERSION: row["versions"],
                Key.SCHEMA_HASHES: row["hashes"],
                Key.FIRST_RUN_START: row["first"],
            }
            changed = {
                k: v
                for k, v in wanted.items()
                if v != current[k] and not (k == Key.SCHEMA_HASHES and not hashes)
            }
            if changed:
                updates.append((self._ids[key], changed))
        self._set_properties(g, updates, changed_ops)

    def _earliest_runs(
        self, g: GraphTraversalSource, keys: list[tuple[str, str]]
    ) -> dict[tuple[str, str], tuple[str, str]]:
        """(start, user) of the earliest run of each process, or of the processes generating each dataset."""
        if not keys:
            return {}
        runs = __.choose(__.has_label(VertexLabel.PROCESS), __.runs(), __.writers().runs())
        rows = (
            g.V(*[self._ids[key] for key in keys])
            .project("earliest")
            .by(
                runs.has(Key.USER)
                .has(Key.START_TIME)
                .order()
                .by(Key.START_TIME)
                .by(Key.USER)
                .limit(1)
                .project("start", "who")
                .by(Key.START_TIME)
                .by(Key.USER)
                .fold()
            )
            .to_list()
        )
        return {
            key: (row["earliest"][0]["start"], row["earliest"][0]["who"])
            for key, row in zip(keys, rows)
            if row["earliest"]
        }

    def _vertex_ops(self, key: tuple[str, str], batch: _Batch, token: int) -> list[tuple]:
        """Store op tuples of a vertex this flush created (vertex properties named by their key)."""
        vertex_id = self._ids[key]
        properties = {Key.QUALIFIED_NAME: key[1], **self._create_properties(key, batch, token)}
        return [("addV", vertex_id, key[0])] + [("addVP", vertex_id, k, k, v) for k, v in properties.items()]

    def _create_properties(self, key: tuple[str, str], batch: _Batch, token: int) -> dict[str, Any]:
        create = dict(batch.vertices[key])
        definitions = sorted(batch.definitions.get(key, ()))
        creator = batch.first_runs.get(key, ("", self.created_by))[1]
        version = max(1, len(batch.generators.get(key, ()))) + max(0, len(definitions) - 1)
        create.update(guid=guid(*key), createTime=token, createBy=creator, version=version)
        if key in batch.first_runs:
            create[Key.FIRST_RUN_START] = batch.first_runs[key][0]
        if definitions:
            create[Key.SCHEMA_HASHES] = json.dumps(definitions)
        return create

    def _upsert_vertices(
        self, g: GraphTraversalSource, keys: list[tuple[str, str]], batch: _Batch, token: int
    ) -> list[bool]:
        rows = [
            {
                "match": {T.label: label, Key.QUALIFIED_NAME: qualified_name},
                "create": self._create_properties((label, qualified_name), batch, token),
            }
            for label, qualified_name in keys
        ]
        results = upsert_traversal(g, "V", rows).to_list()
        for key, result in zip(keys, results):
            self._ids[key] = result["id"]
        # an element matched without a createTime (written by another tool) was not created by this flush
        return [result.get("created") == token for result in results]

    def _upsert_edges(
        self,
        g: GraphTraversalSource,
        chunk: list[tuple[tuple, dict[str, Any]]],
        token: int,
        created_ops: list[tuple] | None,
    ) -> int:
        rows = []
        for (label, out, in_, key), props in chunk:
            match = {T.label: label, Direction.OUT: self._ids[out], Direction.IN: self._ids[in_], **props}
            create = {
                Key.CREATE_TIME: token,
                Key.GUID: edge_guid(label, out, in_, key),
                Key.NAME: f"{out[1]} {label} {in_[1]}",
                Key.TYPE_NAME: label,
            }
            rows.append({"match": match, "create": create})
        results = upsert_traversal(g, "E", rows).to_list()
        created = [
            (row, result["id"]) for row, result in zip(rows, results) if result.get("created") == token
        ]
        if created_ops is not None:
            for row, edge_id in created:
                match = dict(row["match"])
                label, out_id, in_id = match.pop(T.label), match.pop(Direction.OUT), match.pop(Direction.IN)
                properties = {**match, **row["create"]}
                created_ops.extend(
                    [("addE", edge_id, label, out_id, in_id)]
                    + [("setEP", edge_id, k, v) for k, v in properties.items()]
                )
        return len(created)


def _upsert_steps(merge: GraphTraversal) -> list[list[Any]]:
    return (
        merge.option(Merge.on_create, __.select("create"))
        .project("id", "created")
        .by(T.id)
        .by(Key.CREATE_TIME)
        .bytecode.step_instructions
    )


_UPSERT_STEPS = {
    "V": _upsert_steps(__.merge_v(__.select("match"))),
    "E": _upsert_steps(__.merge_e(__.select("match"))),
}
"""The steps after ``inject(rows)`` of the writer's vertex and edge upserts, built once."""


def upsert_traversal(g: GraphTraversalSource, kind: str, rows: list[dict[Any, Any]]) -> GraphTraversal:
    """The writer's batch upsert of vertices (``kind`` "V") or edges ("E"): ``g.inject(*rows).mergeV|mergeE(
    select('match')).option(onCreate, select('create')).project('id', 'created').by(T.id).by('createTime')``, each
    row a map of a ``match`` and a ``create`` map.

    The rows go into the bytecode as they are: gremlinpython's ``inject()`` would copy every map, key and value
    (looking for nested traversals, which rows of plain values do not hold), a fifth of a collector's write time;
    the steps after them are built once."""
    traversal = g.inject()
    traversal.bytecode.step_instructions[-1].extend(rows)
    traversal.bytecode.step_instructions.extend(_UPSERT_STEPS[kind])
    return traversal


def _chunks(items: list, size: int) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
