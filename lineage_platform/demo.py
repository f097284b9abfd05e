"""The main job, end to end on the embedded default: sample job logs -> Spark bulk load -> graph -> labels
propagated to fixpoint -> a trace (tree and HTML picture) -> TTL advice.

This is an orchestrator: it strings the stages together and prints what each did; the work lives in the stages.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from lineage_platform.config import load_settings
from lineage_platform.graph import connect
from lineage_platform.graph.dsl import lineage_source
from lineage_platform.graph.vocabulary import VertexLabel
from lineage_platform.ingest.bulk_load import LoadOptions, bulk_load
from lineage_platform.ingest.report import RichLoadProgress, summary_table
from lineage_platform.ingest.sample_logs import generate_sample
from lineage_platform.labels import Declaration, Label, declare, explain, propagate
from lineage_platform.labels.store import tagged_with, vertex_ids
from lineage_platform.trace import trace
from lineage_platform.ttl import advise

PII_COLUMNS = ("phone", "email", "id_card")
# sample warehouse tables are named <layer>_<subject>_<app>_<region>_<suffix>, e.g. ods_user_douyin_cn_di
_SAMPLE_TABLE = re.compile(r"^ods_[a-z]+_(?P<app>[a-z]+)_[a-z]+_[a-z]+$")


@dataclass
class DemoResult:
    """Where the demo left its files and what it traced."""

    work_dir: Path
    graph_url: str
    traced: str
    html: Path


def sample_declarations(catalog: dict[str, dict[str, dict[str, str]]]) -> list[Declaration]:
    """The roots a user would label by hand: APP on every ODS table, PII on ODS phone/email/id_card columns."""
    declarations = []
    for table, columns in sorted(catalog.get("ods", {}).items()):
        match = _SAMPLE_TABLE.match(table)
        if match:
            declarations.append(Declaration(f"ods.{table}", (Label("APP", match["app"]),)))
        declarations += [
            Declaration(f"ods.{table}.{column}", (Label("PII"),))
            for column in PII_COLUMNS
            if column in columns
        ]
    return declarations


def run_demo(
    work_dir: Path | None = None, graph_url: str | None = None, console: Console | None = None
) -> DemoResult:
    """Run the main job and print each stage's outcome."""
    console = console or Console()
    settings = load_settings()
    work_dir = Path(work_dir or settings.work_dir / "demo")
    graph_url = graph_url or settings.graph_url
    logs = work_dir / "logs"

    console.rule("1. sample job logs")
    if (logs / "catalog.json").exists():
        console.print(f"reusing the sample logs in {logs} (the generator is deterministic)")
    else:
        sample = generate_sample(logs)
        console.print(
            f"{sample.records} query records from {sample.jobs} jobs on {sample.tables} tables over {sample.days} "
            f"days ({sample.failed} failed, {sum(sample.garbage.values())} damaged lines) in {logs}"
        )

    console.rule("2. Spark bulk load into the graph")
    catalog = json.loads((logs / "catalog.json").read_text())
    options = LoadOptions(
        paths=(str(logs),), graph_url=graph_url, schema=catalog, state_dir=work_dir / "state"
    )
    with RichLoadProgress(console) as progress:
        loaded = bulk_load(options, progress)
    console.print(summary_table(loaded))

    g = connect(graph_url)
    console.rule("3. labels: declared roots, propagated until fixpoint")
    known = vertex_ids(
        g, (d.name for d in sample_declarations(catalog))
    )  # catalog entries no job touched are absent
    declarations = [d for d in sample_declarations(catalog) if d.name in known]
    written = declare(g, declarations, declared_by="demo")
    summary = propagate(g)
    console.print(
        f"declared {written} labels on {len(declarations)} ODS tables/columns; propagation reached fixpoint after "
        f"{summary.rounds} rounds: {summary.labelled} tables/columns now hold propagated labels "
        f"({summary.added} added, {summary.withdrawn} withdrawn)"
    )
    spread = [name for name in tagged_with(g, Label("PII"), origin="propagated") if name.count(".") == 2]
    console.print(f"PII spread to {len(spread)} columns downstream; by layer: {_by_layer(spread)}")

    console.rule("4. trace")
    ads = sorted(vertex_ids(g, (f"ads.{t}" for t in catalog.get("ads", {}))))
    traced = ads[0] if ads else loaded_table(g)
    lineage = trace(g, traced, direction="up")
    console.print(lineage.to_tree(), highlight=False)
    picture = trace(g, traced, direction="both", level="table")
    html = work_dir / "trace.html"
    html.write_text(picture.to_html())
    console.print(f"lineage picture of {traced} ({len(picture.nodes)} datasets): {html}")
    if spread:
        column = max(spread, key=_layer_rank)
        for explanation in explain(g, column):
            if explanation.label == Label("PII"):
                console.print(f"why {column} is PII:\n{explanation.describe()}", highlight=False)

    console.rule("5. TTL advice")
    tables = [
        n.qualified_name
        for n in lineage.nodes.values()
        if n.label == VertexLabel.TABLE and n.id != lineage.root
    ]
    advices = [advise(g, name) for name in sorted(tables)]
    for advice in advices:
        console.print(
            f"  {advice.table}: {advice.no_advice_reason or f'keep {advice.recommended_ttl_days} days'}"
        )
    bounded = [a for a in advices if a.recommended_ttl_days is not None]
    if bounded:
        longest = max(bounded, key=lambda a: a.recommended_ttl_days or 0)
        console.print(f"evidence for {longest.table}:")
        for column in longest.columns[:1]:
            for use in column.uses:
                console.print(
                    f"  {column.column} <- {', '.join(use.jobs) or use.process}: {use.predicate}",
                    highlight=False,
                )
    console.rule("done")
    console.print(
        f"graph: {graph_url}  |  try: lineage trace {traced} --both, lineage impact {traced}, "
        f"lineage gremlin --graph {graph_url}"
    )
    console.print(
        f"explore it in the browser: lineage ui --graph {graph_url}   then open "
        f"http://127.0.0.1:8080/lineage/{traced}?dir=up&depth=3&level=column",
        highlight=False,
        soft_wrap=True,
    )
    return DemoResult(work_dir, graph_url, traced, html)


def loaded_table(g) -> str:
    """Any table of the graph (when the sample has no ADS layer)."""
    return lineage_source(g).tables().qualified_name().limit(1).next()


def _layer_rank(name: str) -> tuple[int, str]:
    return (
        ["ods", "dwd", "dws", "ads"].index(name.split(".", 1)[0])
        if name[:3] in ("ods", "dwd", "dws", "ads")
        else -1,
        name,
    )


def _by_layer(names: list[str]) -> dict[str, int]:
    layers: dict[str, int] = {}
    for name in names:
        layers[name.split(".", 1)[0]] = layers.get(name.split(".", 1)[0], 0) + 1
    return layers
