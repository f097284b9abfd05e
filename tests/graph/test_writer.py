"""The lineage writer: graph shape, idempotence, batching, provenance."""

from __future__ import annotations

import pytest
from gremlin_python.process.graph_traversal import __
from gremlin_python.process.traversal import T

from lineage_platform.errors import ConfigError
from lineage_platform.graph.connect import connect, supports_transactions
from lineage_platform.graph.writer import LineageWriter, statement_key
from lineage_platform.model import ColumnEdge, Dataset, RunInfo, StatementLineage
from tests.graph_contents import edge_rows, without_create_time


def _statement(sql: str, inputs: list[str], output: str, edges: list[ColumnEdge]) -> StatementLineage:
    return StatementLineage(
        index=0,
        operation="INSERT_OVERWRITE",
        sql=sql,
        inputs=tuple(Dataset(name) for name in inputs),
        outputs=(Dataset(output),),
        column_edges=tuple(edges),
    )


ORDERS = _statement(
    "INSERT OVERWRITE TABLE dwd.orders SELECT o.id, o.amount * 100 AS cents FROM ods.orders o WHERE o.dt = '1'",
    ["ods.orders"],
    "dwd.orders",
    [
        ColumnEdge("ods.orders.id", "dwd.orders.id"),
        ColumnEdge("ods.orders.amount", "dwd.orders.cents", transform="TRANSFORMATION"),
        ColumnEdge("ods.orders.dt", "dwd.orders", strength="weak", transform="FILTER"),
    ],
)
DAILY = _statement(
    "INSERT OVERWRITE TABLE dws.daily SELECT sum(cents) AS total FROM dwd.orders",
    ["dwd.orders"],
    "dws.daily",
    [ColumnEdge("dwd.orders.cents", "dws.daily.total", transform="AGGREGATION")],
)
RUN = RunInfo(
    user="etl",
    start_time="2024-05-01T01:00:00",
    end_time="2024-05-01T01:05:00",
    host="gw1",
    cluster="c1",
    engine="hive",
    job="daily_orders",
    queue="etl",
    status="SUCCESS",
    source="log.jsonl:1",
)


def _counts(g) -> dict[str, int]:
    return {
        label: g.V().has_label(label).count().next()
        for label in ("database", "table", "column", "process", "run")
    } | {"E": g.E().count().next()}


def test_writes_datasets_columns_processes_runs_and_column_edges(g) -> None:
    summary = LineageWriter(g).write_runs([(ORDERS, RUN), (DAILY, None)])
    assert _counts(g) == {"database": 3, "table": 3, "column": 6, "process": 2, "run": 1, "E": 18}
    assert (summary.statements, summary.processes, summary.runs) == (2, 2, 1)
    assert summary.vertices == 15 and summary.edges == 18
    upstream = (
        g.V()
        .has("table", "qualifiedName", "dws.daily")
        .in_("generated")
        .in_("usedBy")
        .values("qualifiedName")
    )
    assert upstream.to_list() == ["dwd.orders"]
    cents = g.V().has("column", "qualifiedName", "dwd.orders.cents")
    assert cents.in_("flowsTo").values("qualifiedName").to_list() == ["ods.orders.amount"]
    edge = g.V().has("column", "qualifiedName", "ods.orders.amount").out_e("flowsTo").element_map().next()
    assert (edge["transform"], edge["strength"], edge["process"]) == (
        "TRANSFORMATION",
        "strong",
        f"process:{statement_key(ORDERS)}",
    )
    weak = (
        g.V().has("column", "qualifiedName", "ods.orders.dt").out("flowsTo").values("qualifiedName").to_list()
    )
    assert weak == ["dwd.orders"]  # a filter dependency on every column of the target, recorded once
    run = (
        g.V()
        .has("process", "qualifiedName", f"process:{statement_key(ORDERS)}")
        .out("hasRun")
        .element_map()
        .next()
    )
    assert (run["user"], run["job"], run["engine"]) == ("etl", "daily_orders", "hive")


def test_rewriting_the_same_records_changes_nothing(g) -> None:
    writer = LineageWriter(g)
    writer.write_runs([(ORDERS, RUN), (DAILY, None)])
    before = _counts(g)
    again = LineageWriter(g).write_runs([(ORDERS, RUN), (DAILY, None)])
    assert _counts(g) == before
    assert (again.vertices, again.edges, again.processes, again.runs) == (0, 0, 0, 0)


@pytest.mark.parametrize("batch_size", [1, 3, 1000])
def test_batch_size_does_not_change_the_graph(g, batch_size: int) -> None:
    LineageWriter(g, batch_size=batch_size).write_runs([(ORDERS, RUN), (DAILY, None)])
    assert _counts(g) == {"database": 3, "table": 3, "column": 6, "process": 2, "run": 1, "E": 18}
    assert g.V().has("qualifiedName", "ods.orders.amount").repeat(__.out("flowsTo")).emit().values(
        "qualifiedName"
    ).to_list() == ["dwd.orders.cents", "dws.daily.total"]


def test_a_second_run_of_the_same_statement_adds_only_the_run(g) -> None:
    LineageWriter(g).write(ORDERS_LIST := [ORDERS], RUN)
    later = RunInfo(**{**RUN.__dict__, "start_time": "2024-05-02T01:00:00"})
    summary = LineageWriter(g).write(ORDERS_LIST, later)
    assert (summary.vertices, summary.runs, summary.edges) == (1, 1, 1)
    assert g.V().has_label("process").count().next() == 1
    assert g.V().has_label("run").count().next() == 2


def test_one_writer_writing_many_runs_keeps_the_graph_exact(g) -> None:
    later = RunInfo(**{**RUN.__dict__, "start_time": "2024-05-02T01:00:00"})
    writer = LineageWriter(g, batch_size=3)
    writer.write([ORDERS, DAILY], RUN)
    summary = writer.write([ORDERS, DAILY], later)  # the edges it wrote before are not sent again
    assert (summary.vertices, summary.runs, summary.edges) == (2, 2, 2)  # a run and its hasRun per statement
    reference = connect("memory:")
    for run in (RUN, later):
        LineageWriter(reference).write([ORDERS, DAILY], run)  # fresh writers: nothing remembered
    assert _counts(g) == _counts(reference)


def _content(g) -> tuple[set, set]:
    """Every vertex and edge with its properties, by qualified names (ids and createTime left out)."""

    vertices = {(row[T.label], without_create_time(row)) for row in g.V().element_map().to_list()}
    return vertices, edge_rows(g)


def test_a_statement_with_all_its_runs_in_one_transaction_writes_what_a_write_per_run_does(g) -> None:
    """The writer adds a statement's lineage once however many of its runs one batch holds (a bulk load hands
    each distinct statement over with its runs): runs, createBy and version come out as written one by one."""
    runs = [_run("bob", 9), _run("alice", 3), _run("carol", 12)]
    LineageWriter(g).write_together([(ORDERS, run) for run in runs] + [(DAILY, _run("dan", 5))])
    reference = connect("memory:")
    for run in runs:
        LineageWriter(reference).write([ORDERS], run)
    LineageWriter(reference).write([DAILY], _run("dan", 5))
    assert _content(g) == _content(reference)
    assert g.V().has_label("run").count().next() == 4
    assert _provenance(g, "table", "dwd.orders")["createBy"] == [
        "alice"
    ]  # the earliest run, not the first given


class _OutboxDownOnce:
    """An outbox whose first record() fails, so the writer's first flush rolls back."""

    def __init__(self) -> None:
        self.calls = 0

    def record(self, g, ops) -> None:
        self.calls += 1
        if self.calls == 1:
            raise RuntimeError("outbox down")


def test_a_rolled_back_flush_is_written_in_full_by_the_next_one(g) -> None:
    if not supports_transactions(g):
        pytest.skip("a graph without transactions refuses the outbox (next test)")
    writer = LineageWriter(g, outbox=_OutboxDownOnce())
    with pytest.raises(RuntimeError, match="outbox down"):
        writer.write_runs([(ORDERS, RUN), (DAILY, None)])
    assert g.V().count().next() == 0
    writer.write_runs([(ORDERS, RUN), (DAILY, None)])  # nothing learnt in the rolled-back flush is trusted
    assert _counts(g) == {"database": 3, "table": 3, "column": 6, "process": 2, "run": 1, "E": 18}


def test_a_graph_without_transactions_refuses_change_capture_before_writing(g) -> None:
    if supports_transactions(g):
        pytest.skip("this graph has transactions")
    with pytest.raises(ConfigError, match="change capture needs a graph with transactions"):
        LineageWriter(g, outbox=_OutboxDownOnce()).write_runs([(ORDERS, RUN), (DAILY, None)])
    assert g.V().count().next() == 0  # nothing half-written


# ---- provenance attributes (the DAG provenance model) ----------------------------------------------------------


def _run(user: str, day: int) -> RunInfo:
    return RunInfo(**{**RUN.__dict__, "user": user, "start_time": f"2024-05-{day:02d}T01:00:00"})


def _create(sql: str, output: str, columns: tuple[str, ...]) -> StatementLineage:
    return StatementLineage(
        index=0,
        operation="CREATE_AS_SELECT",
        sql=sql,
        inputs=(Dataset("ods.orders"),),
        outputs=(Dataset(output, columns=columns),),
        column_edges=tuple(ColumnEdge(f"ods.orders.{c}", f"{output}.{c}") for c in columns),
    )


def _provenance(g, label: str, name: str) -> dict:
    return g.V().has(label, "qualifiedName", name).value_map("createBy", "version", "typeName", "kind").next()


def test_create_by_is_the_user_of_the_earliest_generating_run_whatever_the_load_order(g) -> None:
    """Failed before: createBy was always "lineage"."""
    writer = LineageWriter(g, batch_size=4)
    writer.write_runs([(ORDERS, _run("bob", 9)), (DAILY, None)])
    writer.write_runs([(ORDERS, _run("alice", 3)), (ORDERS, _run("carol", 12))])  # an older run loaded later
    assert _provenance(g, "table", "dwd.orders")["createBy"] == ["alice"]
    assert _provenance(g, "process", f"process:{statement_key(ORDERS)}")["createBy"] == ["alice"]
    assert _provenance(g, "table", "ods.orders")["createBy"] == ["lineage"]  # only read: no run created it
    assert _provenance(g, "table", "dws.daily")["createBy"] == [
        "lineage"
    ]  # generated by a process without runs


def test_create_by_of_a_process_stays_the_earliest_when_the_writer_skips_reading_it(g) -> None:
    """A writer does not read a process's createBy again for runs later than the earliest it knows of; an earlier
    run another writer brought meanwhile, and its own earlier runs (ties broken by user), still win."""
    process = f"process:{statement_key(ORDERS)}"
    first, other = LineageWriter(g), LineageWriter(g)
    first.write([ORDERS], _run("bob", 9))
    other.write([ORDERS], _run("alice", 3))
    first.write([ORDERS], _run("carol", 12))
    assert _provenance(g, "process", process)["createBy"] == ["alice"]
    first.write([ORDERS], _run("dave", 1))
    assert _provenance(g, "process", process)["createBy"] == ["dave"]
    first.write([ORDERS], _run("aaron", 1))
    assert _provenance(g, "process", process)["createBy"] == ["aaron"]
    assert g.V().has_label("run").count().next() == 5


def test_version_counts_generating_processes_and_new_column_lists_and_reloading_keeps_it(g) -> None:
    """Failed before: version was always 1."""
    first = _create("CREATE TABLE dwd.o AS SELECT id FROM ods.orders", "dwd.o", ("id",))
    widened = _create("CREATE TABLE dwd.o AS SELECT id, amount FROM ods.orders", "dwd.o", ("id", "amount"))
    backfill = _statement(
        "INSERT INTO dwd.o SELECT id, amount FROM ods.orders_old", ["ods.orders_old"], "dwd.o", []
    )
    runs = [(first, _run("alice", 1)), (widened, _run("bob", 5)), (backfill, _run("carol", 7))]
    LineageWriter(g).write_runs(runs[:1])
    assert _provenance(g, "table", "dwd.o")["version"] == [1]
    LineageWriter(g).write_runs(runs[1:2])
    assert _provenance(g, "table", "dwd.o")["version"] == [3]  # a second process and a second column list
    LineageWriter(g).write_runs(runs[2:])
    assert _provenance(g, "table", "dwd.o")["version"] == [4]
    for order in (runs, runs[::-1]):  # the same logs again, in any order: nothing moves
        LineageWriter(g, batch_size=2).write_runs(order)
        assert _provenance(g, "table", "dwd.o") == {
            "createBy": ["alice"],
            "version": [4],
            "typeName": ["Dataset"],
            "kind": ["table"],
        }
    fresh = connect("memory:")
    LineageWriter(fresh, batch_size=1).write_runs(runs[::-1])  # loaded newest first into an empty graph
    assert _provenance(fresh, "table", "dwd.o")["version"] == [4]


def test_type_names_are_dataset_or_process_and_edges_carry_guid_name_type(g) -> None:
    """Failed before: typeName was the label, and edges had no guid, name or typeName."""
    LineageWriter(g).write_runs([(ORDERS, RUN)])
    kinds = {(row["kind"][0], row["typeName"][0]) for row in g.V().value_map("kind", "typeName").to_list()}
    assert kinds == {
        ("database", "Dataset"),
        ("table", "Dataset"),
        ("column", "Dataset"),
        ("process", "Process"),
        ("run", "Process"),
    }
    edges = g.E().element_map().to_list()
    assert all(e["guid"] and e["typeName"] == str(e[T.label]) and e["name"] for e in edges)
    assert len({e["guid"] for e in edges}) == len(edges)
    again = connect("memory:")
    LineageWriter(again).write_runs([(ORDERS, RUN)])
    assert {e["guid"] for e in again.E().element_map().to_list()} == {e["guid"] for e in edges}
    used = g.E().has_label("usedBy").element_map().next()
    assert used["name"] == f"ods.orders usedBy process:{statement_key(ORDERS)}"


def _readers_of_one_table(count: int) -> list[StatementLineage]:
    """``count`` statements, each writing a table of its own from ``ods.shared`` (what concurrent writers share)."""
    return [
        _statement(
            f"INSERT OVERWRITE TABLE dwd.t{i} SELECT id FROM ods.shared",
            ["ods.shared"],
            f"dwd.t{i}",
            [ColumnEdge("ods.shared.id", f"dwd.t{i}.id")],
        )
        for i in range(count)
    ]


def test_concurrent_writers_of_the_same_lineage_on_janusgraph_create_each_element_once(
    janusgraph_url,
) -> None:
    """JanusGraph refuses concurrent creators of one unique vertex (lock contention); the writer tries again."""
    from concurrent.futures import ThreadPoolExecutor

    from lineage_platform.graph import disconnect

    g = connect(janusgraph_url)
    g.V().drop().iterate()
    statements = _readers_of_one_table(12)

    def write(offset: int) -> int:
        source = connect(janusgraph_url)
        try:
            writer = LineageWriter(source, batch_size=8)
            return writer.write(statements[offset:] + statements[:offset], RUN).vertices
        finally:
            disconnect(source)

    with ThreadPoolExecutor(4) as pool:
        created = list(pool.map(write, range(0, 12, 3)))
    counts = _counts(g)
    assert counts["table"] == 13 and counts["database"] == 2 and counts["process"] == 12
    assert g.V().has("table", "qualifiedName", "ods.shared").count().next() == 1
    assert sum(created) == g.V().count().next()  # each vertex counted by the one writer that created it


def test_a_transaction_block_commits_all_its_flushes_together_or_none(g) -> None:
    writer = LineageWriter(g, batch_size=3)  # several flushes inside the block
    with pytest.raises(RuntimeError, match="stop"), writer.transaction():
        writer.write_runs([(ORDERS, RUN), (DAILY, None)])
        raise RuntimeError("stop")
    if supports_transactions(g):
        assert g.V().count().next() == 0  # none of the block's flushes was committed
    summary = writer.write_together(
        [(ORDERS, RUN), (DAILY, None)]
    )  # nothing learnt in the rolled-back block is trusted
    assert _counts(g) == {"database": 3, "table": 3, "column": 6, "process": 2, "run": 1, "E": 18}
    assert summary.statements == 2


def test_a_commit_janusgraph_refuses_raises_instead_of_losing_the_writes(janusgraph_url) -> None:
    """Two transactions create the same unique table; JanusGraph refuses the second commit, and the caller hears
    it (gremlinpython alone hands the refusal back unread and closes the session: the writes were lost silently)."""
    from gremlin_python.driver.protocol import GremlinServerError

    from lineage_platform.graph.retry import is_transient

    g = connect(janusgraph_url)
    g.V().drop().iterate()
    first, second = g.tx(), g.tx()
    for tx in (first, second):
        tx.begin().add_v("table").property("qualifiedName", "ods.race").property("name", "race").iterate()
    first.commit()
    with pytest.raises(GremlinServerError, match="Could not commit") as refused:
        second.commit()
    assert is_transient(refused.value)  # the writer runs such a transaction again
    second.rollback()  # the refused transaction's session is still open until rolled back
    assert not second.is_open()
    assert g.V().has("table", "qualifiedName", "ods.race").count().next() == 1


def test_concurrent_transactions_of_the_same_lineage_on_janusgraph_all_land(janusgraph_url) -> None:
    """Bulk-load executors write whole batches as one transaction each; refused commits are run again, none lost."""
    from concurrent.futures import ThreadPoolExecutor

    from lineage_platform.graph import disconnect

    g = connect(janusgraph_url)
    g.V().drop().iterate()
    statements = _readers_of_one_table(12)

    def write(part: int) -> None:
        source = connect(janusgraph_url)
        try:
            LineageWriter(source, batch_size=8).write_together([(s, RUN) for s in statements[part::4]])
        finally:
            disconnect(source)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(write, range(4)))
    counts = _counts(g)
    assert counts["process"] == 12 and counts["table"] == 13
    assert g.V().has("table", "qualifiedName", "ods.shared").count().next() == 1
