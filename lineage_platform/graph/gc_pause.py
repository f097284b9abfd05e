"""Pausing Python's cyclic garbage collector around work that allocates many short-lived objects.

The collector runs when allocations outnumber deallocations; every third pass or so it scans the whole heap, and
next to a graph held in memory (millions of long-lived records) each such pass costs seconds. A traversal, a
store recovery or a trace building its result allocates a lot and frees it by reference counting; with the
collector paused they do not trigger those scans. Cyclic garbage made meanwhile is collected once it is back on.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC for the block (and turn it back on only if it was on).

    >>> with gc_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
