"""Cooperative cancellation of one execution, and its item budget.

A :class:`Cancellation` is checked by the steps whose work is unbounded or large: once per incoming traverser in
V()/E() and the navigation steps, once per iteration of repeat(), while barriers (fold, order, group, union,
tail, ...) collect or expand bulks, and while waiting for the graph lock. Another thread stops the execution
with :meth:`Cancellation.cancel` (the server does on evaluationTimeout); a deadline stops it on its own
(``g.with_('evaluationTimeout', ms)`` in process). The execution then raises :class:`TraversalInterrupted`,
which rolls back its writes and releases the graph lock like any failure.

``max_items`` bounds memory: no collection a step builds (a fold() list, a barrier's traversers, a repeat()
frontier, the result list) may hold more items; past it :meth:`Cancellation.check_size` raises
:class:`TraversalTooLarge` (the server sets it from ``--max-items``; None = no budget).
"""

from __future__ import annotations

import time

from lineage_platform.errors import TraversalInterrupted, TraversalTooLarge


class Cancellation:
    """A flag another thread may set, and an optional deadline; :meth:`check` raises once either is reached."""

    __slots__ = ("deadline", "max_items", "reason")

    def __init__(self, timeout: float | None = None, max_items: int | None = None) -> None:
        """timeout: seconds from now after which checks raise (None = only when cancelled); max_items: the
        most items one collection of the execution may hold (None = no budget)."""
        self.reason: str | None = None
        self.deadline: float | None = None
        self.max_items = max_items
        if timeout is not None:
            self.limit(timeout)

    def limit(self, timeout: float) -> None:
        """Stop at ``timeout`` seconds from now at the latest (an earlier deadline stays)."""
        deadline = time.monotonic() + timeout
        if self.deadline is None or deadline < self.deadline:
            self.deadline = deadline

    def cancel(self, reason: str = "the traversal was cancelled") -> None:
        """Make the next check raise with ``reason`` (safe to call from any thread, more than once)."""
        if self.reason is None:
            self.reason = reason

    def check(self) -> None:
        """Raise TraversalInterrupted when cancelled or past the deadline (cheap: called per traverser)."""
        if self.reason is None and (self.deadline is None or time.monotonic() < self.deadline):
            return
        self.cancel("the traversal exceeded its evaluation timeout")
        raise TraversalInterrupted(
            str(self.reason),
            hint="narrow the traversal (limit(), times(n), simplePath()) or raise the evaluation timeout",
        )

    def check_size(self, size: int, where: str) -> None:
        """Raise TraversalTooLarge when a collection built by ``where`` would hold ``size`` items, more than the
        budget; also checks for cancellation."""
        self.check()
        if self.max_items is not None and size > self.max_items:
            raise TraversalTooLarge(
                f"{where} would hold {size:,} items, more than the {self.max_items:,} one request may hold",
                hint="narrow the traversal (limit(), dedup(), a smaller times(n)) or ask the server's operator "
                "to raise --max-items",
            )
