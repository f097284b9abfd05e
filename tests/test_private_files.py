"""What the platform keeps on disk is readable by its owner only: folders 0700, files 0600, whatever the umask."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from lineage_platform.cdc.checkpoint import RelayCheckpoint
from lineage_platform.graph.connect import EmbeddedRemoteConnection
from lineage_platform.graph.embedded.engine import EmbeddedGraph
from lineage_platform.graph.graphson import import_graph
from lineage_platform.ingest.state import LoadState
from lineage_platform.private_files import open_private, private_dir
from lineage_platform.security.kms.local import LocalKeyStore


@pytest.fixture(autouse=True)
def _open_umask() -> Iterator[None]:
    """A umask that takes nothing away: the modes must come from the code, not from the environment."""
    previous = os.umask(0)
    yield
    os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _assert_private(root: Path) -> None:
    assert _mode(root) == 0o700, root
    for path in root.rglob("*"):
        assert _mode(path) == (0o700 if path.is_dir() else 0o600), path


def test_private_dir_creates_parents_private_and_tightens_an_existing_folder(tmp_path: Path) -> None:
    private_dir(tmp_path / "a" / "b")
    _assert_private(tmp_path / "a")
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    assert _mode(private_dir(loose)) == 0o700
    existing = tmp_path / "file"
    existing.write_text("x")
    existing.chmod(0o644)
    with open_private(existing, "a") as handle:
        handle.write("y")
    assert _mode(existing) == 0o600 and existing.read_text() == "xy"


def test_the_embedded_store_is_private(tmp_path: Path) -> None:
    from gremlin_python.process.anonymous_traversal import traversal

    store = tmp_path / "store"
    graph = EmbeddedGraph(store)
    try:
        g = traversal().with_remote(EmbeddedRemoteConnection(graph))
        for n in range(50):
            g.add_v("table").property("qualifiedName", f"dw.t{n}").iterate()
    finally:
        graph.close()  # writes a snapshot
    assert {path.suffix for path in store.iterdir()} >= {".snap", ".log"}
    _assert_private(store)


def test_load_state_and_its_rejected_file_are_private(tmp_path: Path) -> None:
    state = LoadState(tmp_path / "state", "key").create()
    state.mark_done(0, {"batch": 0})
    state.baseline(lambda: {"vertices": 0})
    state.write_rejected([{"source": "q.jsonl", "line": 1, "reason": "bad", "raw": "x"}])
    _assert_private(tmp_path / "state")


def test_import_bad_lines_relay_checkpoint_and_key_store_are_private(tmp_path: Path) -> None:
    from lineage_platform.graph import connect

    source = tmp_path / "graph.json"
    source.write_text('{"broken\n')
    bad = tmp_path / "graph.bad.jsonl"
    import_graph(connect("memory:"), source, bad_lines_file=bad)
    checkpoint = tmp_path / "relay.json"
    RelayCheckpoint(checkpoint, "store").save(7)
    keys = LocalKeyStore.write(tmp_path / "keys.json", {"pii": [os.urandom(32)]})
    assert json.loads(checkpoint.read_text())["scn"] == 7
    assert [_mode(path) for path in (bad, checkpoint, keys)] == [0o600] * 3
