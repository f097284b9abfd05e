"""The lineage writer: graph shape, idempotence, batching, provenance."""

from __future__ import annotations

import pytest
from gremlin_python.process.graph_traversal import __

from lineage_platform.graph.connect import connect
from lineage_platform.graph.writer import LineageWriter, statement_key
from lineage_platform.model import ColumnEdge, Dataset, RunInfo, StatementLineage


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


class _OutboxDownOnce:
    """An outbox whose first record() fails, so the writer's first flush rolls back."""

    def __init__(self) -> None:
        self.calls = 0

    def record(self, g, ops) -> None:
        self.calls += 1
        if self.calls == 1:
            raise RuntimeError("outbox down")


def test_a_rolled_back_flush_is_written_in_full_by_the_next_one(g) -> None:
    writer = LineageWriter(g, outbox=_OutboxDownOnce())
    with pytest.raises(RuntimeError, match="outbox down"):
        writer.write_runs([(ORDERS, RUN), (DAILY, None)])
    assert g.V().count().next() == 0
    writer.write_runs([(ORDERS, RUN), (DAILY, None)])  # nothing learnt in the rolled-back flush is trusted
    assert _counts(g) == {"database": 3, "table": 3, "column": 6, "process": 2, "run": 1, "E": 18}


def test_concurrent_writers_of_the_same_lineage_on_janusgraph_create_each_element_once(
    janusgraph_url,
) -> None:
    """JanusGraph refuses concurrent creators of one unique vertex (lock contention); the writer tries again."""
    from concurrent.futures import ThreadPoolExecutor

    from lineage_platform.graph import disconnect

    g = connect(janusgraph_url)
    g.V().drop().iterate()
    statements = [
        _statement(
            f"INSERT OVERWRITE TABLE dwd.t{i} SELECT id FROM ods.shared",
            ["ods.shared"],
            f"dwd.t{i}",
            [ColumnEdge("ods.shared.id", f"dwd.t{i}.id")],
        )
        for i in range(12)
    ]

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
