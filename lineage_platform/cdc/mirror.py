"""The reference subscriber's store: a SQLite copy of the graph, for BI tools.

Tables hold vertices, vertex properties (and their meta-properties), edges and edge properties; two views
serve the usual questions: ``datasets`` (tables, columns, files, ... with their qualified names) and
``lineage_edges`` (usedBy / generated / flowsTo between named elements). Property values keep their type:
Avro scalars are stored as they are (but NaN, which SQLite turns into NULL, is stored as its text with kind
``float``), other types as JSON with their kind in ``value_kind``.

The subscriber's positions (per Kafka partition: next offset, last applied SCN and seq) are saved in the
same SQLite transaction as the changes they cover, so a killed subscriber resumes exactly where its last
commit ended.
"""

from __future__ import annotations

import math
import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lineage_platform.cdc.content import GraphContent, freeze
from lineage_platform.cdc.events import ChangeEvent
from lineage_platform.cdc.subscriber import Position, Snapshot
from lineage_platform.cdc.values import to_avro
from lineage_platform.graph.change_values import decode_value
from lineage_platform.graph.vocabulary import EdgeLabel, Key, VertexLabel


def _sql_names(*names: str) -> str:
    """Graph names as a SQL list of string literals.

    >>> _sql_names("a", "b")
    "'a', 'b'"
    """
    return ", ".join(f"'{name}'" for name in names)


_DATASET_LABELS = _sql_names(
    VertexLabel.DATABASE, VertexLabel.TABLE, VertexLabel.COLUMN, VertexLabel.FILE, VertexLabel.TOPIC
)
_LINEAGE_LABELS = _sql_names(EdgeLabel.USED_BY, EdgeLabel.GENERATED, EdgeLabel.FLOWS_TO)
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS cdc_state (topic TEXT PRIMARY KEY, snapshot_scn INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS cdc_positions (
    topic TEXT, partition INTEGER, next_offset INTEGER, scn INTEGER, seq INTEGER,
    PRIMARY KEY (topic, partition));
CREATE TABLE IF NOT EXISTS vertices (id PRIMARY KEY, label TEXT);
CREATE TABLE IF NOT EXISTS vertex_properties (
    vertex_id, property_id, key TEXT, value, value_kind TEXT, PRIMARY KEY (vertex_id, property_id));
CREATE TABLE IF NOT EXISTS property_meta (
    vertex_id, property_id, key TEXT, value, value_kind TEXT, PRIMARY KEY (vertex_id, property_id, key));
CREATE TABLE IF NOT EXISTS edges (id PRIMARY KEY, label TEXT, out_id, in_id);
CREATE TABLE IF NOT EXISTS edge_properties (edge_id, key TEXT, value, value_kind TEXT, PRIMARY KEY (edge_id, key));
CREATE INDEX IF NOT EXISTS vertex_properties_key ON vertex_properties (key, value);
CREATE VIEW IF NOT EXISTS datasets AS
    SELECT v.id, v.label, p.value AS qualified_name FROM vertices v
    JOIN vertex_properties p ON p.vertex_id = v.id AND p.key = '{Key.QUALIFIED_NAME}'
    WHERE v.label IN ({_DATASET_LABELS});
CREATE VIEW IF NOT EXISTS lineage_edges AS
    SELECT e.label, src.value AS source, dst.value AS target, e.id AS edge_id FROM edges e
    JOIN vertex_properties src ON src.vertex_id = e.out_id AND src.key = '{Key.QUALIFIED_NAME}'
    JOIN vertex_properties dst ON dst.vertex_id = e.in_id AND dst.key = '{Key.QUALIFIED_NAME}'
    WHERE e.label IN ({_LINEAGE_LABELS});
"""
_CONTENT_TABLES = ("vertices", "vertex_properties", "property_meta", "edges", "edge_properties")


def _stored(value: Any) -> tuple[Any, str | None]:
    """``(value, value_kind)`` as kept in SQLite (kind None: the value is stored as itself)."""
    if isinstance(value, bool):
        return int(value), "boolean"
    if isinstance(value, float) and math.isnan(value):
        return repr(value), "float"  # SQLite stores a NaN REAL as NULL
    datum = to_avro(value)
    if isinstance(datum, dict):
        return datum["json"], datum["kind"]
    return datum, None


def _loaded(value: Any, kind: str | None) -> Any:
    if kind is None:
        return value
    if kind == "boolean":
        return bool(value)
    if kind == "float":
        return float(value)
    return decode_value({"kind": kind, "json": value})


# op -> (SQL, function building its parameters from an event); rows carry (value, value_kind) pairs
_STATEMENTS: dict[str, list[tuple[str, Any]]] = {
    "addV": [("INSERT OR REPLACE INTO vertices VALUES (?, ?)", lambda e: (e.element_id, e.label))],
    "dropV": [("DELETE FROM vertices WHERE id = ?", lambda e: (e.element_id,))],
    "addVP": [
        (
            "INSERT OR REPLACE INTO vertex_properties VALUES (?, ?, ?, ?, ?)",
            lambda e: (e.element_id, e.property_id, e.key, *_stored(e.value)),
        )
    ],
    "dropVP": [
        (
            "DELETE FROM vertex_properties WHERE vertex_id = ? AND property_id = ?",
            lambda e: (e.element_id, e.property_id),
        ),
        (
            "DELETE FROM property_meta WHERE vertex_id = ? AND property_id = ?",
            lambda e: (e.element_id, e.property_id),
        ),
    ],
    "setMeta": [
        (
            "INSERT OR REPLACE INTO property_meta VALUES (?, ?, ?, ?, ?)",
            lambda e: (e.element_id, e.property_id, e.key, *_stored(e.value)),
        )
    ],
    "dropMeta": [
        (
            "DELETE FROM property_meta WHERE vertex_id = ? AND property_id = ? AND key = ?",
            lambda e: (e.element_id, e.property_id, e.key),
        )
    ],
    "addE": [
        (
            "INSERT OR REPLACE INTO edges VALUES (?, ?, ?, ?)",
            lambda e: (e.element_id, e.label, e.out_id, e.in_id),
        )
    ],
    "dropE": [
        ("DELETE FROM edges WHERE id = ?", lambda e: (e.element_id,)),
        ("DELETE FROM edge_properties WHERE edge_id = ?", lambda e: (e.element_id,)),
    ],
    "setEP": [
        (
            "INSERT OR REPLACE INTO edge_properties VALUES (?, ?, ?, ?)",
            lambda e: (e.element_id, e.key, *_stored(e.value)),
        )
    ],
    "dropEP": [
        ("DELETE FROM edge_properties WHERE edge_id = ? AND key = ?", lambda e: (e.element_id, e.key))
    ],
}


class SqliteMirror:
    """A SQLite copy of one graph, kept in sync from one topic by a :class:`Subscriber`."""

    def __init__(self, path: str | os.PathLike, topic: str) -> None:
        self.path = Path(path)
        self.topic = topic
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)

    def load(self) -> tuple[int | None, dict[int, Position]]:
        """The snapshot SCN this mirror was bootstrapped at (None: never) and its positions per partition."""
        row = self._db.execute("SELECT snapshot_scn FROM cdc_state WHERE topic = ?", (self.topic,)).fetchone()
        positions = {
            partition: Position(next_offset, scn, seq)
            for partition, next_offset, scn, seq in self._db.execute(
                "SELECT partition, next_offset, scn, seq FROM cdc_positions WHERE topic = ?", (self.topic,)
            )
        }
        return (row[0] if row else None), positions

    def bootstrap(self, snapshot: Snapshot) -> None:
        """Replace the whole content with ``snapshot`` and forget all positions, in one transaction."""
        with self._transaction() as db:
            for table in _CONTENT_TABLES:
                db.execute(f"DELETE FROM {table}")
            db.execute("DELETE FROM cdc_positions WHERE topic = ?", (self.topic,))
            db.execute("INSERT OR REPLACE INTO cdc_state VALUES (?, ?)", (self.topic, snapshot.scn))
            self._apply_events(db, snapshot.events)

    def apply(self, events: Iterable[ChangeEvent], positions: dict[int, Position]) -> None:
        """Apply ``events`` in order and record ``positions``, atomically."""
        with self._transaction() as db:
            self._apply_events(db, events)
            db.executemany(
                "INSERT OR REPLACE INTO cdc_positions VALUES (?, ?, ?, ?, ?)",
                [(self.topic, p, pos.next_offset, pos.scn, pos.seq) for p, pos in positions.items()],
            )

    @staticmethod
    def _apply_events(db: sqlite3.Connection, events: Iterable[ChangeEvent]) -> None:
        execute = db.execute
        for event in events:
            for sql, parameters in _STATEMENTS[event.op]:
                execute(sql, parameters(event))

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    def content(self) -> GraphContent:
        """Everything the mirror holds, comparable with :meth:`GraphContent.from_state`."""
        rows = self._db.execute

        def values(sql: str) -> frozenset[tuple]:
            return frozenset((*row[:-2], freeze(_loaded(row[-2], row[-1]))) for row in rows(sql))

        return GraphContent(
            vertices=frozenset(rows("SELECT id, label FROM vertices")),
            properties=values("SELECT vertex_id, property_id, key, value, value_kind FROM vertex_properties"),
            meta=values("SELECT vertex_id, property_id, key, value, value_kind FROM property_meta"),
            edges=frozenset(rows("SELECT id, label, out_id, in_id FROM edges")),
            edge_properties=values("SELECT edge_id, key, value, value_kind FROM edge_properties"),
        )

    def query(self, sql: str, parameters: tuple = ()) -> list[tuple]:
        """Rows of a read-only query (e.g. on the ``datasets`` and ``lineage_edges`` views)."""
        return self._db.execute(sql, parameters).fetchall()

    def close(self) -> None:
        """Close the database."""
        self._db.close()


class _Transaction:
    """``with``: BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on error."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> sqlite3.Connection:
        self._db.execute("BEGIN IMMEDIATE")
        return self._db

    def __exit__(self, exc_type: object, *_: object) -> None:
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")
