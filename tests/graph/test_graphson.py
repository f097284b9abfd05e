"""GraphSON 3.0 lines, and export/import through traversals on the embedded engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from gremlin_python.process.anonymous_traversal import traversal

from lineage_platform.cli import cli
from lineage_platform.errors import GraphBusyError, GraphError
from lineage_platform.graph.connect import EmbeddedRemoteConnection, connect
from lineage_platform.graph.embedded.engine import EmbeddedGraph
from lineage_platform.graph.graphson import (
    EdgeRecord,
    GraphSONFormatError,
    IdStrategy,
    PropertyRecord,
    VertexRecord,
    export_graph,
    format_vertex_line,
    import_graph,
    parse_vertex_line,
)

DATA = Path(__file__).resolve().parents[3] / "shared" / "tinkerpop-features" / "data"
# TinkerPop's sample graphs (person, software, ...) are not lineage graphs: open the embedded schema for them
pytestmark = [
    pytest.mark.skipif(not DATA.is_dir(), reason="TinkerPop data graphs not present"),
    pytest.mark.usefixtures("open_schema"),
]
DATA_FILES = ["tinkerpop-modern.json", "tinkerpop-classic.json", "tinkerpop-crew.json", "tinkerpop-sink.json"]


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list | set):
        return tuple(sorted(map(repr, value)))
    return value


def graph_elements(path: Path, *, with_ids: bool = True) -> tuple[dict, dict]:
    """Vertices and edges of a GraphSON file, keyed by id (or by name when ids are not kept)."""
    vertices, edges = {}, {}
    records = [parse_vertex_line(line) for line in path.read_text().splitlines() if line.strip()]
    names = {r.id: next((p.value for p in r.properties if p.key == "name"), r.id) for r in records}
    for record in records:
        # vertex-property ids count only when element ids are kept (otherwise the graph chooses them)
        props = sorted(
            (p.key, repr(p.value), _freeze(p.meta), p.id if with_ids else None) for p in record.properties
        )
        vertices[record.id if with_ids else names[record.id]] = (record.label, props)
        for edge in record.out_edges:
            ends = (record.id, edge.other) if with_ids else (names[record.id], names[edge.other])
            key = edge.id if with_ids else (*ends, edge.label, _freeze(edge.properties))
            edges[key] = (edge.label, ends, _freeze(edge.properties))
    return vertices, edges


@pytest.mark.parametrize("name", [*DATA_FILES, "grateful-dead.json"])
def test_lines_read_and_write_back_to_the_same_json(name):
    for number, line in enumerate((DATA / name).read_text().splitlines(), start=1):
        assert json.loads(format_vertex_line(parse_vertex_line(line, number))) == json.loads(line)


def test_typed_values_are_decoded():
    line = (
        '{"id":{"@type":"g:Int64","@value":5},"label":"x","properties":{"p":[{"id":{"@type":"g:Int64","@value":1},'
        '"value":{"@type":"g:List","@value":[{"@type":"g:Double","@value":1.5},'
        '{"@type":"g:UUID","@value":"41d2e28a-20a4-4ab0-b379-d810dede3786"}]}}]}}'
    )
    record = parse_vertex_line(line)
    assert record.id == 5 and record.properties[0].value[0] == 1.5
    assert str(record.properties[0].value[1]) == "41d2e28a-20a4-4ab0-b379-d810dede3786"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": 1, "label": ', "not JSON"),
        ('{"label": "person"}', "not a vertex"),
        (
            '{"id":1,"label":"x","properties":{"p":[{"value":{"@type":"g:Nope","@value":1}}]}}',
            "malformed vertex: ValueError: unknown GraphSON type .g:Nope.",
        ),
        ('{"id":1,"label":"x","outE":{"knows":[{"id":2}]}}', "malformed vertex"),
    ],
)
def test_bad_lines_say_which_line_and_why(line, message):
    with pytest.raises(GraphSONFormatError, match=rf"line 7: {message}") as raised:
        parse_vertex_line(line, 7)
    assert raised.value.line == 7 and raised.value.hint


@pytest.mark.parametrize("name", DATA_FILES)
def test_import_then_export_round_trips_element_by_element(name, tmp_path):
    g = connect("memory:")
    summary = import_graph(g, DATA / name, batch_size=4)
    exported = tmp_path / "out.json"
    written = export_graph(g, exported, batch_size=3)
    assert (summary.vertices, summary.edges) == (written.vertices, written.edges)
    assert graph_elements(exported) == graph_elements(DATA / name)


def test_generated_ids_keep_the_structure(tmp_path):
    g = connect("memory:")
    summary = import_graph(g, DATA / "tinkerpop-crew.json", id_strategy=IdStrategy.GENERATE, batch_size=5)
    assert (summary.vertices, summary.edges) == (6, 14)
    exported = tmp_path / "out.json"
    export_graph(g, exported)
    assert graph_elements(exported, with_ids=False) == graph_elements(
        DATA / "tinkerpop-crew.json", with_ids=False
    )


def test_large_batches_go_in_one_request(tmp_path):
    chain = tmp_path / "chain.json"
    lines = []
    for i in range(1500):
        vertex = VertexRecord(id=i, label="step", properties=[PropertyRecord(None, "name", f"s{i}")])
        if i + 1 < 1500:
            vertex.out_edges.append(EdgeRecord(id=10_000 + i, label="next", other=i + 1))
        lines.append(format_vertex_line(vertex))
    chain.write_text("\n".join(lines) + "\n")
    g = connect("memory:")
    summary = import_graph(g, chain, batch_size=1500)
    assert (summary.vertices, summary.edges) == (1500, 1499)
    assert g.V(0).out("next").out("next").values("name").next() == "s2"


@pytest.mark.slow
def test_grateful_dead_counts():
    g = connect("memory:")
    summary = import_graph(g, DATA / "grateful-dead.json", batch_size=200)
    assert (summary.vertices, summary.edges, summary.skipped) == (808, 8049, 0)
    assert g.V().count().next() == 808 and g.E().count().next() == 8049
    dark_star = next(
        parse_vertex_line(line)
        for line in (DATA / "grateful-dead.json").read_text().splitlines()
        if '"value":"DARK STAR"' in line
    )
    followed_by = sorted(e.other for e in dark_star.out_edges if e.label == "followedBy")
    assert len(followed_by) > 10
    assert sorted(g.V(dark_star.id).out("followedBy").id_().to_list()) == followed_by


def _file_with_bad_lines(tmp_path: Path) -> Path:
    lines = (DATA / "tinkerpop-modern.json").read_text().splitlines()
    lines = [line for line in lines if '"value":"vadas"' not in line]  # vadas gone: marko's edge to 2 dangles
    lines.insert(2, "{broken")  # line 3, between lop and josh
    path = tmp_path / "modern-bad.json"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("options", "message"),
    [({"id_strategy": "reuse"}, "unknown id strategy"), ({"batch_size": 0}, "batch size must be at least 1")],
)
def test_bad_options_are_refused_before_writing(options, message):
    g = connect("memory:")
    with pytest.raises(GraphError, match=message):
        import_graph(g, DATA / "tinkerpop-modern.json", **options)
    assert g.V().count().next() == 0


def test_bad_line_stops_the_import_without_skip_bad(tmp_path):
    with pytest.raises(GraphSONFormatError, match="line 3: not JSON"):
        import_graph(connect("memory:"), _file_with_bad_lines(tmp_path))


def test_skip_bad_keeps_bad_lines_aside_and_goes_on(tmp_path):
    g = connect("memory:")
    side = tmp_path / "bad.jsonl"
    summary = import_graph(g, _file_with_bad_lines(tmp_path), bad_lines_file=side)
    assert (summary.vertices, summary.edges, summary.skipped) == (5, 5, 2)
    kept = [json.loads(line) for line in side.read_text().splitlines()]
    assert [k["line"] for k in kept] == [3, 1]
    assert "not JSON" in kept[0]["reason"] and kept[0]["text"] == "{broken"
    assert "goes to vertex 2" in kept[1]["reason"]
    assert g.V().has("name", "marko").out("knows").values("name").to_list() == ["josh"]


def test_a_busy_graph_stops_the_import_and_files_no_good_line(tmp_path):
    graph = EmbeddedGraph(None, lock_timeout=0.2)
    g = traversal().with_remote(EmbeddedRemoteConnection(graph))
    holder = g.tx()  # another client's open transaction holds the graph
    holder.begin().add_v("person").iterate()
    side = tmp_path / "bad.jsonl"
    try:
        with pytest.raises(GraphBusyError, match="graph busy"):
            import_graph(g, DATA / "tinkerpop-modern.json", bad_lines_file=side)
    finally:
        holder.rollback()
    assert not side.exists() or side.read_text() == ""
    assert import_graph(g, DATA / "tinkerpop-modern.json").vertices == 6  # the retry the error asks for


def test_cli_import_and_export(tmp_path):
    url = f"embedded:{tmp_path / 'store'}"
    runner = CliRunner()
    imported = runner.invoke(
        cli,
        [
            "graph",
            "import",
            str(DATA / "tinkerpop-crew.json"),
            "--graph",
            url,
            "--batch-size",
            "2",
            "--any-schema",
        ],
    )
    assert imported.exit_code == 0, imported.output
    assert "imported 6 vertices and 14 edges" in imported.output
    out = tmp_path / "crew.json"
    exported = runner.invoke(cli, ["graph", "export", str(out), "--graph", url])
    assert exported.exit_code == 0, exported.output
    assert "exported 6 vertices and 14 edges" in exported.output
    assert graph_elements(out) == graph_elements(DATA / "tinkerpop-crew.json")


def test_cli_import_skip_bad_reports_the_side_file(tmp_path):
    source = _file_with_bad_lines(tmp_path)
    result = CliRunner().invoke(
        cli, ["graph", "import", str(source), "--graph", "memory:", "--skip-bad", "--any-schema"]
    )
    assert result.exit_code == 0, result.output
    side = source.with_name(source.name + ".bad.jsonl")
    assert f"2 bad lines kept in {side}" in result.output.replace("\n", "")
    assert len(side.read_text().splitlines()) == 2


def test_round_trip_through_a_gremlin_server_with_generated_ids(tmp_path):
    from gremlin_python.driver.driver_remote_connection import DriverRemoteConnection
    from gremlin_python.process.anonymous_traversal import traversal

    from lineage_platform.graph.embedded.engine import EmbeddedGraph
    from lineage_platform.graph.embedded.server.server import BackgroundServer

    with BackgroundServer(EmbeddedGraph()) as server:
        connection = DriverRemoteConnection(server.url, "g")
        g = traversal().with_remote(connection)
        # modern, not crew: the server cannot yet read Cardinality.list_ from GraphBinary (KeyError 'list')
        summary = import_graph(
            g, DATA / "tinkerpop-modern.json", id_strategy=IdStrategy.GENERATE, batch_size=4
        )
        exported = tmp_path / "modern.json"
        export_graph(g, exported)
        connection.close()
    assert (summary.vertices, summary.edges) == (6, 6)
    assert graph_elements(exported, with_ids=False) == graph_elements(
        DATA / "tinkerpop-modern.json", with_ids=False
    )


# ---- hostile files: resumable, idempotent, every bad line refused with its reason ----------------------


def _exported(g: Any, tmp_path: Path, name: str) -> tuple[dict, dict]:
    out = tmp_path / name
    export_graph(g, out)
    return graph_elements(out)


def test_running_the_import_again_after_a_kill_completes_the_graph(tmp_path):
    """A kill leaves the vertices and edges of the first lines; the same import run again completes the graph."""
    source = DATA / "tinkerpop-crew.json"
    lines = source.read_text().splitlines()
    cut = tmp_path / "cut.json"
    cut.write_text("\n".join(lines[:5]) + "\n")
    g = connect("memory:")
    import_graph(g, cut, bad_lines_file=tmp_path / "cut.bad")  # the edges to later lines are kept aside
    assert g.V().count().next() == 5 and g.E().count().next() > 0
    import_graph(g, source)
    again = import_graph(g, source)
    assert (again.vertices, again.edges) == (6, 14)
    assert _exported(g, tmp_path, "resumed.json") == graph_elements(source)


def test_with_generated_ids_vertices_are_matched_by_qualified_name(tmp_path):
    """Generated ids differ from the file's: a re-run finds the vertices by label and qualifiedName instead."""
    names = ["dw.a", "dw.b", "dw.c"]
    lines = [
        {
            "id": n,
            "label": "table",
            "properties": {"qualifiedName": [{"id": 10 + n, "value": name}]},
            **({"outE": {"flowsTo": [{"id": 20 + n, "inV": n + 1}]}} if n < 2 else {}),
        }
        for n, name in enumerate(names)
    ]
    source = tmp_path / "tables.json"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    g = connect("memory:")
    for _ in range(2):
        import_graph(g, source, id_strategy=IdStrategy.GENERATE)
    assert sorted(g.V().values("qualifiedName").to_list()) == names
    assert g.E().count().next() == 2


def test_fixing_the_bad_lines_and_importing_again_restores_the_missing_edges(tmp_path):
    g = connect("memory:")
    broken = _file_with_bad_lines(tmp_path)
    assert import_graph(g, broken, bad_lines_file=tmp_path / "bad.jsonl").skipped == 2
    import_graph(g, DATA / "tinkerpop-modern.json")
    assert _exported(g, tmp_path, "fixed.json") == graph_elements(DATA / "tinkerpop-modern.json")


HOSTILE_LINES = {
    '{"id":{"@type":"g:Map","@value":["a"]},"label":"person"}': "malformed vertex",
    '{"@type":"g:Map","@value":["a"]}': "not a vertex",
    "[" * 100_000 + "]" * 100_000: "nested too deep",
    '{"id":' * 50_000 + "1" + "}" * 50_000: "nested too deep",
    '{"id":{"@type":"g:Int64","@value":1180591620717411303424},"label":"person"}': "does not fit the 64-bit",
    '{"id":{"@type":"g:Int32","@value":2147483648},"label":"person"}': "does not fit the 32-bit",
    '{"id":1,"label":{"a":1}}': "not a vertex",
    '{"id":7,"label":"person","properties":{"age":[{"id":1,"value":{"@type":"g:Int64","@value":"x"}}]}}': "not an "
    "integer",
}


def test_hostile_lines_are_kept_aside_with_their_reason(tmp_path):
    source = tmp_path / "hostile.json"
    good = (DATA / "tinkerpop-modern.json").read_text().splitlines()
    source.write_text("\n".join([*HOSTILE_LINES, *good]) + "\n")
    g = connect("memory:")
    summary = import_graph(g, source, bad_lines_file=tmp_path / "bad.jsonl")
    assert (summary.vertices, summary.edges, summary.skipped) == (6, 6, len(HOSTILE_LINES))
    kept = [json.loads(line) for line in (tmp_path / "bad.jsonl").read_text().splitlines()]
    assert [row["line"] for row in kept] == list(range(1, len(HOSTILE_LINES) + 1))
    for row, reason in zip(kept, HOSTILE_LINES.values(), strict=True):
        assert reason in row["reason"], row["reason"]


def test_the_lineage_schema_refuses_unknown_labels_and_values_of_the_wrong_type(tmp_path):
    from graph_schema import load_schema

    table = {"id": 1, "label": "table", "properties": {"qualifiedName": [{"id": 10, "value": "dw.t"}]}}
    lines = [
        table,
        {"id": 2, "label": "person"},
        {**table, "id": 3, "outE": {"knows": [{"id": 30, "inV": 1}]}},
        {
            "id": 4,
            "label": "table",
            "properties": {"createTime": [{"id": 40, "value": {"@type": "g:Int64", "@value": 2**62}}]},
        },
        {"id": 5, "label": "table", "properties": {"createTime": [{"id": 50, "value": "yesterday"}]}},
    ]
    source = tmp_path / "lineage.json"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    g = connect("memory:")
    summary = import_graph(g, source, bad_lines_file=tmp_path / "bad.jsonl", schema=load_schema())
    assert (summary.vertices, summary.skipped) == (2, 3)
    reasons = [json.loads(line)["reason"] for line in (tmp_path / "bad.jsonl").read_text().splitlines()]
    assert reasons == [
        "unknown vertex label 'person'",
        "unknown edge label 'knows'",
        "property 'createTime' is 'yesterday', which is not a Long",
    ]
