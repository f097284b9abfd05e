"""Atlas HookNotifications as the Hive hook sends them: plain, GZIP+base64, and split over several records."""

from __future__ import annotations

import base64
import copy
import gzip
import json
import time
from pathlib import Path
from typing import Any

import pytest

from lineage_platform.errors import IngestError
from lineage_platform.ingest.events import EventDecoder
from lineage_platform.ingest.events.atlas import AbandonedSplit, SplitAssembler
from lineage_platform.model import ColumnEdge, RunInfo

CLUSTER = "primary"


def _ref(type_name: str, guid: str, qualified_name: str | None = None) -> dict[str, Any]:
    ref: dict[str, Any] = {"guid": guid, "typeName": type_name}
    if qualified_name:
        ref["uniqueAttributes"] = {"qualifiedName": qualified_name}
    return ref


def _column(guid: str, table_guid: str, table: str, name: str) -> dict[str, Any]:
    return {
        "typeName": "hive_column",
        "guid": guid,
        "attributes": {"qualifiedName": f"{table}.{name}@{CLUSTER}", "name": name, "type": "string"},
        "relationshipAttributes": {"table": _ref("hive_table", table_guid)},
    }


def ctas_notification() -> dict[str, Any]:
    """CREATE TABLE sales.daily AS SELECT region, upper(name) AS name FROM ods.customers, as the Hive hook reports it:
    the output table, its columns, the process, its execution and column lineage in ``entities``; the input table
    and its columns in ``referredEntities``."""
    query = "create table sales.daily as select region, upper(name) as name from ods.customers"
    process_name = f"sales.daily@{CLUSTER}:1767578400000"
    source_table = {
        "typeName": "hive_table",
        "guid": "-11",
        "attributes": {
            "qualifiedName": f"ods.customers@{CLUSTER}",
            "name": "customers",
            "tableType": "MANAGED_TABLE",
        },
        "relationshipAttributes": {
            "columns": [_ref("hive_column", "-12"), _ref("hive_column", "-13")],
            "db": _ref("hive_db", "-10", f"ods@{CLUSTER}"),
        },
    }
    target_table = {
        "typeName": "hive_table",
        "guid": "-21",
        "attributes": {"qualifiedName": f"sales.daily@{CLUSTER}", "name": "daily", "temporary": False},
        "relationshipAttributes": {"columns": [_ref("hive_column", "-22"), _ref("hive_column", "-23")]},
    }
    process = {
        "typeName": "hive_process",
        "guid": "-30",
        "attributes": {
            "qualifiedName": process_name,
            "name": query,
            "queryText": query,
            "operationType": "CREATETABLE_AS_SELECT",
            "clusterName": CLUSTER,
            "userName": "alice",
            "startTime": 1767578400000,
            "endTime": 1767578460000,
        },
        "relationshipAttributes": {
            "inputs": [_ref("hive_table", "-11", f"ods.customers@{CLUSTER}")],
            "outputs": [_ref("hive_table", "-21")],
        },
    }
    execution = {
        "typeName": "hive_process_execution",
        "guid": "-31",
        "attributes": {
            "qualifiedName": f"{process_name}:1767578400000:1767578460000",
            "queryText": query,
            "userName": "alice",
            "hostName": "hs2-01.prod",
            "startTime": 1767578400000,
            "endTime": 1767578460000,
        },
        "relationshipAttributes": {"process": _ref("hive_process", "-30")},
    }

    def column_lineage(guid: str, output: str, inputs: list[str], kind: str) -> dict[str, Any]:
        return {
            "typeName": "hive_column_lineage",
            "guid": guid,
            "attributes": {
                "qualifiedName": f"{process_name}:sales.daily@{CLUSTER}:{output}",
                "depenendencyType": kind,
                "expression": "upper(name)" if kind == "EXPRESSION" else None,
            },
            "relationshipAttributes": {
                "query": _ref("hive_process", "-30"),
                "inputs": [_ref("hive_column", g) for g in inputs],
                "outputs": [_ref("hive_column", "-22" if output == "region" else "-23")],
            },
        }

    return {
        "type": "ENTITY_CREATE_V2",
        "user": "alice",
        "entities": {
            "entities": [
                target_table,
                _column("-22", "-21", "sales.daily", "region"),
                _column("-23", "-21", "sales.daily", "name"),
                process,
                execution,
                column_lineage("-40", "region", ["-12"], "SIMPLE"),
                column_lineage("-41", "name", ["-13"], "EXPRESSION"),
            ],
            "referredEntities": {
                "-11": source_table,
                "-12": _column("-12", "-11", "ods.customers", "region"),
                "-13": _column("-13", "-11", "ods.customers", "name"),
            },
        },
    }


def envelope(message: Any, **fields: Any) -> dict[str, Any]:
    """An AtlasNotificationMessage around ``message``."""
    return {
        "version": {"version": "1.0.0", "versionParts": [1]},
        "msgCompressionKind": "NONE",
        "msgSplitIdx": 1,
        "msgSplitCount": 1,
        "msgSourceIP": "10.0.0.7",
        "msgCreatedBy": "hive",
        "msgCreationTime": 1767578461000,
        "message": message,
        **fields,
    }


def encoded(whole: dict[str, Any], compress: bool) -> str:
    raw = json.dumps(whole).encode()
    return base64.b64encode(gzip.compress(raw) if compress else raw).decode()


def split(whole: dict[str, Any], parts: int, compress: bool) -> list[dict[str, Any]]:
    text = encoded(whole, compress)
    size = -(-len(text) // parts)
    kind = "GZIP" if compress else "NONE"
    return [
        envelope(
            text[n * size : (n + 1) * size],
            msgId="b5a9_3",
            msgCompressionKind=kind,
            msgSplitIdx=n,
            msgSplitCount=parts,
        )
        for n in range(parts)
    ]


def bytes_of(event: dict[str, Any]) -> bytes:
    return json.dumps(event).encode()


def check_ctas(items: list) -> None:
    [(statement, run)] = items
    assert statement.operation == "CREATE_AS_SELECT"
    assert statement.sql.startswith("create table sales.daily")
    assert [(d.name, d.kind, d.columns) for d in statement.inputs] == [
        ("ods.customers", "table", ("region", "name"))
    ]
    assert [(d.name, d.columns) for d in statement.outputs] == [("sales.daily", ("region", "name"))]
    assert set(statement.column_edges) == {
        ColumnEdge("ods.customers.region", "sales.daily.region", "strong", "IDENTITY"),
        ColumnEdge("ods.customers.name", "sales.daily.name", "strong", "TRANSFORMATION"),
    }
    assert run == RunInfo(
        status="SUCCEEDED",
        user="alice",
        start_time="2026-01-05T02:00:00.000Z",
        end_time="2026-01-05T02:01:00.000Z",
        host="hs2-01.prod",
        cluster=CLUSTER,
        engine="hive",
        source="ATLAS_HOOK:0:7",
    )


def test_plain_create_notification() -> None:
    decoded = EventDecoder().decode(bytes_of(envelope(ctas_notification())), ("ATLAS_HOOK", 0, 7))
    assert decoded.format == "atlas"
    check_ctas(decoded.items)


def test_gzip_compressed_notification() -> None:
    whole = envelope(ctas_notification())
    compressed = envelope(encoded(whole, compress=True), msgId="b5a9_2", msgCompressionKind="GZIP")
    check_ctas(EventDecoder().decode(bytes_of(compressed), ("ATLAS_HOOK", 0, 7)).items)


@pytest.mark.parametrize("compress", [True, False])
def test_split_message_is_decoded_when_its_last_part_arrives(compress: bool) -> None:
    decoder = EventDecoder()
    first, second, third = split(envelope(ctas_notification()), 3, compress)
    assert decoder.decode(bytes_of(third), ("ATLAS_HOOK", 0, 5)).pending
    assert decoder.decode(bytes_of(first), ("ATLAS_HOOK", 0, 6)).pending
    assert sorted(decoder.atlas_parts.pending()) == [("ATLAS_HOOK", 0, 5), ("ATLAS_HOOK", 0, 6)]
    check_ctas(decoder.decode(bytes_of(second), ("ATLAS_HOOK", 0, 7)).items)
    assert list(decoder.atlas_parts.pending()) == []


def test_parts_of_different_messages_do_not_mix() -> None:
    assembler = SplitAssembler()
    one = split(envelope(ctas_notification()), 2, compress=True)
    other = [
        dict(part, msgId="other") for part in split(envelope({"type": "ENTITY_DELETE_V2"}), 2, compress=True)
    ]
    assert assembler.add(one[0], 1) is None
    assert assembler.add(other[0], 2) is None
    assert assembler.add(other[1], 3) == {"type": "ENTITY_DELETE_V2"}
    assert assembler.add(one[1], 4)["type"] == "ENTITY_CREATE_V2"


def test_delete_notifications_keep_lineage_history() -> None:
    deletion = {
        "type": "ENTITY_DELETE_V2",
        "entities": [_ref("hive_table", "g1", f"ods.customers@{CLUSTER}")],
    }
    assert EventDecoder().decode(bytes_of(envelope(deletion)), ("ATLAS_HOOK", 0, 1)).items == []


def _broken(change: str) -> dict[str, Any]:
    notification = ctas_notification()
    entities = notification["entities"]
    if change == "unknown input":
        del entities["referredEntities"]["-11"]
        process = entities["entities"][3]
        process["relationshipAttributes"]["inputs"] = [_ref("hive_table", "-99")]
    elif change == "lineage outside the process":
        entities["referredEntities"]["-13"]["attributes"]["qualifiedName"] = f"ods.secret.name@{CLUSTER}"
    elif change == "type":
        notification["type"] = "ENTITY_SHUFFLE_V2"
    elif change == "v1":
        notification["type"] = "ENTITY_CREATE"
    return notification


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ("unknown input", "unknown entity hive_table guid '-99'"),
        (
            "lineage outside the process",
            "refers to ods.secret.name, whose table the process neither reads nor writes",
        ),
        ("type", "unknown Atlas notification type 'ENTITY_SHUFFLE_V2'"),
        ("v1", "Atlas v1 notification ENTITY_CREATE is not supported"),
    ],
)
def test_unusable_notifications_are_rejected_with_a_reason(change: str, reason: str) -> None:
    with pytest.raises(IngestError, match=reason):
        EventDecoder().decode(bytes_of(envelope(_broken(change))), ("ATLAS_HOOK", 0, 1))


def test_damaged_compressed_message_is_rejected() -> None:
    text = encoded(envelope(ctas_notification()), compress=True)
    damaged = envelope(text[: len(text) // 2], msgId="b5a9_9", msgCompressionKind="GZIP")
    with pytest.raises(IngestError, match="does not decode"):
        EventDecoder().decode(bytes_of(damaged), ("ATLAS_HOOK", 0, 1))


def test_partial_update_with_one_process() -> None:
    notification = ctas_notification()
    entities = copy.deepcopy(notification["entities"])
    process = entities["entities"][3]
    update = {
        "type": "ENTITY_PARTIAL_UPDATE_V2",
        "entity": {"entity": process, "referredEntities": entities["referredEntities"]},
    }
    for output in entities["entities"][:3]:  # the output table and its columns
        update["entity"]["referredEntities"][output["guid"]] = output
    [(statement, _)] = EventDecoder().decode(bytes_of(envelope(update)), ("ATLAS_HOOK", 0, 1)).items
    assert [d.name for d in statement.outputs] == ["sales.daily"]
    assert statement.column_edges == ()


def test_incomplete_split_messages_can_be_given_up() -> None:
    assembler = SplitAssembler()
    first, _ = split(envelope(ctas_notification()), 2, compress=True)
    assert assembler.add(first, ("ATLAS_HOOK", 1, 9)) is None
    assert assembler.expire(time.monotonic() - 60) == []  # still young
    assert assembler.expire(time.monotonic() + 1) == [AbandonedSplit("b5a9_3", 1, 2, (("ATLAS_HOOK", 1, 9),))]
    assert list(assembler.pending()) == []


def test_a_gzip_message_inflating_past_the_limit_is_refused() -> None:
    """Inflating stops at the limit: a message of 2 MiB of spaces is refused under a 1 MiB limit."""
    text = base64.b64encode(gzip.compress(b" " * 2 * 2**20)).decode()
    decoder = EventDecoder(max_bytes=2**20)
    with pytest.raises(IngestError, match=f"inflates to more than {2**20} bytes"):
        decoder.decode(bytes_of(envelope(text, msgCompressionKind="GZIP", msgId="big")), ("t", 0, 0))


def test_deeply_nested_events_are_refused() -> None:
    nested = '{"a": ' * 100_000 + "1" + "}" * 100_000
    with pytest.raises(IngestError, match="nested too deep"):
        EventDecoder().decode(nested.encode(), ("t", 0, 0))
    inner = json.dumps(envelope({"type": "ENTITY_CREATE_V2"})).replace(
        '"ENTITY_CREATE_V2"', "[" * 50_000 + "]" * 50_000
    )
    text = base64.b64encode(gzip.compress(inner.encode())).decode()
    with pytest.raises(IngestError, match="not JSON"):
        EventDecoder().decode(bytes_of(envelope(text, msgCompressionKind="GZIP", msgId="deep")), ("t", 0, 0))


def rename_notification(old: str, new: str, columns: list[str]) -> dict[str, Any]:
    """ALTER TABLE old RENAME TO new as the Hive hook reports it: a partial update naming the table by its old
    qualifiedName in ``entityId``, the table with its new qualifiedName (and its renamed columns) as the entity."""
    column_refs = {f"-5{n}": _column(f"-5{n}", "-50", new, name) for n, name in enumerate(columns, 1)}
    table = {
        "typeName": "hive_table",
        "guid": "-50",
        "attributes": {"qualifiedName": f"{new}@{CLUSTER}", "name": new.rpartition(".")[2]},
        "relationshipAttributes": {"columns": [_ref("hive_column", guid) for guid in column_refs]},
    }
    return {
        "type": "ENTITY_PARTIAL_UPDATE_V2",
        "user": "bob",
        "entityId": {"typeName": "hive_table", "uniqueAttributes": {"qualifiedName": f"{old}@{CLUSTER}"}},
        "entity": {"entity": table, "referredEntities": column_refs},
    }


def test_a_renamed_table_keeps_its_lineage_under_the_new_name() -> None:
    from lineage_platform.graph import connect
    from lineage_platform.graph.writer import LineageWriter
    from lineage_platform.trace import trace

    decoder, g = EventDecoder(), connect("memory:")
    writer = LineageWriter(g)
    writer.write_runs(decoder.decode(bytes_of(envelope(ctas_notification())), ("ATLAS_HOOK", 0, 1)).items)
    rename = envelope(rename_notification("sales.daily", "sales.daily_v2", ["region", "name"]))
    [(statement, run)] = decoder.decode(bytes_of(rename), ("ATLAS_HOOK", 0, 2)).items
    assert (statement.operation, run.user) == ("ALTER_RENAME", "bob")
    writer.write_runs([(statement, run)])
    tables = {node.qualified_name for node in trace(g, "sales.daily_v2").nodes.values()}
    assert {"sales.daily", "ods.customers"} <= tables
    columns = {node.qualified_name for node in trace(g, "sales.daily_v2.name", level="column").nodes.values()}
    assert {"sales.daily.name", "ods.customers.name"} <= columns


def add_columns_notification(table: str, columns: list[str]) -> dict[str, Any]:
    """ALTER TABLE table ADD COLUMNS (...) as the Hive hook reports it (its AlterTable event): ENTITY_FULL_UPDATE_V2
    of the table with all its columns, the columns and the database in ``referredEntities``."""
    column_refs = {f"-6{n}": _column(f"-6{n}", "-60", table, name) for n, name in enumerate(columns, 1)}
    entity = {
        "typeName": "hive_table",
        "guid": "-60",
        "attributes": {"qualifiedName": f"{table}@{CLUSTER}", "name": table.rpartition(".")[2]},
        "relationshipAttributes": {
            "columns": [_ref("hive_column", guid) for guid in column_refs],
            "db": _ref("hive_db", "-59", f"{table.partition('.')[0]}@{CLUSTER}"),
        },
    }
    return {
        "type": "ENTITY_FULL_UPDATE_V2",
        "user": "bob",
        "entities": {"entities": [entity], "referredEntities": column_refs},
    }


def test_added_columns_hang_off_their_table_and_trace_finds_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from lineage_platform.cli import invoke
    from lineage_platform.graph import connect
    from lineage_platform.graph.writer import LineageWriter
    from lineage_platform.sql import extract_lineage

    decoder, store = EventDecoder(), f"embedded:{tmp_path / 'graph'}"
    g = connect(store)
    writer = LineageWriter(g)
    writer.write_runs(decoder.decode(bytes_of(envelope(ctas_notification())), ("ATLAS_HOOK", 0, 1)).items)
    processes = g.V().has_label("process").count().next()
    added = envelope(add_columns_notification("sales.daily", ["region", "name", "channel"]))
    [(statement, run)] = decoder.decode(bytes_of(added), ("ATLAS_HOOK", 0, 2)).items
    assert (statement.operation, run) == ("ALTER_ADD_COLUMNS", None)
    assert [(d.name, d.columns) for d in statement.outputs] == [
        ("sales.daily", ("region", "name", "channel"))
    ]
    writer.write_runs([(statement, run)])
    columns = g.V().has("table", "qualifiedName", "sales.daily").out("hasColumn").values("qualifiedName")
    assert sorted(columns.to_list()) == ["sales.daily.channel", "sales.daily.name", "sales.daily.region"]
    assert g.V().has_label("process").count().next() == processes  # a schema change runs nothing
    capsys.readouterr()
    result = invoke(["trace", "sales.daily.channel", "--graph", store])
    assert result.success, result.exception
    assert capsys.readouterr().out.split() == ["sales.daily.channel"]  # found; no lineage into it yet
    later = "INSERT INTO sales.daily SELECT region, name, 'web' AS channel FROM ods.customers"
    writer.write(
        extract_lineage(later, schema={"ods": {"customers": {"region": "string", "name": "string"}}})
    )
    same_column = g.V().has("qualifiedName", "sales.daily.channel").count().next()
    assert same_column == 1  # the declared column has the key the writer gives columns


def test_a_created_column_is_declared_under_its_table() -> None:
    column = _column("-71", "-70", "sales.daily", "channel")
    created = {"type": "ENTITY_CREATE_V2", "entities": {"entities": [column], "referredEntities": {}}}
    [(statement, run)] = EventDecoder().decode(bytes_of(envelope(created)), ("ATLAS_HOOK", 0, 4)).items
    assert (statement.operation, run, statement.inputs) == ("ALTER_ADD_COLUMNS", None, ())
    assert [(d.name, d.kind, d.columns) for d in statement.outputs] == [
        ("sales.daily", "table", ("channel",))
    ]


def test_a_partial_update_of_a_tables_columns_declares_them() -> None:
    same = envelope(rename_notification("sales.daily", "sales.daily", ["region", "channel"]))
    [(statement, run)] = EventDecoder().decode(bytes_of(same), ("ATLAS_HOOK", 0, 3)).items
    assert (statement.operation, run) == ("ALTER_ADD_COLUMNS", None)
    assert [(d.name, d.columns) for d in statement.outputs] == [("sales.daily", ("region", "channel"))]


def test_a_column_not_named_by_its_table_is_refused() -> None:
    column = _column("-81", "-80", "sales.daily", "channel")
    column["attributes"]["qualifiedName"] = f"channel@{CLUSTER}"
    created = {"type": "ENTITY_CREATE_V2", "entities": {"entities": [column], "referredEntities": {}}}
    with pytest.raises(IngestError, match=r"is not named db\.table\.column@cluster"):
        EventDecoder().decode(bytes_of(envelope(created)), ("ATLAS_HOOK", 0, 5))
