"""Applying the schema: the embedded store is created; a ws:// server (JanusGraph) gets the management script."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph_schema import load_schema
from graph_schema.janusgraph import janusgraph_script
from lineage_platform.errors import ConstraintViolation, GraphError
from lineage_platform.graph import connect
from lineage_platform.graph.schema import apply_schema


class RecordingClient:
    """Stands in for a JanusGraph Server with a Groovy script engine (the reference server here runs gremlin-lang
    only, see the last test): records the submitted script."""

    scripts: list[str] = []
    fail: bool = False

    def __init__(self, url: str) -> None:
        self.url = url

    def submit(self, script: str):
        if self.fail:
            raise RuntimeError("Property key with given name does not exist: qualifiedName")
        self.scripts.append(script)
        return self

    def all(self):
        return self

    def result(self):
        return ["lineage schema version 1 applied"]

    def close(self) -> None:
        pass


def test_embedded_store_is_created_with_the_unique_constraints(tmp_path: Path) -> None:
    url = f"embedded:{tmp_path / 'graph'}"
    report = apply_schema(url)
    assert (report.version, report.unique_constraints) == (
        load_schema().version,
        len(load_schema().unique_keys),
    )
    assert (tmp_path / "graph").is_dir()
    g = connect(url)
    g.add_v("table").property("qualifiedName", "db.t").iterate()
    with pytest.raises(ConstraintViolation, match="qualifiedName"):
        g.add_v("table").property("qualifiedName", "db.t").iterate()


def test_remote_server_gets_the_generated_management_script() -> None:
    RecordingClient.scripts, RecordingClient.fail = [], False
    report = apply_schema("ws://janusgraph:8182/gremlin", client_factory=RecordingClient)
    assert RecordingClient.scripts == [janusgraph_script(load_schema())]
    assert "applied" in report.server_reply


def test_a_failing_server_reply_becomes_a_graph_error_with_a_hint() -> None:
    RecordingClient.fail = True
    with pytest.raises(GraphError, match="applying the schema to ws://janusgraph:8182/gremlin failed"):
        apply_schema("ws://janusgraph:8182/gremlin", client_factory=RecordingClient)


def test_init_on_a_server_without_a_groovy_engine_says_what_to_do_in_one_line(janusgraph_url) -> None:
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    lineage = Path(sys.executable).with_name("lineage")
    run = subprocess.run(
        [str(lineage), "graph", "init", "--graph", janusgraph_url], capture_output=True, text=True, env=env
    )
    assert run.returncode == 1
    lines = (run.stdout + run.stderr).strip().splitlines()
    assert len(lines) == 1, run.stdout + run.stderr
    assert "has no Groovy script engine" in lines[0] and "management API" in lines[0]
