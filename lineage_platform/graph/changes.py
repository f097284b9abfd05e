"""The embedded store's committed changes, for change capture: the one door into graph.embedded from outside.

A durable embedded store numbers its committed transactions by SCN in its log. :class:`ChangeFeed` is that log as a
versioned change feed: ``changes(since_scn)`` yields the committed ``(scn, ops)`` after an SCN, continuing where the
previous call stopped when asked again from the last SCN it yielded. ``MemGraph`` and ``read_snapshot`` rebuild the
graph as of an SCN from the latest snapshot (``state_labels`` lists its element labels without rebuilding it). All of it reads the store's files without its lock, so it follows a
store that `lineage graph serve` (or any other process) writes; nothing outside ``graph/`` imports the engine's
modules directly.
"""

from __future__ import annotations

from collections.abc import Iterator
from os import PathLike
from pathlib import Path

from lineage_platform.graph.embedded.memgraph import MemGraph, state_labels
from lineage_platform.graph.embedded.storage import LogTail, oldest_retained_scn
from lineage_platform.graph.embedded.storage_format import read_snapshot

__all__ = ["ChangeFeed", "MemGraph", "read_snapshot", "state_labels"]


class ChangeFeed:
    """The committed transactions of the embedded store at ``store``, in SCN order."""

    def __init__(self, store: str | PathLike[str]) -> None:
        self.store = Path(store)
        self._tail: LogTail | None = None

    def changes(self, since_scn: int) -> Iterator[tuple[int, list[tuple]]]:
        """``(scn, ops)`` of each transaction committed after ``since_scn`` and complete now (0: from the oldest
        retained). Asked again from the last SCN it yielded, it reads only what was appended since. A missing store,
        or changes retention no longer holds, raise ``StoreError`` (see :meth:`oldest_retained_scn`)."""
        if self._tail is None or self._tail.scn != since_scn:
            self._tail = LogTail(self.store, since_scn)
        return self._tail.poll()

    def oldest_retained_scn(self) -> int | None:
        """The oldest SCN the log still holds (None while it holds no segment)."""
        return oldest_retained_scn(self.store)
