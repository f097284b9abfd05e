"""The README's main job, end to end on an embedded graph in a temporary folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from gremlin_python.process.graph_traversal import __
from gremlin_python.process.traversal import T
from rich.console import Console

from lineage_platform.demo import run_demo
from lineage_platform.graph import connect
from lineage_platform.labels import Label
from lineage_platform.labels.store import tagged_with


@pytest.mark.slow
@pytest.mark.spark
def test_main_job_loads_traces_and_propagates(tmp_path: Path, spark) -> None:
    out = Console(record=True, width=200)
    url = f"embedded:{tmp_path / 'graph'}"
    result = run_demo(tmp_path / "work", url, out)
    text = out.export_text()
    for stage in (
        "1. sample job logs",
        "2. Spark bulk load",
        "3. labels",
        "4. trace",
        "5. TTL advice",
        "done",
    ):
        assert stage in text
    g = connect(url)
    assert result.traced.startswith("ads.")
    upstream = (
        (g.V().has("table", "qualifiedName", result.traced).repeat(__.in_("generated").in_("usedBy")).emit())
        .values("qualifiedName")
        .to_list()
    )
    assert any(name.startswith("ods.") for name in upstream)  # the trace reaches the ODS layer
    assert len(tagged_with(g, Label("PII"), origin="propagated")) > 0
    assert result.html.read_text().count("window.LINEAGE_VIEW = offline.view") == 1
    assert "keep 31 days" in text  # a DWD table read by 30-partition jobs, plus the 1-day margin
    assert text.rstrip().splitlines()[-1].startswith(f"explore it in the browser: lineage ui --graph {url}")


def _stages_3_to_5(text: str, work_dir: Path, url: str) -> str:
    """What the demo printed for labels, trace and TTL advice, with its folder and graph URL made neutral."""
    body = text[text.index("3. labels") : text.rindex("done")]
    return body.replace(str(work_dir), "WORK").replace(url, "URL")


@pytest.mark.slow
@pytest.mark.spark
def test_main_job_on_janusgraph_prints_what_it_prints_on_the_embedded_graph(
    tmp_path: Path, spark, janusgraph_url: str
) -> None:
    g = connect(janusgraph_url)
    g.V().drop().iterate()
    printed = {}
    for name, url in (("embedded", f"embedded:{tmp_path / 'graph'}"), ("janusgraph", janusgraph_url)):
        out = Console(record=True, width=200)
        work_dir = tmp_path / name
        run_demo(work_dir, url, out)
        printed[name] = _stages_3_to_5(out.export_text(), work_dir, url)
    assert "PII spread to" in printed["embedded"] and "keep 31 days" in printed["embedded"]
    assert printed["janusgraph"] == printed["embedded"]
    counts = g.V().group_count().by(T.label).next()
    assert counts == connect(f"embedded:{tmp_path / 'graph'}").V().group_count().by(T.label).next()
