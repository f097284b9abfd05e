"""The README's main job, end to end on an embedded graph in a temporary folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from gremlin_python.process.graph_traversal import __
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
    assert result.html.read_text().count("vis.Network") == 1
    assert "keep 31 days" in text  # a DWD table read by 30-partition jobs, plus the 1-day margin
