"""Every feature gives the same answers on every backend of the `g` fixture as on the in-process engine.

The `g` fixture runs each test in process, through `lineage graph serve`, and on the reference TinkerPop
Gremlin Server (TinkerGraph): where the answers differ, the reference is right and the product is fixed. One
warehouse is loaded through the product's writer, then trace, impact, labels, TTL advice, policy storage,
OpenLineage export and the NetFlow catalog are compared with the same steps on a fresh in-process graph.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pyarrow as pa
import pytest

from lineage_platform.graph import connect
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.impact import impact
from lineage_platform.labels import Declaration, Label, declare, propagate
from lineage_platform.labels.propagate import labels_of
from lineage_platform.model import LineageGraph, RunInfo
from lineage_platform.netflow.generate import FlowProfile, generate
from lineage_platform.netflow.maintenance import LayoutRequest, ingest
from lineage_platform.netflow.query import run_query
from lineage_platform.sql import extract_lineage
from lineage_platform.trace import trace
from lineage_platform.ttl import advise

SQL = (Path(__file__).parent / "fixtures" / "labels_warehouse.sql").read_text()
RUN = RunInfo(status="SUCCESS", job="nightly", user="etl", start_time="2024-06-01T01:00:00")
DECLARED = [
    Declaration("ods.app_events.phone", (Label("PII"),)),
    Declaration("ods.app_events", (Label("APP", "douyin"),)),
]


def _load(g) -> None:
    LineageWriter(g).write(extract_lineage(SQL), RUN)
    declare(g, DECLARED, declared_by="tester")
    propagate(g)


def _comparable(lineage: LineageGraph) -> dict[str, list]:
    """A trace with vertex ids replaced by qualified names and every list sorted."""
    names = {node.id: node.qualified_name for node in lineage.nodes.values()}
    return {
        "nodes": sorted((n.qualified_name, n.label, n.depth) for n in lineage.nodes.values()),
        "edges": sorted(
            (names[e.source], names[e.target], e.process, e.strength, e.transform or "")
            for e in lineage.edges
        ),
        "processes": sorted(
            (p.qualified_name, p.operation or "", len(p.runs)) for p in lineage.processes.values()
        ),
    }


def _answers(g) -> dict[str, object]:
    """What a user sees from each feature, in a form that does not depend on the backend's ids or order."""
    tables = ["ods.app_events", "dwd.douyin_events", "dws.user_stats", "ads.all_apps"]
    out: dict[str, object] = {}
    for name in tables:
        for direction in ("up", "down"):
            out[f"trace {direction} {name}"] = _comparable(trace(g, name, direction=direction))
        out[f"impact {name}"] = impact(g, name).to_dict()
        advice = advise(g, name)
        out[f"ttl {name}"] = (advice.recommended_ttl_days, sorted(map(repr, advice.columns)))
    out["labels"] = {
        name: sorted(str(t.label) for t in taggings)
        for name, taggings in labels_of(g, [*tables, "dws.user_stats.phone_upper"]).items()
    }
    return out


@pytest.fixture(scope="module")
def reference_answers() -> dict[str, object]:
    g = connect("memory:")
    _load(g)
    return _answers(g)


def test_trace_impact_labels_and_ttl_agree_with_the_in_process_engine(g, reference_answers) -> None:
    _load(g)
    answers = _answers(g)
    assert answers.keys() == reference_answers.keys()
    for key, expected in reference_answers.items():
        assert answers[key] == expected, key


def test_openlineage_export_agrees_with_the_in_process_engine(g) -> None:
    def exported(source) -> list[tuple]:
        from lineage_platform.export.openlineage import export_openlineage

        LineageWriter(source).write(extract_lineage(SQL), RUN)
        out = io.StringIO()
        export_openlineage(source, out)
        events = [json.loads(line) for line in out.getvalue().splitlines()]
        return sorted(
            (
                e["job"]["name"],
                tuple(sorted(d["name"] for d in e["inputs"])),
                tuple(sorted(d["name"] for d in e["outputs"])),
            )
            for e in events
        )

    assert exported(g) == exported(connect("memory:"))


def test_the_netflow_catalog_prunes_and_answers_the_same(g, tmp_path: Path) -> None:
    records = pa.Table.from_batches(
        list(generate(6_000, profile=FlowProfile(hours=2, hosts=300), batch_rows=2_000))
    )

    def answer(source, root: Path) -> list[tuple]:
        ingest(
            source,
            "netflow.flows",
            root,
            records.to_batches(max_chunksize=2_000),
            request=LayoutRequest(),
            block_rows=500,
        )
        rng = random.Random(3)
        rows = []
        for _ in range(5):
            port = int(records.column("dst_port")[rng.randrange(records.num_rows)].as_py())
            result = run_query(
                source,
                "netflow.flows",
                f"SELECT count(*) AS n, sum(bytes) AS b FROM flows WHERE dst_port = {port}",
            )
            rows.append((port, *result.table.to_pylist()[0].values()))
        return rows

    assert answer(g, tmp_path / "backend") == answer(connect("memory:"), tmp_path / "in-process")
