"""connect() and the %gremlin magics in a real kernel (whose event loop is running) on a `lineage graph serve` graph."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from lineage_platform.graph import connect, disconnect
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.sql import extract_lineage
from tests import test_notebook
from tests.conftest import REPO

this_python_kernel = test_notebook.this_python_kernel
SQL = (Path(__file__).parent / "fixtures" / "labels_warehouse.sql").read_text()


@pytest.fixture
def served_lineage(tmp_path: Path) -> Iterator[str]:
    """`lineage graph serve` on loopback, started as users start it, loaded with the warehouse's lineage."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [str(Path(sys.executable).with_name("lineage")), "graph", "serve"]
    process = subprocess.Popen(
        [*command, "--store", str(tmp_path / "graph"), "--port", str(port)], stderr=subprocess.PIPE, text=True
    )
    try:
        for line in process.stderr:
            if line.startswith("serving "):
                break
        url = f"ws://127.0.0.1:{port}/gremlin"
        g = connect(url)
        LineageWriter(g).write(extract_lineage(SQL))
        disconnect(g)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.slow
def test_connect_and_magics_work_in_a_running_kernel_on_a_served_graph(
    served_lineage: str, this_python_kernel: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = served_lineage
    monkeypatch.delenv("LINEAGE_GRAPH_URL", raising=False)
    cells = [
        "%load_ext lineage_platform.notebook",
        "%gremlin g.V().count()",  # no graph chosen: refused, not an empty default graph
        "import asyncio\n"
        "asyncio.get_running_loop()  # the kernel's loop is running in this thread\n"
        "from lineage_platform.graph import connect\n"
        f"g = connect({url!r})\n"
        "print(sorted(g.V().has_label('table').values('qualifiedName').to_list()))",
        f"%%gremlin --graph {url}\ng.V().hasLabel('table').count().next()",
        f"%lineage_graph {url}",
        "%gremlin g.V().has('column', 'qualifiedName', 'dws.user_stats.phone_upper').in('flowsTo').values('qualifiedName').toList()",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    NotebookClient(
        notebook,
        kernel_name=this_python_kernel,
        timeout=60,
        allow_errors=True,
        resources={"metadata": {"path": str(REPO)}},
    ).execute()
    outputs = [cell.outputs for cell in notebook.cells]

    (refused,) = outputs[1]
    assert refused.name == "stderr" and refused.text.startswith(
        "UsageError: no graph chosen"
    )  # IPython's form
    assert "%lineage_graph" in refused.text and "Traceback" not in refused.text

    assert all(o.output_type != "error" for cell in outputs[2:] for o in cell), outputs[2:]
    tables = outputs[2][0].text
    assert "'dws.user_stats'" in tables and "'ods.app_events'" in tables

    said, counted = outputs[3]
    assert said.text.strip() == f"gremlin: graph {url} (from --graph)"
    assert counted.data["text/plain"] == "[4]"  # a Gremlin Server answers a script with a list

    assert outputs[4][0].data["text/plain"] == repr(url)
    (upstream,) = [o for o in outputs[5] if o.output_type == "execute_result"]
    assert "dwd.douyin_events.phone" in upstream.data["text/plain"]
