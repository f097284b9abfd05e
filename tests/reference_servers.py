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
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
STARTUP_SECONDS = 60.0
SCHEMA_SCRIPT = REPO / "graph_schema" / "janusgraph" / "schema.groovy"


class ReferenceServer:
    """One reference server process started by its ``start.sh`` on a free loopback port."""

    def __init__(self, name: str, home: Path, extra_env: dict[str, str] | None = None) -> None:
        self.name = name
        self.home = home
        self.extra_env = extra_env or {}
        self.process: subprocess.Popen[bytes] | None = None
        self.log = Path(tempfile.mkstemp(prefix=f"{name}-", suffix=".log")[1])

    def start(self) -> str:
        """Start the server and wait until it accepts WebSocket connections; returns its URL."""
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        env = {**os.environ, "HOST": "127.0.0.1", "PORT": str(port), **self.extra_env}
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                ["bash", str(self.home / "start.sh")], env=env, stdout=log, stderr=subprocess.STDOUT
            )
        try:
            self._wait_until_started()
        except BaseException:
            self.stop()
            raise
        return f"ws://127.0.0.1:{port}/gremlin"

    def _wait_until_started(self) -> None:
        deadline = time.monotonic() + STARTUP_SECONDS
        while "Channel started" not in self.log.read_text(errors="replace"):
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited while starting:\n{self.tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} did not start in {STARTUP_SECONDS:.0f} s:\n{self.tail()}")
            time.sleep(0.1)

    def tail(self, lines: int = 30) -> str:
        """The last lines of the server's log (for failure messages)."""
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """Stop the server (its in-memory graph is gone)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None


def _server_url(request: pytest.FixtureRequest, kind: str, extra_env: dict[str, str]) -> Iterator[str]:
    """The URL of the named reference server: the configured one, or one started from its folder."""
    configured = os.environ.get(f"LINEAGE_TEST_{kind.upper()}_URL")
    if configured:
        yield configured
        return
    home = Path(os.environ.get(f"LINEAGE_TEST_{kind.upper()}_HOME", SHARED / f"{kind}-server"))
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
