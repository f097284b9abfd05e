"""Apache Atlas HookNotification messages, as the Atlas Hive hook publishes them to the ``ATLAS_HOOK`` topic.

Envelope (``AtlasNotificationMessage``): ``version``, ``msgCompressionKind`` (``NONE`` or ``GZIP``),
``msgSplitIdx``, ``msgSplitCount``, ``msgId`` (older writers: ``msgGuid``), ``msgCreatedBy``, ``msgCreationTime``
and ``message``. A large notification is gzipped and base64-encoded into ``message`` (a string); if still too
large, that base64 text is cut into ``msgSplitCount`` records sharing ``msgId``, numbered by ``msgSplitIdx``.
The re-assembled, decoded text is again a whole envelope whose ``message`` is the notification object. A gzipped
message that inflates past the assembler's ``max_bytes`` is rejected (a small record can inflate to gigabytes).

Notification (V2): ``type`` ``ENTITY_CREATE_V2`` / ``ENTITY_FULL_UPDATE_V2`` (``entities``: ``entities`` list +
``referredEntities`` by guid), ``ENTITY_PARTIAL_UPDATE_V2`` (``entity``: one entity + ``referredEntities``) and
``ENTITY_DELETE_V2`` (deletes keep lineage history, so nothing is written). A partial update whose ``entityId``
names a ``hive_table`` by a qualifiedName other than its entity's (``ALTER TABLE … RENAME TO``) is an
ALTER_RENAME statement from the old table to the new one, with IDENTITY edges column by column. A ``hive_table``
with columns, or a ``hive_column``, among the notification's entities that no ``hive_process`` of it reads or
writes (``CREATE TABLE``; ``ALTER TABLE … ADD COLUMNS``, which the hook sends as ENTITY_FULL_UPDATE_V2 of the table
with all its columns; a partial update of the table's ``columns``; a created column) is an ALTER_ADD_COLUMNS
statement per table: its columns are written under it, with no process and no run. Lineage comes from:

* ``hive_process`` — ``qualifiedName``, ``queryText``, ``operationType``, ``userName``, ``startTime``/``endTime``
  (ms), ``clusterName``; ``inputs``/``outputs`` (object ids of ``hive_table`` or file-system paths) under
  ``relationshipAttributes`` (Atlas 2) or ``attributes`` (Atlas 1);
* ``hive_process_execution`` — the run (``hostName``, ``userName``, times) of the ``process`` it points to;
* ``hive_column_lineage`` — ``query`` (the process), ``inputs``/``outputs`` (``hive_column`` ids),
  ``depenendencyType`` (sic: ``SIMPLE``, ``EXPRESSION``, ``SCRIPT``) and ``expression``;
* ``hive_table``/``hive_column`` — ``qualifiedName`` ``db.table@cluster`` / ``db.table.column@cluster``,
  ``tableType`` (``VIRTUAL_VIEW``), ``temporary``, ``columns`` and ``partitionKeys`` (both columns of the table).

An object id (``{"guid", "typeName", "uniqueAttributes": {"qualifiedName"}}``) is resolved by guid among the
message's entities and referred entities, else by its unique qualifiedName; one that cannot be resolved, or
column lineage of a table the process does not read or write, rejects the message.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
import zlib
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from lineage_platform.errors import IngestError
from lineage_platform.ingest.events.items import LineageItems
from lineage_platform.ingest.records import SUCCEEDED, iso_from_millis
from lineage_platform.model import ColumnEdge, Dataset, Operation, RunInfo, StatementLineage

CREATE_TYPES = frozenset({"ENTITY_CREATE_V2", "ENTITY_FULL_UPDATE_V2", "ENTITY_PARTIAL_UPDATE_V2"})
IGNORED_TYPES = frozenset({"ENTITY_DELETE_V2"})
V1_TYPES = frozenset({"ENTITY_CREATE", "ENTITY_FULL_UPDATE", "ENTITY_PARTIAL_UPDATE", "ENTITY_DELETE"})
PATH_TYPES = frozenset({"hdfs_path", "fs_path", "aws_s3_object", "aws_s3_v2_directory", "aws_s3_pseudo_dir"})
OPERATIONS: dict[str, Operation] = {
    "CREATETABLE_AS_SELECT": "CREATE_AS_SELECT",
    "CREATEVIEW": "CREATE_VIEW",
    "ALTERVIEW_AS": "CREATE_VIEW",
    "QUERY": "INSERT",
    "LOAD": "LOAD",
    "EXPORT": "EXPORT",
    "IMPORT": "IMPORT",
    "CREATETABLE": "CREATE_TABLE",
    "ALTERTABLE_RENAME": "ALTER_RENAME",
    "DROPTABLE": "DROP",
}
DEPENDENCY_TRANSFORMS = {"SIMPLE": "IDENTITY", "EXPRESSION": "TRANSFORMATION", "SCRIPT": "TRANSFORMATION"}


class AtlasField:
    """Atlas's names of entity fields and attributes (the notification's, not the lineage graph's keys that share
    some of them: those are :class:`~lineage_platform.graph.vocabulary.Key`)."""

    GUID: Final = "guid"
    TYPE_NAME: Final = "typeName"
    QUALIFIED_NAME: Final = "qualifiedName"
    QUERY_TEXT: Final = "queryText"
    START_TIME: Final = "startTime"
    END_TIME: Final = "endTime"


def is_atlas(event: dict[str, Any]) -> bool:
    """Whether ``event`` is an Atlas notification envelope."""
    return "message" in event and (
        "msgCompressionKind" in event or "msgSplitCount" in event or "version" in event
    )


@dataclass
class _Split:
    count: int
    started: float
    parts: dict[int, str] = field(default_factory=dict)
    positions: list[Hashable] = field(default_factory=list)


@dataclass(frozen=True)
class AbandonedSplit:
    """A split message given up on: its id, how many parts came of how many, and where they were read."""

    msg_id: str
    received: int
    expected: int
    positions: tuple[Hashable, ...]


DEFAULT_MAX_BYTES = 64 * 1024 * 1024


class SplitAssembler:
    """Collects the parts of split messages until all have arrived; decodes compressed ones, refusing any that
    inflate past ``max_bytes``."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self._splits: dict[str, _Split] = {}
        self.max_bytes = max_bytes

    def add(self, envelope: dict[str, Any], position: Hashable) -> dict[str, Any] | None:
        """The notification object of ``envelope``, or None while other parts of its message are missing.

        ``position`` identifies the record (e.g. topic, partition, offset): :meth:`pending` lists those of parts
        still waiting, so a consumer does not commit past them.
        """
        count = _int(envelope, "msgSplitCount", 1)
        if count <= 1:
            return _notification(envelope, self.max_bytes)
        msg_id = envelope.get("msgId") or envelope.get("msgGuid")
        if not isinstance(msg_id, str):
            raise IngestError(
                "split Atlas message without msgId", hint="the hook must set msgId on every part"
            )
        text = envelope.get("message")
        if not isinstance(text, str):
            raise IngestError(
                f"part of split message {msg_id} carries no text", hint="message must be a string"
            )
        split = self._splits.setdefault(msg_id, _Split(count, time.monotonic()))
        split.parts[_int(envelope, "msgSplitIdx", 0)] = text
        split.positions.append(position)
        if len(split.parts) < split.count:
            return None
        del self._splits[msg_id]
        joined = "".join(split.parts[index] for index in sorted(split.parts))
        return _notification(
            _decode_text(joined, envelope.get("msgCompressionKind"), msg_id, self.max_bytes), self.max_bytes
        )

    def pending(self) -> Iterable[Hashable]:
        """Positions of the parts received for messages that are not complete yet."""
        for split in self._splits.values():
            yield from split.positions

    def expire(self, older_than: float) -> list[AbandonedSplit]:
        """Give up on the messages whose first part arrived before ``older_than`` (a ``time.monotonic()``)."""
        stale = [msg_id for msg_id, split in self._splits.items() if split.started < older_than]
        abandoned = []
        for msg_id in stale:
            split = self._splits.pop(msg_id)
            abandoned.append(AbandonedSplit(msg_id, len(split.parts), split.count, tuple(split.positions)))
        return abandoned


def _int(envelope: dict[str, Any], key: str, default: int) -> int:
    value = envelope.get(key, default)
    if not isinstance(value, int) or value < 0:
        raise IngestError(
            f"Atlas envelope field {key} is {value!r}", hint="it must be a non-negative integer"
        )
    return value


def _gunzip(raw: bytes, max_bytes: int, msg_id: Any) -> bytes:
    """The inflated gzip members of ``raw``, never holding more than ``max_bytes`` + 1 bytes of output."""
    out = bytearray()
    while raw:
        inflater = zlib.decompressobj(wbits=31)
        out += inflater.decompress(raw, max_bytes + 1 - len(out))
        if len(out) > max_bytes:
            raise IngestError(
                f"Atlas message {msg_id} inflates to more than {max_bytes} bytes",
                hint="raise the collector's --max-event-mib or have the hook send smaller messages",
            )
        if not inflater.eof:
            raise EOFError("compressed data ended before the end-of-stream marker")
        raw = inflater.unused_data
    return bytes(out)


def _decode_text(text: str, compression: Any, msg_id: Any, max_bytes: int) -> dict[str, Any]:
    try:
        raw = base64.b64decode(text, validate=True)
        if compression == "GZIP":
            raw = _gunzip(raw, max_bytes, msg_id)
        envelope = json.loads(raw)
    except (binascii.Error, OSError, EOFError, zlib.error) as exc:
        raise IngestError(
            f"Atlas message {msg_id} does not decode ({compression} base64): {exc}",
            hint="the message is damaged or a part is missing",
        ) from exc
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise IngestError(
            f"decoded Atlas message {msg_id} is not JSON: {exc}", hint="the message is damaged"
        ) from exc
    if not isinstance(envelope, dict) or not isinstance(envelope.get("message"), dict):
        raise IngestError(
            f"decoded Atlas message {msg_id} holds no notification", hint="the message is damaged"
        )
    return envelope


def _notification(envelope: dict[str, Any], max_bytes: int) -> dict[str, Any]:
    message = envelope.get("message")
    if isinstance(message, str):
        kind = envelope.get("msgCompressionKind", "NONE")
        if kind not in ("GZIP", "NONE"):
            raise IngestError(f"unknown Atlas compression {kind!r}", hint="Atlas writes NONE or GZIP")
        message = _decode_text(message, kind, envelope.get("msgId"), max_bytes)["message"]
    if not isinstance(message, dict):
        raise IngestError("Atlas envelope without a notification object", hint="message must be an object")
    return message


class _Entities:
    """The entities of one notification, looked up by guid or by (typeName, qualifiedName)."""

    def __init__(self, entities: list[dict[str, Any]], referred: dict[str, Any]) -> None:
        self.all = [e for e in entities if isinstance(e, dict)]
        self.all += [e for e in referred.values() if isinstance(e, dict)]
        self.by_guid = {e[AtlasField.GUID]: e for e in self.all if AtlasField.GUID in e}
        self.by_name = {
            (e.get(AtlasField.TYPE_NAME), _attr(e, AtlasField.QUALIFIED_NAME)): e for e in self.all
        }

    def of_type(self, type_name: str) -> list[dict[str, Any]]:
        return [e for e in self.all if e.get(AtlasField.TYPE_NAME) == type_name]

    def resolve(self, ref: Any, where: str) -> tuple[str, str, dict[str, Any] | None]:
        """(typeName, qualifiedName, the entity if the message holds it) of an object id."""
        if not isinstance(ref, dict):
            raise IngestError(
                f"{where}: {ref!r} is not an Atlas object id", hint="expected {guid, typeName, ...}"
            )
        entity = self.by_guid.get(ref.get(AtlasField.GUID))
        type_name = ref.get(AtlasField.TYPE_NAME) or (entity or {}).get(AtlasField.TYPE_NAME)
        name = (ref.get("uniqueAttributes") or {}).get(AtlasField.QUALIFIED_NAME)
        if entity is None and name is not None:
            entity = self.by_name.get((type_name, name))
        name = name or (entity and _attr(entity, AtlasField.QUALIFIED_NAME))
        if not isinstance(name, str) or not type_name:
            raise IngestError(
                f"{where}: unknown entity {ref.get(AtlasField.TYPE_NAME, '?')} guid {ref.get(AtlasField.GUID)!r}",
                hint="the message neither holds the entity nor names it by qualifiedName",
            )
        return type_name, name, entity


def _attr(entity: dict[str, Any], key: str) -> Any:
    value = (entity.get("relationshipAttributes") or {}).get(key)
    return value if value is not None else (entity.get("attributes") or {}).get(key)


def _strip_cluster(qualified_name: str) -> str:
    return qualified_name.rpartition("@")[0].lower() if "@" in qualified_name else qualified_name.lower()


def _cluster(qualified_name: str) -> str | None:
    return qualified_name.rpartition("@")[2] or None if "@" in qualified_name else None


def lineage_items(notification: dict[str, Any], source: str) -> LineageItems:
    """The (statement, run) pairs of one decoded notification, one per ``hive_process`` it holds."""
    kind = notification.get("type")
    if kind in IGNORED_TYPES:
        return []
    if kind in V1_TYPES:
        raise IngestError(
            f"Atlas v1 notification {kind} is not supported", hint="use an Atlas >= 1.0 hook (V2)"
        )
    if kind not in CREATE_TYPES:
        raise IngestError(
            f"unknown Atlas notification type {kind!r}", hint=f"expected {sorted(CREATE_TYPES)}"
        )
    body = notification.get("entities") or notification.get("entity") or {}
    entities = body.get("entities") or ([body["entity"]] if "entity" in body else [])
    index = _Entities(entities, body.get("referredEntities") or {})
    renamed = _renamed_table(notification, index, source)
    if renamed is not None:
        return [renamed]
    executions = {}
    for execution in index.of_type("hive_process_execution"):
        _, process_name, _ = index.resolve(_attr(execution, "process"), "hive_process_execution.process")
        executions[process_name] = execution
    edges: dict[str, list[ColumnEdge]] = {}
    for lineage in index.of_type("hive_column_lineage"):
        _, process_name, _ = index.resolve(_attr(lineage, "query"), "hive_column_lineage.query")
        edges.setdefault(process_name, []).extend(_column_edges(lineage, index))
    items: LineageItems = []
    for process in index.of_type("hive_process"):
        name = _attr(process, AtlasField.QUALIFIED_NAME) or ""
        items.append(_process_item(process, index, edges.pop(name, []), executions.get(name), source))
    if edges:
        raise IngestError(
            f"column lineage for processes not in the message: {sorted(edges)}",
            hint="send hive_column_lineage with its hive_process",
        )
    written = {dataset.name for statement, _ in items for dataset in statement.inputs + statement.outputs}
    return items + _declared_columns(entities, index, written)


def _declared_columns(entities: list[Any], index: _Entities, written: set[str]) -> LineageItems:
    """One ALTER_ADD_COLUMNS statement (no run) per table whose columns the notification's own entities describe
    (a ``hive_table`` with columns, or ``hive_column`` entities), unless a process of it already writes them."""
    tables: dict[str, Dataset] = {}

    def declare(table: str, columns: Iterable[str], kind: str | None = None) -> None:
        known = tables.get(table, Dataset(name=table))
        added = tuple(c for c in columns if c not in known.columns)
        tables[table] = Dataset(name=table, kind=kind or known.kind, columns=known.columns + added)

    for entity in (e for e in entities if isinstance(e, dict)):
        name = _attr(entity, AtlasField.QUALIFIED_NAME)
        if entity.get(AtlasField.TYPE_NAME) == "hive_table":
            ref = {
                AtlasField.TYPE_NAME: "hive_table",
                AtlasField.GUID: entity.get(AtlasField.GUID),
                "uniqueAttributes": {AtlasField.QUALIFIED_NAME: name},
            }
            table = _dataset(ref, index, "hive_table")
            declare(table.name, table.columns, table.kind)
        elif entity.get(AtlasField.TYPE_NAME) == "hive_column":
            table_name, _, column = _strip_cluster(str(name or "")).rpartition(".")
            if "." not in table_name:
                raise IngestError(
                    f"hive_column {name!r} is not named db.table.column@cluster",
                    hint="a hive_column's qualifiedName names its table",
                )
            declare(table_name, (column,))
    return [
        (
            StatementLineage(
                index=0,
                operation="ALTER_ADD_COLUMNS",
                sql=f"ALTER TABLE {table.name} ADD COLUMNS ({', '.join(table.columns)})",
                outputs=(table,),
            ),
            None,
        )
        for table in tables.values()
        if table.columns and table.name not in written
    ]


def _renamed_table(
    notification: dict[str, Any], index: _Entities, source: str
) -> tuple[StatementLineage, RunInfo] | None:
    """The ALTER_RENAME statement of a partial update whose ``entityId`` names a ``hive_table`` by its old
    qualifiedName and whose entity carries the new one (the Hive hook's ``ALTER TABLE … RENAME TO``), or None.

    The new table reads the old one, column by column (IDENTITY edges), as the SQL logs' ALTER_RENAME does at
    table level: lineage written under the old name is reached from the new one.
    """
    entity_id = notification.get("entityId") or {}
    old_name = (entity_id.get("uniqueAttributes") or {}).get(AtlasField.QUALIFIED_NAME)
    entity = index.all[0] if index.all else {}
    if (
        entity_id.get(AtlasField.TYPE_NAME) != "hive_table"
        or entity.get(AtlasField.TYPE_NAME) != "hive_table"
    ):
        return None
    new_name = _attr(entity, AtlasField.QUALIFIED_NAME)
    if not isinstance(old_name, str) or not isinstance(new_name, str):
        return None
    if _strip_cluster(new_name) == _strip_cluster(old_name):
        return None
    ref = {
        AtlasField.TYPE_NAME: "hive_table",
        AtlasField.GUID: entity.get(AtlasField.GUID),
        "uniqueAttributes": {AtlasField.QUALIFIED_NAME: new_name},
    }
    renamed = _dataset(ref, index, "renamed table")
    old = Dataset(name=_strip_cluster(old_name), kind=renamed.kind, columns=renamed.columns)
    edges = tuple(ColumnEdge(f"{old.name}.{c}", f"{renamed.name}.{c}") for c in renamed.columns)
    user = notification.get("user")
    statement = StatementLineage(
        index=0,
        operation="ALTER_RENAME",
        sql=f"ALTER TABLE {old.name} RENAME TO {renamed.name}",
        inputs=(old,),
        outputs=(renamed,),
        column_edges=edges,
    )
    run = RunInfo(
        status=SUCCEEDED,
        user=user if isinstance(user, str) else None,
        cluster=_cluster(new_name),
        engine="hive",
        source=source,
    )
    return statement, run


def _column_edges(lineage: dict[str, Any], index: _Entities) -> list[ColumnEdge]:
    transform = DEPENDENCY_TRANSFORMS.get(
        str(_attr(lineage, "depenendencyType") or "SIMPLE").upper(), "TRANSFORMATION"
    )
    targets = [_column_name(ref, index) for ref in _attr(lineage, "outputs") or []]
    sources = [_column_name(ref, index) for ref in _attr(lineage, "inputs") or []]
    return [ColumnEdge(source=s, target=t, transform=transform) for t in targets for s in sources]


def _column_name(ref: Any, index: _Entities) -> str:
    type_name, name, _ = index.resolve(ref, "hive_column_lineage column")
    if type_name != "hive_column":
        raise IngestError(
            f"column lineage refers to a {type_name}", hint="inputs/outputs must be hive_column ids"
        )
    return _strip_cluster(name)


def _dataset(ref: Any, index: _Entities, where: str) -> Dataset:
    type_name, name, entity = index.resolve(ref, where)
    if type_name in PATH_TYPES:
        return Dataset(
            name=(entity and _attr(entity, "path")) or name.rpartition("@")[0] or name, kind="path"
        )
    if type_name != "hive_table":
        raise IngestError(f"{where}: unsupported dataset type {type_name}", hint="hive_table or a path type")
    kind = "table"
    columns: tuple[str, ...] = ()
    if entity is not None:
        if str(_attr(entity, "tableType") or "").upper() == "VIRTUAL_VIEW":
            kind = "view"
        elif _attr(entity, "temporary") is True:
            kind = "temp"
        column_refs = [*(_attr(entity, "columns") or []), *(_attr(entity, "partitionKeys") or [])]
        column_names = (index.resolve(c, f"{name} column")[1] for c in column_refs)
        columns = tuple(_strip_cluster(c).rpartition(".")[2] for c in column_names)
    return Dataset(name=_strip_cluster(name), kind=kind, columns=columns)


def _process_item(
    process: dict[str, Any],
    index: _Entities,
    edges: list[ColumnEdge],
    execution: dict[str, Any] | None,
    source: str,
) -> tuple[StatementLineage, RunInfo]:
    name = _attr(process, AtlasField.QUALIFIED_NAME) or ""
    inputs = tuple(_dataset(ref, index, f"{name} input") for ref in _attr(process, "inputs") or [])
    outputs = tuple(_dataset(ref, index, f"{name} output") for ref in _attr(process, "outputs") or [])
    known = {d.name for d in inputs + outputs}
    for edge in edges:
        for column in (edge.source, edge.target):
            if column.rpartition(".")[0] not in known:
                raise IngestError(
                    f"column lineage of {name} refers to {column}, whose table the process neither reads nor writes",
                    hint="the process's inputs/outputs must list the tables of its column lineage",
                )
    run_entity = execution or process
    query = _attr(run_entity, AtlasField.QUERY_TEXT) or _attr(process, AtlasField.QUERY_TEXT) or name
    statement = StatementLineage(
        index=0,
        operation=OPERATIONS.get(str(_attr(process, "operationType") or "").upper(), "OTHER"),
        sql=query,
        inputs=inputs,
        outputs=outputs,
        column_edges=tuple(edges),
    )
    run = RunInfo(
        status=SUCCEEDED,  # the Hive hook reports queries after they ran successfully
        user=_attr(run_entity, "userName"),
        start_time=_millis(_attr(run_entity, AtlasField.START_TIME)),
        end_time=_millis(_attr(run_entity, AtlasField.END_TIME)),
        host=_attr(run_entity, "hostName"),
        cluster=_attr(process, "clusterName") or _cluster(name),
        engine="hive",
        source=source,
    )
    return statement, run


def _millis(value: Any) -> str | None:
    return iso_from_millis(value) if isinstance(value, int | float) and value > 0 else None
