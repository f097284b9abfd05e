"""The resumable state folder: input listing, fingerprints, batch markers, the side file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lineage_platform.errors import IngestError
from lineage_platform.ingest.state import LoadState, fingerprint, list_inputs


def _logs(root: Path) -> Path:
    (root / "logs" / "day1").mkdir(parents=True)
    (root / "logs" / "day1" / "a.jsonl").write_text("{}\n")
    (root / "logs" / "b.log").write_text("x\n")
    (root / "logs" / ".hidden").write_text("skip me\n")
    return root / "logs"


def test_list_inputs_walks_folders_and_skips_hidden_files(tmp_path: Path) -> None:
    folder = _logs(tmp_path)
    single = folder / "b.log"
    assert list_inputs([folder, single]) == [folder / "b.log", folder / "day1" / "a.jsonl"]


def test_list_inputs_names_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="no such file"):
        list_inputs([tmp_path / "missing"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(IngestError, match="no log files"):
        list_inputs([tmp_path / "empty"])


def test_fingerprint_follows_content_and_options(tmp_path: Path) -> None:
    files = list_inputs([_logs(tmp_path)])
    base = fingerprint(files, fmt="auto")
    assert fingerprint(files, fmt="auto") == base
    assert fingerprint(files, fmt="jsonl") != base
    files[0].write_text("changed, longer\n")
    assert fingerprint(files, fmt="auto") != base


def test_markers_record_done_batches_atomically(tmp_path: Path) -> None:
    state = LoadState(tmp_path, "abc").create()
    assert state.done() == set() and state.results() == []
    state.mark_done(3, {"batch": 3, "vertices": 7})
    state.mark_done(1, {"batch": 1, "vertices": 2})
    state.mark_done(1, {"batch": 1, "vertices": 2})
    assert state.done() == {1, 3}
    assert [result["batch"] for result in state.results()] == [1, 3]
    assert sorted(os.listdir(state.batches)) == ["00000001.json", "00000003.json"]  # no temporary files left
    assert LoadState(tmp_path, "abc").done() == {1, 3}  # another process sees the same


def test_rejected_side_file_is_jsonl(tmp_path: Path) -> None:
    state = LoadState(tmp_path, "abc").create()
    rows = [{"source": "a.jsonl", "line": 4, "reason": "not valid JSON", "raw": '{"sql'}]
    path = state.write_rejected(rows)
    assert [json.loads(line) for line in path.read_text().splitlines()] == rows
    assert state.write_rejected([]).read_text() == ""
