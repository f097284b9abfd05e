"""The interactive Gremlin console (``lineage gremlin``) and its script mode (``lineage gremlin FILE``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from lineage_platform.config import DEFAULT_HOME
from lineage_platform.console.display import show_error, show_result, show_timing
from lineage_platform.console.session import GremlinSession
from lineage_platform.graph.gremlin_text.tokenizer import needs_more_input

PROMPT = "gremlin> "
CONTINUATION = "......> "
HISTORY_FILE = DEFAULT_HOME / "history"
HISTORY_LENGTH = 1000

HELP = """\
Type a traversal, e.g. g.V().hasLabel('table').values('qualifiedName').
Input continues on the next line while a bracket or quote is open or the line ends with '.'.
Several statements may be separated by ';'.

  :help              this text
  :quit              leave the console (also Ctrl-D)
  :timing on|off     print each statement's time and result count
  :remote            show the graph this console talks to
"""


class GremlinConsole:
    """Reads statements, evaluates them on a :class:`GremlinSession` and prints results or one-line errors."""

    def __init__(self, session: GremlinSession, out: Console, err: Console) -> None:
        self.session = session
        self.out = out
        self.err = err
        self.timing = False

    def run_text(self, text: str) -> bool:
        """Evaluate every statement of ``text``; False (after printing why) when one fails."""
        try:
            for result in self.session.evaluate(text):
                show_result(self.out, result)
                if self.timing:
                    show_timing(self.out, result)
        except Exception as exc:  # a console reports any failure as one line and carries on
            show_error(self.err, exc)
            return False
        return True

    def command(self, line: str) -> bool:
        """Handle a ``:command``; False when the console should stop."""
        name, _, argument = line[1:].strip().partition(" ")
        argument = argument.strip()
        if name in ("quit", "exit", "q"):
            return False
        if name == "help":
            self.out.print(HELP, markup=False, highlight=False)
        elif name == "timing" and argument in ("on", "off"):
            self.timing = argument == "on"
            self.out.print(f"timing {argument}", highlight=False)
        elif name == "remote":
            kind = "Gremlin Server (script evaluation)" if self.session.is_remote else "embedded engine"
            self.out.print(f"{self.session.url}  [{kind}]", markup=False, highlight=False)
        else:
            show_error(self.err, ValueError(f"unknown command {line.strip()!r}; :help lists the commands"))
        return True

    def read_statement(self, read_line: Callable[[str], str]) -> str:
        """One command line, or the lines of one statement (reading on while it is unfinished)."""
        lines = [read_line(PROMPT)]
        if lines[0].lstrip().startswith(":"):
            return lines[0].strip()
        while needs_more_input("\n".join(lines)):
            lines.append(read_line(CONTINUATION))
        return "\n".join(lines)

    def interact(self, read_line: Callable[[str], str] = input) -> None:
        """The read-eval-print loop; ends on ``:quit`` or end of input."""
        while True:
            try:
                text = self.read_statement(read_line)
                if text.startswith(":"):
                    if not self.command(text):
                        return
                elif text.strip():
                    self.run_text(text)
            except EOFError:
                self.out.print()
                return
            except KeyboardInterrupt:
                self.out.print("\n(interrupted)", style="dim")


def _enable_history(path: Path) -> Callable[[], None]:
    """Load line-editing history from ``path``; returns the function that saves it."""
    import readline

    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        readline.read_history_file(path)
    readline.set_history_length(HISTORY_LENGTH)
    return lambda: readline.write_history_file(path)


def run_console(
    url: str | None = None,
    history_file: Path = HISTORY_FILE,
    out: Console | None = None,
    err: Console | None = None,
) -> None:
    """Start the interactive console on the graph at ``url`` (default: the configured graph); results go to
    ``out``, errors to ``err`` (default: rich consoles on stdout and stderr)."""
    session = GremlinSession(url)
    out = out or Console()
    out.print(
        f"lineage gremlin console on {session.url} — :help for commands, :quit to leave", highlight=False
    )
    save_history = _enable_history(history_file)
    try:
        GremlinConsole(session, out, err or Console(stderr=True)).interact()
    finally:
        save_history()
        session.close()


def run_script(
    script: Path, url: str | None = None, out: Console | None = None, err: Console | None = None
) -> bool:
    """Run a Gremlin script file, printing each statement's results; False when a statement failed.

    On the embedded engine the script is parsed first, so a syntax error runs nothing; execution stops at
    the first failing statement.
    """
    session = GremlinSession(url)
    try:
        return GremlinConsole(session, out or Console(), err or Console(stderr=True)).run_text(
            script.read_text(encoding="utf-8")
        )
    finally:
        session.close()
