"""Pausing Python's cyclic garbage collector around work that allocates many short-lived objects next to a large,
long-lived graph: with it on, every few hundred allocations the collector scans the young objects still alive (the
traversal or batch in hand) and, as the heap grows, the whole graph again."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC for the block (reference counting still frees what is not cyclic); it is back on after the
    block if it was on before, and cyclic garbage made meanwhile is collected then.

    The embedded engine pauses it for each execution and for opening a store (bulk loads run ~3x faster), the
    lineage writer for each write of a batch of statements, ``trace()`` while it builds its result. Blocks on several threads are harmless: the GC may come
    back on early, never stays off.

    >>> import gc
    >>> with gc_paused():
    ...     gc.isenabled()
    False
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
