"""The %gremlin / %%gremlin IPython magics: option splitting, result shapes, and a real notebook run by nbclient."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from gremlin_python.process.traversal import T
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from lineage_platform.console.session import StatementResult
from lineage_platform.notebook import notebook_value, split_options
from tests.conftest import REPO


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("--graph memory: g.V().has('name', 'a b')", ("memory:", "g.V().has('name', 'a b')")),
        ("--graph=ws://h:8182/gremlin", ("ws://h:8182/gremlin", "")),
        ("  g.V().count()  ", (None, "g.V().count()")),
    ],
)
def test_split_options(line: str, expected: tuple[str | None, str]) -> None:
    assert split_options(line) == expected


def test_maps_with_scalar_values_become_a_frame() -> None:
    frame = notebook_value([StatementResult([{T.id: 1, "name": "orders"}, {T.id: 2, "name": "report"}], 0.0)])
    assert isinstance(frame, pd.DataFrame)
    assert frame.to_dict("records") == [{"id": 1, "name": "orders"}, {"id": 2, "name": "report"}]


def test_non_tabular_results_stay_a_list() -> None:
    assert notebook_value([StatementResult([{"name": ["orders", "o"]}], 0.0)]) == [{"name": ["orders", "o"]}]
    assert notebook_value([StatementResult(["a", "b"], 0.0)]) == ["a", "b"]


def test_single_value_terminals_and_last_statement_win() -> None:
    results = [StatementResult([1, 2], 0.0), StatementResult([6], 0.0, single=True)]
    assert notebook_value(results) == 6
    assert notebook_value([]) is None


CELLS = [
    "%load_ext lineage_platform.notebook",
    "%%gremlin --graph memory:\n"
    "g.addV('table').property('name', 'orders').property('rows', 3).iterate()\n"
    "g.addV('table').property('name', 'report').property('rows', 5).iterate()",
    "%%gremlin --graph memory:\ng.V().order().by('name').valueMap('name', 'rows').by(unfold())",
    "wanted = 'report'\n"
    "frame = %gremlin --graph memory: g.V().order().by('name').valueMap('name', 'rows').by(unfold())\n"
    "names = %gremlin --graph memory: g.V().values('name').order()\n"
    "count = %gremlin --graph memory: g.V().count().next()\n"
    "rows = %gremlin --graph memory: g.V().has('name', wanted).where(__.hasLabel('table')).values('rows').toList()\n"
    "import json\n"
    "print(json.dumps({'type': type(frame).__name__, 'records': frame.to_dict('records'),\n"
    "                  'names': names, 'count': count, 'rows': rows}))",
    "%gremlin --graph memory: g.V().outt()",
]


@pytest.fixture
def this_python_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A Jupyter kernel spec running this test's Python (the project's virtualenv), whatever else is installed."""
    spec = tmp_path / "kernels" / "lineage-test"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "lineage test", "language": "python"})
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    return "lineage-test"


@pytest.mark.slow
def test_notebook_runs_gremlin_cells(this_python_kernel: str, open_schema: None) -> None:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in CELLS])
    client = NotebookClient(
        notebook, kernel_name=this_python_kernel, timeout=60, resources={"metadata": {"path": str(REPO)}}
    )
    with pytest.raises(CellExecutionError, match="unknown step 'outt'"):
        client.execute()  # the last cell's bad traversal fails the cell, as a notebook run in CI must notice

    assert (
        notebook.cells[1].outputs[0].text == "gremlin: graph memory: (from --graph)\n"
    )  # said once per graph
    table_output = notebook.cells[2].outputs[0]
    assert table_output.output_type == "execute_result"
    assert "<table" in table_output.data["text/html"] and "orders" in table_output.data["text/html"]

    summary = json.loads(notebook.cells[3].outputs[0].text)
    assert summary == {
        "type": "DataFrame",
        "records": [{"name": "orders", "rows": 3}, {"name": "report", "rows": 5}],
        "names": ["orders", "report"],
        "count": 2,
        "rows": [5],
    }

    (error,) = notebook.cells[4].outputs
    assert error.text.startswith("UsageError: unknown step 'outt' at line 1, column 7")
    assert "Traceback" not in error.text
