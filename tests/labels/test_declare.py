"""Declaring labels from YAML: line numbers in errors, conflicts rejected, nothing written on failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from lineage_platform.errors import LineageError
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.labels import Label, declare, load_declarations
from lineage_platform.labels.propagate import labels_of
from lineage_platform.sql import extract_lineage


@pytest.fixture
def users(g):
    LineageWriter(g).write(extract_lineage("INSERT INTO TABLE dw.t SELECT id, phone FROM ods.users"))
    return g


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "labels.yaml"
    path.write_text(text)
    return path


def test_yaml_declarations_are_written_with_their_origin(users, tmp_path: Path) -> None:
    g = users
    path = _write(
        tmp_path,
        "labels:\n  - name: ods.users\n    labels: [APP=douyin]\n  - name: ODS.users.phone\n    labels: [PII, SENSITIVITY=high]\n",
    )
    declarations = load_declarations(path)
    assert [(d.name, d.line) for d in declarations] == [("ods.users", 2), ("ods.users.phone", 4)]
    assert declare(g, declarations, declared_by="alice") == 3
    phone = labels_of(g, ["ods.users.phone"])["ods.users.phone"]
    assert {(str(t.label), t.origin, t.declared_by) for t in phone} == {
        ("PII", "declared", "alice"),
        ("SENSITIVITY=high", "declared", "alice"),
    }
    assert declare(g, declarations) == 3 and len(labels_of(g, ["ods.users.phone"])["ods.users.phone"]) == 2


def test_conflicting_single_valued_labels_name_both_lines_and_write_nothing(users, tmp_path: Path) -> None:
    g = users
    path = _write(
        tmp_path,
        "labels:\n  - name: ods.users.phone\n    labels: [PII]\n  - name: ods.users.phone\n    labels: [SENSITIVITY=high]\n"
        "  - name: ods.users.phone\n    labels: [SENSITIVITY=low]\n",
    )
    with pytest.raises(
        LineageError,
        match=r"line 6: ods.users.phone: SENSITIVITY=low conflicts with SENSITIVITY=high declared in line 4",
    ):
        declare(g, load_declarations(path))
    assert labels_of(g, ["ods.users.phone"]) == {}


def test_conflict_with_a_label_already_in_the_graph(users) -> None:
    g = users
    from lineage_platform.labels import Declaration

    declare(g, [Declaration("ods.users.phone", (Label("SENSITIVITY", "high"),))])
    with pytest.raises(LineageError, match="declared in the graph"):
        declare(g, [Declaration("ods.users.phone", (Label("SENSITIVITY", "low"),))])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("labels:\n  - name: ods.users\n    labels: [APP=douyin\n", "not valid YAML"),
        ("labels:\n  - name: ods.users\n", "line 2: each entry needs `name` and `labels`"),
        ("labels:\n  - name: ods.users\n    labels: PII\n", "line 2: `labels` must be a list"),
        ("labels:\n  - name: ods.users\n    labels: ['9bad']\n", "line 2: bad label '9bad'"),
        ("tables: []\n", "expected a top-level `labels:` list"),
    ],
)
def test_malformed_files_say_where(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(LineageError, match=message):
        load_declarations(_write(tmp_path, text))
