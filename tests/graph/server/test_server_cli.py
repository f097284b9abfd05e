"""`lineage graph serve` command: credentials helper, refusals (before any store is opened), and a served store."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from gremlin_python.driver.driver_remote_connection import DriverRemoteConnection
from gremlin_python.process.anonymous_traversal import traversal

from lineage_platform.cli import cli
from lineage_platform.errors import ConfigError
from lineage_platform.graph.embedded.server import Authenticator
from lineage_platform.graph.embedded.server.auth import load_credentials


def test_add_user_asks_for_the_password_twice_and_stores_a_hash(tmp_path: Path) -> None:
    credentials = tmp_path / "creds.txt"
    result = CliRunner().invoke(
        cli,
        ["graph", "serve", "--credentials", str(credentials), "--add-user", "spark"],
        input="s3cret\ns3cret\n",
    )
    assert result.exit_code == 0, result.output
    assert "spark saved" in result.output
    assert list(load_credentials(credentials)) == ["spark"]
    assert Authenticator.from_file(credentials).authenticate("AHNwYXJrAHMzY3JldA==") == "spark"


def test_add_user_needs_a_credentials_file() -> None:
    result = CliRunner().invoke(cli, ["graph", "serve", "--add-user", "spark"])
    assert result.exit_code == 2 and "--add-user needs --credentials FILE" in result.output


def test_binding_beyond_loopback_without_credentials_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["graph", "serve", "--host", "0.0.0.0", "--store", str(tmp_path / "graph")]
    )
    assert isinstance(result.exception, ConfigError)
    assert "refusing to serve the graph on 0.0.0.0 without credentials" in str(result.exception)
    assert not (tmp_path / "graph").exists()


def test_only_embedded_stores_can_be_served() -> None:
    result = CliRunner().invoke(cli, ["graph", "serve", "--graph", "ws://elsewhere:8182/gremlin"])
    assert isinstance(result.exception, ConfigError)
    assert "only an embedded store can be served" in str(result.exception)


@pytest.mark.slow
def test_the_command_serves_a_store_to_gremlinpython_until_terminated(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [str(Path(sys.executable).with_name("lineage")), "graph", "serve"]
    process = subprocess.Popen(
        [*command, "--store", str(tmp_path / "graph"), "--port", str(port)],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = []
        for line in process.stderr:
            lines.append(line)
            if line.startswith("serving "):
                break
        assert any("loaded objects left out of garbage collection" in line for line in lines), lines
        connection = DriverRemoteConnection(f"ws://127.0.0.1:{port}/gremlin", "g")
        try:
            g = traversal().with_remote(connection)
            g.add_v("table").property("qualifiedName", "db.t").iterate()
            assert g.V().values("qualifiedName").to_list() == ["db.t"]
        finally:
            connection.close()
    finally:
        process.terminate()
        assert process.wait(timeout=30) == 0
