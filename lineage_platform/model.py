"""The lineage records every stage passes on: SQL extraction produces them, the graph writer stores them.

All records are frozen dataclasses with a ``to_dict()`` giving the documented JSON shape (see
``lineage_platform/sql/README.md``, "SQL lineage JSON contract"). Names are lower case and fully
qualified: ``db.table`` for datasets, ``db.table.column`` for columns; paths (``hdfs://…``, ``s3://…``,
``/dir``) keep their spelling. A plain SELECT writes to the pseudo dataset :data:`RESULT_DATASET`.

:class:`LineageGraph` is what a trace reads back from the graph (``trace.py``) and what ``render/`` draws; it lives
here so that the two share it without importing each other.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Operation = Literal[
    "CREATE_AS_SELECT",
    "INSERT",
    "INSERT_OVERWRITE",
    "CREATE_VIEW",
    "CREATE_TABLE",
    "SELECT",
    "DROP",
    "ALTER_RENAME",
    "ALTER_ADD_COLUMNS",
    "LOAD",
    "EXPORT",
    "IMPORT",
    "INSERT_OVERWRITE_DIRECTORY",
    "MERGE",
    "UPDATE",
    "DELETE",
    "ALTER_EXCHANGE",
    "USE",
    "SET",
    "OTHER",
]
DatasetKind = Literal["table", "view", "path", "temp"]
Strength = Literal["strong", "weak"]
Transform = Literal[
    "IDENTITY", "TRANSFORMATION", "AGGREGATION", "JOIN", "GROUP_BY", "FILTER", "SORT", "WINDOW", "CONDITIONAL"
]
IssueKind = Literal["parse", "unsupported", "unresolved"]

RESULT_DATASET = "$result"
"""Output dataset name of a plain SELECT; its columns are the output names."""

DIRECT_TRANSFORMS: frozenset[str] = frozenset({"IDENTITY", "TRANSFORMATION", "AGGREGATION"})
"""Transforms of strong edges (OpenLineage ``DIRECT``); every other transform is ``INDIRECT``."""


@dataclass(frozen=True)
class Dataset:
    """A table, view, temporary table or storage path read or written by a statement."""

    name: str
    kind: DatasetKind = "table"
    columns: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: name, kind and the known column names."""
        return {"name": self.name, "kind": self.kind, "columns": list(self.columns)}


@dataclass(frozen=True)
class ColumnEdge:
    """One dependency of an output on a base column.

    ``target`` is ``db.table.column`` for a column-specific edge, or ``db.table`` when the dependency
    applies to every output column (filters, joins, grouping) and is recorded once per statement.
    """

    source: str
    target: str
    strength: Strength = "strong"
    transform: Transform = "IDENTITY"
    masking: bool = False
    key_path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form with every field present."""
        return {
            "source": self.source,
            "target": self.target,
            "strength": self.strength,
            "transform": self.transform,
            "masking": self.masking,
            "key_path": self.key_path,
        }


@dataclass(frozen=True)
class Predicate:
    """A filter on a base table column: ``column op value`` (value: constant, list, [lo, hi] or expression text).

    ``read`` tells which read of the table it filters (0-based, in scope order) when the statement reads the table
    more than once (a self-join, a UNION of two reads); there, op ``UNFILTERED`` (column ``*``) marks a read with
    no filter of its own. None when the statement reads the table once, or the filter cannot be tied to one read.
    """

    table: str
    column: str
    op: str
    value: Any = None
    read: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form; list values stay lists; ``read`` only when set."""
        value = list(self.value) if isinstance(self.value, tuple) else self.value
        out = {"table": self.table, "column": self.column, "op": self.op, "value": value}
        if self.read is not None:
            out["read"] = self.read
        return out


@dataclass(frozen=True)
class SqlIssue:
    """Why a statement's lineage is missing or partial; line and column are 1-based positions in the script."""

    statement: int
    line: int
    column: int
    message: str
    kind: IssueKind = "unresolved"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "statement": self.statement,
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "kind": self.kind,
        }


@dataclass(frozen=True)
class StatementLineage:
    """Everything extracted from one statement of a script. ``process_key`` is the producer's identity of the
    process (an OpenLineage job's ``namespace/name``); when set it keys the process instead of the statement text,
    so events of one job that carry its SQL or outputs only sometimes still meet in one process."""

    index: int
    operation: Operation
    sql: str
    inputs: tuple[Dataset, ...] = ()
    outputs: tuple[Dataset, ...] = ()
    column_edges: tuple[ColumnEdge, ...] = ()
    predicates: tuple[Predicate, ...] = ()
    errors: tuple[SqlIssue, ...] = field(default=())
    process_key: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON shape of one statement's lineage."""
        return {
            "index": self.index,
            "operation": self.operation,
            "sql": self.sql,
            "inputs": [d.to_dict() for d in self.inputs],
            "outputs": [d.to_dict() for d in self.outputs],
            "column_edges": [e.to_dict() for e in self.column_edges],
            "predicates": [p.to_dict() for p in self.predicates],
            "errors": [e.to_dict() for e in self.errors],
        }


@dataclass(frozen=True)
class RunInfo:
    """Provenance of one run of a statement: who ran it, when, where (host, cluster, engine), why (job, queue), how it
    ended (``status``), and the ``file:line`` of the log record it came from. ``external_id`` is the id the
    producer gave the run (an OpenLineage ``runId``); with one, the run's events (start, end, failure) all update
    the one run vertex of that id."""

    status: str
    user: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    host: str | None = None
    cluster: str | None = None
    engine: str | None = None
    job: str | None = None
    queue: str | None = None
    external_id: str | None = None
    source: str | None = None

    def run_id(self, statement_key: str) -> str:
        """Stable id of this run of the statement ``statement_key``.

        Built from what identifies a run (statement, start time, user, host, cluster, engine, job), not from
        ``source``: the same run reported by two logs (a query audit log and a Spark event log) is one run. A run
        with an ``external_id`` is that id, whatever the statement: two runs are never collapsed into one.
        """
        if self.external_id:
            return self.external_id
        parts = (statement_key, self.start_time, self.user, self.host, self.cluster, self.engine, self.job)
        return hashlib.sha1("\x00".join(part or "" for part in parts).encode()).hexdigest()[:20]


Direction = Literal["up", "down", "both"]
Level = Literal["table", "column"]


@dataclass
class Node:
    """A dataset (table, file, topic) or column in the traced lineage."""

    id: Any
    label: str
    qualified_name: str
    depth: int
    properties: dict[str, Any] = field(default_factory=dict)
    more_inputs: bool = False
    more_outputs: bool = False


@dataclass
class Edge:
    """A lineage edge of the result: source feeds target through a process (its qualifiedName)."""

    source: Any
    target: Any
    process: str
    strength: str = "strong"
    transform: str | None = None
    key_path: str | None = None


@dataclass
class Process:
    """Provenance of a process: how (operation, query text) and its latest runs (who, when, where, why)."""

    id: Any
    qualified_name: str
    operation: str | None
    query_text: str | None
    runs: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class LineageGraph:
    """The subgraph a trace returns: nodes, edges and each process's provenance."""

    root: Any
    direction: Direction
    level: Level
    nodes: dict[Any, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    processes: dict[str, Process] = field(default_factory=dict)  # by process qualifiedName
    notes: list[str] = field(default_factory=list)
    starts: list[Any] = field(default_factory=list)  # a table's columns, when it is traced at column level

    @property
    def start_ids(self) -> list[Any]:
        """The vertices the search starts from: the root, or the root table's columns (``starts``)."""
        return self.starts or [self.root]

    @property
    def partial(self) -> bool:
        """True when a bound cut the result (see ``notes``)."""
        return bool(self.notes)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping (ids become strings)."""
        return {
            "root": str(self.root),
            "direction": self.direction,
            "level": self.level,
            "partial": self.partial,
            "notes": self.notes,
            "nodes": [{**asdict(n), "id": str(n.id)} for n in self.nodes.values()],
            "edges": [{**asdict(e), "source": str(e.source), "target": str(e.target)} for e in self.edges],
            "processes": [{**asdict(p), "id": str(p.id)} for p in self.processes.values()],
        }

    def to_json(self, indent: int | None = 2) -> str:
        """The result as JSON text."""
        return json.dumps(self.to_dict(), indent=indent, default=str)

    def to_dot(self) -> str:
        """The result as Graphviz DOT text."""
        from lineage_platform.render.dot import render_dot

        return render_dot(self)

    def to_svg(self) -> str:
        """The result drawn as SVG by Graphviz."""
        from lineage_platform.render.dot import render_svg

        return render_svg(self)

    def to_tree(self) -> str:
        """The result as an indented text tree from the root."""
        from lineage_platform.render.tree import render_tree

        return render_tree(self)

    def to_html(self) -> str:
        """The result as one self-contained HTML page (pan/zoom, click for provenance)."""
        from lineage_platform.render.html import render_html

        return render_html(self)

    def _repr_html_(self) -> str:
        from lineage_platform.render.html import render_notebook_html

        return render_notebook_html(self)
