"""The compile cache: reusable compilers, each keeping the pipelines it compiled, shared by the executions of one
graph.

An execution of a traversal that has a shape (``shapes.py``: no writes, no side effects) takes an idle compiler
with the same settings (path tracking, source instructions) from the pool, runs on it and gives it back. The
compiler keeps its pipelines by shape, so the next execution of an equal traversal (in process or decoded from
a request) compiles nothing, and one that differs only in its own steps (another start vertex, another name)
compiles only those: its nested traversals are found by shape. A compiler serves one execution at a time (the
pool hands it to nobody else meanwhile), so pipelines whose steps keep state within an execution (a repeat()'s
seen vertices) are safe under concurrent requests.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

from gremlin_python.process.traversal import Bytecode

from lineage_platform.graph.embedded.cancel import Cancellation
from lineage_platform.graph.embedded.memgraph import MemGraph
from lineage_platform.graph.embedded.pipeline import Compiler, path_mode

IDLE_PER_SETTINGS = 4  # idle compilers kept per settings (more would only serve concurrent executions)
SETTINGS_KEPT = 64  # distinct settings (path tracking x source instructions) with idle compilers
SHAPES_KEPT = 1024  # traversal shapes whose path tracking mode is remembered
_UNKNOWN: Any = object()


class CompilerPool:
    """Idle reusable compilers by settings, and the path tracking mode of each traversal shape seen lately."""

    def __init__(self, graph: MemGraph) -> None:
        self._graph = graph
        self._idle: OrderedDict[Hashable, list[Compiler]] = OrderedDict()
        self._modes: OrderedDict[Hashable, str | None] = OrderedDict()
        self._lock = threading.Lock()

    def take(
        self, key: tuple[Hashable, Hashable], bytecode: Bytecode, cancellation: Cancellation
    ) -> tuple[Hashable, Compiler]:
        """A compiler for the traversal of shape ``key`` (see ``shapes.shape``), ready for its execution; give it
        back with its settings (the first item) when the execution ends."""
        with self._lock:
            mode = self._modes.get(key, _UNKNOWN)
            if mode is _UNKNOWN:
                mode = self._modes[key] = path_mode(bytecode)
                if len(self._modes) > SHAPES_KEPT:
                    self._modes.popitem(last=False)
            settings = (mode, key[0])
            idle = self._idle.get(settings)
            compiler = idle.pop() if idle else None
        if compiler is None:
            compiler = Compiler(
                self._graph, track_paths=mode, mutating=False, cancellation=cancellation, reusable=True
            )
        else:
            compiler.reset(cancellation)
        return settings, compiler

    def give_back(self, settings: Hashable, compiler: Compiler) -> None:
        """Return a compiler whose execution ended (kept idle unless enough are)."""
        with self._lock:
            idle = self._idle.get(settings)
            if idle is None:
                idle = self._idle[settings] = []
                if len(self._idle) > SETTINGS_KEPT:
                    self._idle.popitem(last=False)
            else:
                self._idle.move_to_end(settings)
            if len(idle) < IDLE_PER_SETTINGS:
                idle.append(compiler)
