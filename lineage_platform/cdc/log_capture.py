"""Change source 1: the embedded store's own change feed, its write-ahead log (nothing extra on the write path)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path

from lineage_platform.cdc.errors import BootstrapRequired
from lineage_platform.cdc.events import ChangeEvent, ops_to_events
from lineage_platform.cdc.store_snapshot import labels_as_of
from lineage_platform.errors import StoreCorruptError, StoreError
from lineage_platform.graph.changes import ChangeFeed


class LogCapture:
    """The committed transactions of an embedded store after ``after_scn``, as change events.

    Reads the log without the store's lock, so it can follow a store that `lineage graph serve` (or any
    other process) writes. Events carry the time they were captured: the log keeps no commit time.
    """

    def __init__(self, store: str | Path, after_scn: int = 0, *, graph: str | None = None) -> None:
        self.store = Path(store)
        self.graph = graph or self.store.name
        self.scn = after_scn
        self._labels = labels_as_of(self.store, after_scn)
        self._feed = ChangeFeed(self.store)

    @property
    def name(self) -> str:
        """Identity of this source, recorded in the relay checkpoint."""
        return f"log:{self.store.resolve()}"

    def poll(self, max_transactions: int) -> Iterator[tuple[int, list[ChangeEvent]]]:
        """``(scn, events)`` of up to ``max_transactions`` transactions committed since the last poll."""
        now_ms = time.time_ns() // 1_000_000
        try:
            for scn, ops in itertools.islice(self._feed.changes(self.scn), max_transactions):
                self.scn = scn
                yield scn, ops_to_events(self.graph, scn, ops, now_ms, self._labels)
        except StoreCorruptError:
            raise
        except StoreError as exc:
            oldest = self._feed.oldest_retained_scn()
            if oldest is None or oldest <= self.scn + 1:
                raise
            raise BootstrapRequired(
                f"the store's log no longer holds the changes after SCN {self.scn}: {exc.message}",
                hint="run the relay again with --start-scn set to the oldest retained SCN minus one, then "
                "bootstrap every subscriber again (`lineage cdc mirror --rebootstrap`)",
            ) from exc

    def acknowledge(self, scn: int) -> None:
        """Nothing to release: the store's retention decides when old log segments go."""
