"""Start a reference Gremlin server (TinkerPop's or JanusGraph's ``start.sh``) on a free loopback port.

Used by the differential run (``differential.py``) and by the test suite's reference-server fixtures. The
folders default to ``../shared/tinkerpop-server`` and ``../shared/janusgraph-server`` beside the repository;
``LINEAGE_TEST_TINKERPOP_HOME`` / ``LINEAGE_TEST_JANUSGRAPH_HOME`` point elsewhere (a folder whose
``start.sh`` takes ``HOST`` and ``PORT``, as these do).
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
STARTUP_SECONDS = 60.0


def server_home(kind: str) -> Path:
    """The folder of the ``tinkerpop`` or ``janusgraph`` server: its environment variable, else ../shared."""
    return Path(os.environ.get(f"LINEAGE_TEST_{kind.upper()}_HOME", SHARED / f"{kind}-server"))


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
