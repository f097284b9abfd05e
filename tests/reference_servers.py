"""The reference Gremlin servers for tests: TinkerPop 3.7.3 Gremlin Server (TinkerGraph) and JanusGraph 1.1.0.

Use as a pytest plugin (``pytest_plugins`` in tests/conftest.py). Each server starts once per test run, on a free
loopback port, the first time a test asks for it, and stops when the run ends. Where they come from:

| variable                        | meaning                                                              |
| ------------------------------- | -------------------------------------------------------------------- |
| ``LINEAGE_TEST_TINKERPOP_URL``  | use this running server (``ws://host:port/gremlin``) instead          |
| ``LINEAGE_TEST_TINKERPOP_HOME`` | a folder with ``start.sh`` (default ``../shared/tinkerpop-server``)  |
| ``LINEAGE_TEST_JANUSGRAPH_URL`` | use this running JanusGraph Server (its schema already applied)       |
| ``LINEAGE_TEST_JANUSGRAPH_HOME``| a folder with ``start.sh`` (default ``../shared/janusgraph-server``) |

``start.sh`` takes ``HOST``/``PORT`` (and, for JanusGraph, ``SCHEMA``: the product's generated
``graph_schema/janusgraph/schema.groovy``, applied at start with the production policy). Without Java 17 or the
folders, the tests that need a server are skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from tools.conformance.reference_server import REPO, ReferenceServer, server_home

SCHEMA_SCRIPT = REPO / "graph_schema" / "janusgraph" / "schema.groovy"


def _server_url(request: pytest.FixtureRequest, kind: str, extra_env: dict[str, str]) -> Iterator[str]:
    """The URL of the named reference server: the configured one, or one started from its folder."""
    configured = os.environ.get(f"LINEAGE_TEST_{kind.upper()}_URL")
    if configured:
        yield configured
        return
    home = server_home(kind)
    if not (home / "start.sh").is_file():
        pytest.skip(
            f"no {kind} server: set LINEAGE_TEST_{kind.upper()}_HOME or _URL ({home} has no start.sh)"
        )
    if shutil.which("java") is None:
        pytest.skip(f"the {kind} server needs Java 17 on PATH")
    server = ReferenceServer(kind, home, extra_env)
    url = server.start()
    request.addfinalizer(server.stop)
    yield url


@pytest.fixture(scope="session")
def tinkerpop_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """``ws://`` URL of the reference TinkerPop Gremlin Server with an (initially) empty TinkerGraph."""
    yield from _server_url(request, "tinkerpop", {})


@pytest.fixture(scope="session")
def janusgraph_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """``ws://`` URL of the reference JanusGraph Server, the product's schema applied, production policy."""
    yield from _server_url(request, "janusgraph", {"SCHEMA": str(SCHEMA_SCRIPT)})
