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
# Embedded graphs refuse what JanusGraph's schema (production policy) refuses, so fast tests catch it.
os.environ["LINEAGE_GRAPH_SCHEMA"] = "strict"

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """The one local Spark session of this test run (started on first use)."""
    from lineage_platform.ingest.spark import session

    spark_session = session("local[2]")
    yield spark_session
    spark_session.stop()


@pytest.fixture
def open_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """Embedded graphs opened in this test accept any label and key (for graphs that are not lineage graphs)."""
    monkeypatch.setenv("LINEAGE_GRAPH_SCHEMA", "open")


@pytest.fixture(params=["in-process", "served", "tinkergraph", "janusgraph"])
def g(request: pytest.FixtureRequest) -> Iterator[object]:
    """A fresh lineage graph: in process, through `lineage graph serve`, on the reference TinkerGraph server and on
    the reference JanusGraph server (the product's schema, production policy)."""
    from lineage_platform.graph import connect, disconnect

    if request.param == "in-process":
        yield connect("memory:")
        return
    if request.param in ("tinkergraph", "janusgraph"):
        server = {"tinkergraph": "tinkerpop_url", "janusgraph": "janusgraph_url"}[request.param]
        source = connect(request.getfixturevalue(server))
        source.V().drop().iterate()
        try:
            yield source
        finally:
            disconnect(source)
        return
    from lineage_platform.graph.connect import open_embedded
    from lineage_platform.graph.embedded.server import BackgroundServer, ServerSettings

    graph = open_embedded(None)
    server = BackgroundServer(graph, ServerSettings(port=0)).start()
    source = connect(server.url)
    try:
        yield source
    finally:
        disconnect(source)
        server.stop()


# session-scoped `kafka_broker` (a real Tansu broker), `tinkerpop_url` and `janusgraph_url` (reference servers)
pytest_plugins = ["tests.kafka_broker", "tests.reference_servers"]
