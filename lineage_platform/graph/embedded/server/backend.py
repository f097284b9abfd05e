"""What the server needs from a graph: the embedded engine's execute/begin/close surface."""

from __future__ import annotations

from typing import Protocol

from gremlin_python.process.traversal import Bytecode, Traverser

from lineage_platform.graph.embedded.cancel import Cancellation


class Transaction(Protocol):
    """A graph transaction; it holds the graph's write lock until it commits or rolls back."""

    @property
    def is_open(self) -> bool:
        """False once committed or rolled back."""
        ...

    def commit(self) -> None:
        """Make the transaction's writes durable and visible; release the lock."""
        ...

    def rollback(self) -> None:
        """Discard the transaction's writes; release the lock."""
        ...


class GraphBackend(Protocol):
    """A graph that executes bytecode, e.g. ``lineage_platform.graph.embedded.engine.EmbeddedGraph``."""

    def execute(
        self, bytecode: Bytecode, tx: Transaction | None = None, cancellation: Cancellation | None = None
    ) -> list[Traverser]:
        """Run one traversal; without ``tx`` it commits on its own (autocommit). Once ``cancellation`` is
        cancelled it stops, rolls back (the whole ``tx``) and raises TraversalInterrupted."""
        ...

    def begin(self) -> Transaction:
        """Open a transaction, waiting for the graph lock."""
        ...

    def close(self) -> None:
        """Release the store."""
        ...
