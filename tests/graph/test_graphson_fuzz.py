"""Fuzzing GraphSON lines: every random or adversarial line is read, refused with its line number and reason, or
imported; no exception escapes the reader, the schema check or an import with --skip-bad."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph_schema import load_schema
from lineage_platform.graph import connect
from lineage_platform.graph.graphson import GraphSONFormatError, check_schema, import_graph, parse_vertex_line
from tests.fuzz import cases

TABLE = {
    "id": {"@type": "g:Int64", "@value": 1},
    "label": "table",
    "properties": {
        "qualifiedName": [{"id": {"@type": "g:Int64", "@value": 10}, "value": "dw.t"}],
        "createTime": [
            {"id": {"@type": "g:Int64", "@value": 11}, "value": {"@type": "g:Int64", "@value": 1}}
        ],
    },
    "outE": {
        "flowsTo": [{"id": {"@type": "g:Int64", "@value": 20}, "inV": {"@type": "g:Int64", "@value": 2}}]
    },
}
PERSON = {
    "id": {"@type": "g:Int32", "@value": 2},
    "label": "person",
    "inE": {"knows": [{"id": {"@type": "g:Int32", "@value": 7}, "outV": {"@type": "g:Int32", "@value": 1}}]},
    "properties": {"name": [{"id": {"@type": "g:Int64", "@value": 0}, "value": "marko"}]},
}
SEEDS = [TABLE, PERSON, json.dumps(TABLE)]


def test_lines_are_read_or_refused_with_a_reason() -> None:
    schema = load_schema()
    for number, data in enumerate(cases(SEEDS, seed=7), start=1):
        text = data.decode("utf-8", errors="replace")
        try:
            vertex = parse_vertex_line(text, number)
        except GraphSONFormatError as exc:
            assert exc.line == number and exc.reason
            continue
        try:
            check_schema(vertex, schema)
        except ValueError as exc:
            assert str(exc)


@pytest.mark.parametrize("schema", [None, load_schema()], ids=["any-schema", "lineage-schema"])
def test_an_import_of_fuzzed_lines_keeps_every_bad_line_aside(tmp_path: Path, schema: object) -> None:
    lines = [
        data.decode("utf-8", errors="replace").replace("\n", " ") for data in cases(SEEDS, seed=8, count=400)
    ]
    source = tmp_path / "fuzzed.json"
    source.write_text("".join(line + "\n" for line in lines if line.strip()))
    bad = tmp_path / "bad.jsonl"
    summary = import_graph(connect("memory:"), source, bad_lines_file=bad, schema=schema)
    kept = [json.loads(row) for row in bad.read_text().splitlines()] if bad.exists() else []
    assert len(kept) == summary.skipped and all(row["reason"] for row in kept)
