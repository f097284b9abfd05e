"""Fixtures shared by the whole suite: an isolated LINEAGE_HOME and one Spark session per test run."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# Tests never touch the user's ~/.lineage: settings resolve under a throw-away home.
_HOME = Path(tempfile.mkdtemp(prefix="lineage-test-home-"))
os.environ["LINEAGE_HOME"] = str(_HOME)
os.environ.setdefault("LINEAGE_GRAPH_URL", f"embedded:{_HOME / 'graph'}")

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """The one local Spark session of this test run (started on first use)."""
    from lineage_platform.ingest.spark import session

    spark_session = session("local[2]")
    yield spark_session
    spark_session.stop()
