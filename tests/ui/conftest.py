"""The demo warehouse graph the UI tests read, written once per test run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lineage_platform.graph import connect
from tests.conftest import REPO
from tests.ui.warehouse import write_demo_warehouse


@pytest.fixture(scope="session")
def demo_graph():
    """The demo warehouse in an in-process graph (for API tests)."""
    g = connect("memory:")
    write_demo_warehouse(g)
    return g


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An embedded store holding the demo warehouse, written by another process (an embedded store belongs to one
    process at a time, and the `lineage ui` under test must open it)."""
    store = tmp_path_factory.mktemp("ui-demo") / "graph"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-m", "tests.ui.warehouse", str(store)], check=True, cwd=REPO, env=env)
    return store
