"""The Gremlin console: evaluation on the embedded engine, result layout, the REPL, script mode, a real terminal."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from gremlin_python.driver.protocol import GremlinServerError
from gremlin_python.process.traversal import T
from gremlin_python.structure.graph import Edge, Property, Vertex, VertexProperty
from gremlin_python.structure.graph import Path as GraphPath
from rich.console import Console

from lineage_platform.cli import invoke
from lineage_platform.console import GremlinSession, StatementResult
from lineage_platform.console.display import format_value, show_result
from lineage_platform.console.repl import CONTINUATION, PROMPT, GremlinConsole
from lineage_platform.console.tabular import Table, tabulate
from lineage_platform.errors import GremlinSyntaxError, TraversalError
from tests.conftest import REPO

# console mechanics on a toy graph (table -usedBy-> table is no lineage shape): the schema is left open
pytestmark = pytest.mark.usefixtures("open_schema")

SEED = """
g.addV('table').property('name', 'orders').property('qualifiedName', 'dw.orders').as('o').
  addV('table').property('name', 'report').property('qualifiedName', 'dw.report').as('r').
  addE('usedBy').from('o').to('r').iterate()
"""


@pytest.fixture
def session() -> GremlinSession:
    """A session on a fresh in-memory graph holding two tables and one edge."""
    session = GremlinSession("memory:")
    list(session.evaluate(SEED))
    return session


def run(session: GremlinSession, text: str) -> list:
    return [result.values for result in session.evaluate(text)]


# ---- evaluation --------------------------------------------------------------------------------------------


def test_statements_run_in_order_on_the_embedded_engine(session: GremlinSession) -> None:
    assert run(session, "g.V().hasLabel('table').values('name').order(); g.E().count()") == [
        ["orders", "report"],
        [1],
    ]


def test_terminal_steps(session: GremlinSession) -> None:
    results = list(
        session.evaluate("g.V().count().next(); g.V().limit(1).hasNext(); g.V().has('name', 'x').tryNext()")
    )
    assert [(r.values, r.single) for r in results] == [([2], True), ([True], True), ([None], True)]
    assert run(session, "g.V().values('name').order().next(1)") == [["orders"]]
    assert run(session, "g.V().label().toSet()") == [["table"]]
    assert run(session, "g.V().valueMap('name').by(constant(1)).toSet()") == [[{"name": 1}]]
    assert run(session, "g.addV('process').iterate(); g.V().count()") == [[], [3]]


def test_next_without_result_is_a_traversal_error(session: GremlinSession) -> None:
    with pytest.raises(TraversalError, match="next\\(\\) found no result"):
        run(session, "g.V().has('name', 'missing').next()")


def test_syntax_error_runs_nothing(session: GremlinSession) -> None:
    with pytest.raises(GremlinSyntaxError, match="unknown step 'outt'"):
        run(session, "g.addV('table').iterate()\ng.V().outt()")
    assert run(session, "g.V().count()") == [[2]]


def test_bindings_reach_the_traversal(session: GremlinSession) -> None:
    text = "g.V().has('qualifiedName', qn).out('usedBy').values('name')"
    assert run_with(session, text, {"qn": "dw.orders"}) == [["report"]]


def run_with(session: GremlinSession, text: str, bindings: dict) -> list:
    return [result.values for result in session.evaluate(text, bindings)]


def test_transaction_statements_are_accepted(session: GremlinSession) -> None:
    assert run(session, "g.tx().commit()") == [[]]


@pytest.mark.slow
def test_remote_server_gets_the_script_text() -> None:
    from lineage_platform.graph.connect import open_embedded
    from lineage_platform.graph.embedded.server.server import BackgroundServer

    with BackgroundServer(open_embedded(None)) as server:
        remote = GremlinSession(server.url)
        try:
            assert remote.is_remote
            assert run(remote, "g.addV('table').property('name', 'x').iterate(); g.V().values('name')") == [
                ["x"]
            ]
            assert run_with(remote, "g.V().has('name', n).count()", {"n": "x"}) == [[1]]
            with pytest.raises(GremlinServerError, match="unknown step 'outt'"):
                run(remote, "g.V().outt()")
        finally:
            remote.close()


# ---- layout ------------------------------------------------------------------------------------------------


def test_elements_tabulate_with_property_columns() -> None:
    orders = Vertex(1, "table", [VertexProperty(10, "name", "orders", None)])
    tags = Vertex(2, "table", [VertexProperty(11, "tag", "a", None), VertexProperty(12, "tag", "b", None)])
    edge = Edge(3, orders, "usedBy", tags, [Property("weight", 0.5, None)])
    assert tabulate([orders, tags, edge]) == Table(
        ["id", "label", "outV", "inV", "name", "tag", "weight"],
        [
            [1, "table", None, None, "orders", None, None],
            [2, "table", None, None, None, ["a", "b"], None],
            [3, "usedBy", 1, 2, None, None, 0.5],
        ],
    )


def test_maps_tabulate_with_enum_keys_named() -> None:
    table = tabulate([{T.id: 1, T.label: "table", "name": ["orders"]}])
    assert table == Table(["id", "label", "name"], [[1, "table", ["orders"]]])
    assert tabulate([{T.id: 1, "name": ["orders"]}], scalar_cells_only=True) is None


@pytest.mark.parametrize("values", [[], [1, 2], [{"a": 1}, 2], [GraphPath([], [1])]])
def test_non_tabular_results(values: list) -> None:
    assert tabulate(values) is None


def test_format_value_uses_gremlin_console_notation() -> None:
    marko, vadas = Vertex(1, "person"), Vertex(2, "person")
    assert format_value(marko) == "v[1]"
    assert format_value(Edge(7, marko, "knows", vadas)) == "e[7][1-knows->2]"
    assert format_value(VertexProperty(5, "name", "marko", marko)) == "vp[name->marko]"
    assert format_value(GraphPath([[], []], [marko, "x"])) == "path[v[1], x]"
    assert format_value({T.label: [None, 1.5]}) == "{label: [null, 1.5]}"


def test_values_are_printed_literally_not_as_markup() -> None:
    out = io.StringIO()
    show_result(Console(file=out, width=120), StatementResult([{"[b]name": "[/x] [red]v"}], 0.0))
    show_result(Console(file=out, width=120), StatementResult(["[/x]"], 0.0))
    shown = out.getvalue()
    assert "[b]name" in shown and "[/x] [red]v" in shown and "==>[/x]" in shown


# ---- the read-eval-print loop ------------------------------------------------------------------------------


class ScriptedInput:
    """Feeds console input lines and records the prompts shown."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = iter(lines)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        try:
            return next(self.lines)
        except StopIteration:
            raise EOFError from None


def console_for(session: GremlinSession) -> tuple[GremlinConsole, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    console = GremlinConsole(session, Console(file=out, width=120), Console(file=err, width=120))
    return console, out, err


def test_repl_continues_unfinished_statements(session: GremlinSession) -> None:
    console, out, err = console_for(session)
    feed = ScriptedInput(
        ["g.V().hasLabel('table').", "  values('name').", "  order()", "g.V().has('name',", "'report')"]
    )
    console.interact(feed)
    assert feed.prompts == [PROMPT, CONTINUATION, CONTINUATION, PROMPT, CONTINUATION, PROMPT]
    assert "==>orders\n==>report\n" in out.getvalue()
    assert err.getvalue() == ""


def test_repl_tables_errors_and_commands(session: GremlinSession) -> None:
    console, out, err = console_for(session)
    feed = ScriptedInput(
        [
            ":timing on",
            "g.V().valueMap('name').by(unfold())",
            "g.V().outt()",
            ":remote",
            ":bogus",
            ":help",
            ":quit",
            "g.V().count()",
        ]
    )
    console.interact(feed)
    shown = out.getvalue()
    assert "name" in shown and "orders" in shown and "report" in shown
    assert "2 results in" in shown
    assert "memory:  [embedded engine]" in shown
    assert ":timing on|off" in shown
    errors = err.getvalue().splitlines()
    assert errors[0].startswith("Error: unknown step 'outt' at line 1, column 7")
    assert errors[1].startswith("Error: unknown command ':bogus'")
    assert "Traceback" not in err.getvalue()
    assert feed.prompts.count(PROMPT) == 7  # the statement after :quit is never read


# ---- script mode through the CLI -----------------------------------------------------------------------------


def test_script_mode_prints_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "lineage.groovy"
    script.write_text(SEED + "g.V().has('qualifiedName', 'dw.orders').out('usedBy').values('name')\n")
    result = invoke(["gremlin", "--graph", "memory:", str(script)])
    assert result.success, result.exception
    assert capsys.readouterr().out.strip() == "==>report"


def test_script_mode_fails_on_a_bad_statement(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "bad.groovy"
    script.write_text("g.V().count()\ng.V().has('name', 'none').next()\ng.V().count()\n")
    result = invoke(["gremlin", "--graph", "memory:", str(script)])
    assert not result.success
    captured = capsys.readouterr()
    assert captured.out.strip() == "==>0"  # the statement after the failing one does not run
    assert "Error: next() found no result" in captured.err


# ---- a real terminal -------------------------------------------------------------------------------------------


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[pexpect.spawn]:
    """`lineage gremlin` on a pseudo-terminal, with its own LINEAGE_HOME."""
    env = {**os.environ, "LINEAGE_HOME": str(tmp_path), "TERM": "dumb", "PYTHONPATH": str(REPO)}
    child = pexpect.spawn(
        sys.executable,
        ["-c", "from lineage_platform.cli import main; main()", "gremlin", "--graph", "memory:"],
        cwd=str(REPO),
        env=env,
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 200),
    )
    yield child
    child.close(force=True)


def test_terminal_session_with_history(terminal: pexpect.spawn, tmp_path: Path) -> None:
    terminal.expect_exact(PROMPT)
    terminal.sendline("g.addV('table').property('name', 'orders').")
    terminal.expect_exact(CONTINUATION)
    terminal.sendline("  iterate()")
    terminal.expect_exact(PROMPT)
    terminal.sendline("g.V().values('name')")
    terminal.expect_exact("==>orders")
    terminal.sendline("g.V().nope()")
    terminal.expect_exact("Error: unknown step 'nope'")
    terminal.expect_exact(PROMPT)
    terminal.sendline(":quit")
    terminal.expect(pexpect.EOF)
    terminal.wait()
    history = (tmp_path / "history").read_text()
    assert "g.V().values('name')" in history
