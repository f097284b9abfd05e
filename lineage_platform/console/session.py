"""Evaluate Gremlin text against one graph, statement by statement.

The embedded engine (``embedded:``/``memory:`` URLs) gets bytecode: the text is parsed by
``graph.gremlin_text`` and each statement runs on the ``GraphTraversalSource`` from ``graph.connect``.
A Gremlin Server (``ws://``) gets the script text itself, so everything its Groovy engine accepts works.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gremlin_python.process.graph_traversal import GraphTraversal
from gremlin_python.process.traversal import Bytecode

from lineage_platform.config import load_settings
from lineage_platform.errors import TraversalError, UnsupportedStepError
from lineage_platform.graph import backend_facts, connect
from lineage_platform.graph.connect import script_client
from lineage_platform.graph.gremlin_text import ParsedTraversal, parse_script


@dataclass(frozen=True)
class StatementResult:
    """What one statement produced. ``single`` is set for ``next()``/``tryNext()``/``hasNext()``,
    whose one value is the answer itself rather than a list."""

    values: list[Any]
    elapsed: float
    single: bool = False


def _distinct(values: list[Any]) -> list[Any]:
    """``toSet()`` results in first-seen order; works for unhashable results such as maps."""
    distinct: list[Any] = []
    seen: set[Any] = set()
    for value in values:
        try:
            if value in seen:
                continue
            seen.add(value)
        except TypeError:  # maps and lists: compare with what was kept so far
            if value in distinct:
                continue
        distinct.append(value)
    return distinct


def _next(traversal: GraphTraversal, *amount: int) -> tuple[list[Any], bool]:
    if amount:
        return traversal.next(*amount), False
    if not traversal.has_next():
        raise TraversalError(
            "next() found no result", hint="use tryNext() or toList() when there may be none"
        )
    return [traversal.next()], True


def _explain(_traversal: GraphTraversal) -> tuple[list[Any], bool]:
    raise UnsupportedStepError(
        "explain() is not available from this console", hint="run the traversal without explain()"
    )


def _iterate(traversal: GraphTraversal) -> tuple[list[Any], bool]:
    traversal.iterate()
    return [], False


_TERMINALS: dict[str | None, Callable[..., tuple[list[Any], bool]]] = {
    None: lambda t: (t.to_list(), False),
    "toList": lambda t: (t.to_list(), False),
    "toSet": lambda t: (_distinct(t.to_list()), False),
    "next": _next,
    "tryNext": lambda t: ([t.next() if t.has_next() else None], True),
    "hasNext": lambda t: ([t.has_next()], True),
    "iterate": _iterate,
    "explain": _explain,
}
"""How each terminal step is applied; a statement without one is iterated to a list, as in the Gremlin console."""


class GremlinSession:
    """A connection to one graph that evaluates Gremlin text.

    Args:
        url: graph URL (``embedded:PATH``, ``memory:``, ``ws://host:port/gremlin``); default: the configured one.
    """

    def __init__(self, url: str | None = None) -> None:
        self.url = url or load_settings().graph_url
        self._client: Any = None
        self._g: Any = None
        if backend_facts(self.url).shared:
            self._client = script_client(self.url)
        else:
            self._g = connect(self.url)

    @property
    def is_remote(self) -> bool:
        """True when statements go to a Gremlin Server as script text."""
        return self._client is not None

    def evaluate(self, text: str, bindings: Mapping[str, Any] | None = None) -> Iterator[StatementResult]:
        """Run the statements of ``text`` in order, yielding each one's result when it completes.

        On the embedded engine the whole text is parsed before anything runs, so a syntax error anywhere
        raises ``GremlinSyntaxError`` with nothing executed. A Gremlin Server evaluates the text as one
        script and answers with the result of its last statement.
        """
        if self._client is not None:
            started = time.perf_counter()
            values = self._client.submit(text, dict(bindings or {})).all().result()
            yield StatementResult(values, time.perf_counter() - started)
            return
        for statement in parse_script(text, bindings):
            started = time.perf_counter()
            values, single = self._run(statement)
            yield StatementResult(values, time.perf_counter() - started, single)

    def _run(self, statement: ParsedTraversal) -> tuple[list[Any], bool]:
        if (
            statement.bytecode.source_instructions[:1]
            and statement.bytecode.source_instructions[0][0] == "tx"
        ):
            return [], False  # every statement already commits on its own: nothing is pending
        traversal = GraphTraversal(self._g.graph, self._g.traversal_strategies, Bytecode(statement.bytecode))
        return _TERMINALS[statement.terminal](traversal, *statement.terminal_args)

    def close(self) -> None:
        """Close the Gremlin Server connection (embedded graphs stay open for the process)."""
        if self._client is not None:
            self._client.close()
