"""The analyst notebooks under notebooks/: saved without outputs, and each runs top to bottom in a real kernel."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests import test_notebook
from tests.conftest import REPO

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
this_python_kernel = test_notebook.this_python_kernel  # the kernel spec fixture, shared with the magic test


def test_every_walkthrough_is_there() -> None:
    topics = {path.stem.split("_", 1)[1] for path in NOTEBOOKS}
    assert {
        "explore_lineage",
        "labels_and_ttl",
        "permissions_and_masking",
        "netflow_pruning",
        "gremlin_magic",
    } <= topics


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_saved_without_outputs(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code, f"{path.name} has no code"
    assert all(not cell.outputs and cell.execution_count is None for cell in code), (
        f"clear outputs of {path.name}"
    )


def _text_of(outputs: list) -> str:
    parts = []
    for output in outputs:
        if output.output_type == "stream":
            parts.append(output.text)
        elif output.output_type in ("execute_result", "display_data"):
            parts.append(output.data.get("text/html", "") + output.data.get("text/plain", ""))
    return "".join(parts)


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom(path: Path, this_python_kernel: str) -> None:
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        kernel_name=this_python_kernel,
        timeout=60,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()  # a failing cell raises CellExecutionError with the cell and its traceback

    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    if "sample_warehouse.build" in code[0].source:
        loaded = _text_of(code[0].outputs)
        assert "distinct statements loaded" in loaded and " 0 vertices" not in loaded
    errors = [o for cell in code for o in cell.outputs if o.output_type == "error"]
    assert not errors
    _check_what_the_notebook_shows(path.stem, [_text_of(cell.outputs) for cell in code])


def _check_what_the_notebook_shows(name: str, outputs: list[str]) -> None:
    """The facts each walkthrough is about must appear in its outputs, not just run without error."""
    everything = "\n".join(outputs)
    if name.endswith("explore_lineage"):
        assert "└─▲ dws." in everything and "[CREATE_AS_SELECT]" in everything  # the upstream tree
        assert "<iframe" in everything  # the picture
        assert "digraph" in everything
    elif name.endswith("labels_and_ttl"):
        assert "PropagationSummary(rounds=" in everything
        assert "PII declared by" in everything  # an explanation reaching its declared root
        assert "keep " in everything and "evidence for" in everything
    elif name.endswith("permissions_and_masking"):
        assert "every resource block is covered" in everything
        assert "request: SELECT" in everything  # the all-history query asks for a grant
        assert "MASK_HASH(" in everything.upper()
    elif name.endswith("netflow_pruning"):
        reads = [(int(a), int(b)) for a, b in re.findall(r"read (\d+)/(\d+) partitions", everything)]
        assert len(reads) == 4 and min(a / b for a, b in reads) <= 1 / 8  # one cell of >= 8 per bucket
        assert any(a == b for a, b in reads)  # the query without an address filter has nothing to prune
    elif name.endswith("gremlin_magic"):
        assert "<table" in everything and "processes:" in everything
