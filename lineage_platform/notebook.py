"""IPython extension: ``%load_ext lineage_platform.notebook`` registers the ``%gremlin`` and ``%%gremlin`` magics.

``%gremlin g.V().count().next()`` runs one line; a ``%%gremlin`` cell runs every statement of the cell and
returns the result of the last one. The graph is ``--graph URL`` when given, else the notebook's graph set with
``%lineage_graph URL``, else ``LINEAGE_GRAPH_URL`` when that is set; with none of them the magic refuses rather
than open an empty default graph. The first use of each graph prints which graph it is and where the choice came
from. ``%lineage_graph`` without a URL shows the current choice. Embedded and ``ws://`` graphs both work inside the
kernel's running event loop (the driver's transport runs on a thread of its own, see ``graph/transport.py``).
The result is a pandas DataFrame when it is tabular (vertices/edges as id/label/property rows, or maps whose
values are all scalars), the single value for ``next()``/``tryNext()``/``hasNext()``, else the list of results.
On the embedded engine, notebook variables can be used by name: ``%gremlin g.V().has('name', table_name)``.
"""

from __future__ import annotations

import os
import re
from typing import Any

import pandas as pd
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class

from lineage_platform.config import ENV_PREFIX
from lineage_platform.console.session import GremlinSession, StatementResult
from lineage_platform.console.tabular import tabulate
from lineage_platform.errors import LineageError

GRAPH_ENV = f"{ENV_PREFIX}GRAPH_URL"
NO_GRAPH = (
    f"no graph chosen: add --graph URL, or run %lineage_graph URL once, or set {GRAPH_ENV} "
    "(URL: embedded:PATH, memory: or ws://host:port/gremlin)"
)

_GRAPH_OPTION = re.compile(r"^\s*--graph(?:=|\s+)(\S+)")


def split_options(line: str) -> tuple[str | None, str]:
    """``--graph URL rest`` -> (URL, rest); the Gremlin text after the options is left untouched.

    >>> split_options("--graph memory: g.V().has('name', 'a b')")
    ('memory:', "g.V().has('name', 'a b')")
    """
    match = _GRAPH_OPTION.match(line)
    if match is None:
        return None, line.strip()
    return match.group(1), line[match.end() :].strip()


def notebook_value(results: list[StatementResult]) -> Any:
    """What a cell shows for its statements' results: see the module docstring."""
    if not results:
        return None
    last = results[-1]
    if last.single:
        return last.values[0]
    table = tabulate(last.values, scalar_cells_only=True)
    if table is None:
        return last.values
    return pd.DataFrame(table.rows, columns=table.columns)


@magics_class
class GremlinMagics(Magics):
    """The ``gremlin`` line and cell magic; keeps one session per graph URL."""

    def __init__(self, shell: InteractiveShell) -> None:
        super().__init__(shell)
        self.sessions: dict[str, GremlinSession] = {}
        self.graph_url: str | None = None  # set by %lineage_graph

    def chosen_graph(self, url: str | None) -> tuple[str, str]:
        """The graph URL a magic uses and where the choice came from; UsageError when nothing chose one."""
        if url:
            return url, "--graph"
        if self.graph_url:
            return self.graph_url, "%lineage_graph"
        if os.environ.get(GRAPH_ENV):
            return os.environ[GRAPH_ENV], GRAPH_ENV
        raise UsageError(NO_GRAPH)

    def session(self, url: str, origin: str) -> GremlinSession:
        """The open session for ``url``, connecting on first use and saying which graph that is."""
        if url not in self.sessions:
            self.sessions[url] = GremlinSession(url)
            print(f"gremlin: graph {url} (from {origin})")
        return self.sessions[url]

    @line_magic
    def lineage_graph(self, line: str) -> str:
        """``%lineage_graph URL`` sets the graph of the magics that have no ``--graph``; without URL, shows it."""
        url = line.strip()
        if url:
            self.graph_url = url
        return self.chosen_graph(None)[0]

    @line_cell_magic
    def gremlin(self, line: str, cell: str | None = None) -> Any:
        """Run Gremlin: ``%gremlin [--graph URL] TRAVERSAL`` or a ``%%gremlin [--graph URL]`` cell."""
        url, rest = split_options(line)
        text = rest if cell is None else cell
        if not text.strip():
            raise UsageError("no traversal given: %gremlin g.V().limit(5)  or a %%gremlin cell")
        try:
            session = self.session(*self.chosen_graph(url))
            bindings = None if session.is_remote else self.user_variables()
            return notebook_value(list(session.evaluate(text, bindings)))
        except LineageError as exc:
            raise UsageError(str(exc)) from exc

    def user_variables(self) -> dict[str, Any]:
        """The notebook's own variables (not IPython's ``_``, ``__``, ``In``, ``Out``...), usable by name in Gremlin."""
        hidden = self.shell.user_ns_hidden
        return {
            name: value
            for name, value in self.shell.user_ns.items()
            if not name.startswith("_") and name not in hidden
        }

    def close(self) -> None:
        """Close every session this extension opened."""
        for session in self.sessions.values():
            session.close()
        self.sessions.clear()


_loaded: list[GremlinMagics] = []


def load_ipython_extension(ipython: InteractiveShell) -> None:
    """Called by ``%load_ext lineage_platform.notebook``."""
    magics = GremlinMagics(ipython)
    ipython.register_magics(magics)
    _loaded.append(magics)


def unload_ipython_extension(ipython: InteractiveShell) -> None:
    """Called by ``%unload_ext``: close the sessions."""
    while _loaded:
        _loaded.pop().close()
