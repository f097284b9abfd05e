"""EmbeddedGraph: executes gremlinpython bytecode in process, with TinkerGraph semantics, on an in-memory graph
made durable by the store's write-ahead log when a path is given."""

from __future__ import annotations

import copy
import gc
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gremlin_python.process.traversal import Bytecode, Traverser

from lineage_platform.errors import (
    GraphError,
    StoreError,
    TraversalError,
    TraversalInterrupted,
    UnsupportedStepError,
)
from lineage_platform.gc_pause import gc_paused
from lineage_platform.graph.embedded import (  # noqa: F401  (importing registers the steps)
    steps_branch,
    steps_date,
    steps_filter,
    steps_graph,
    steps_list,
    steps_map,
    steps_match,
    steps_math,
    steps_merge,
    steps_navigation,
    steps_reduce,
    steps_sack,
    steps_side_effect,
    steps_string,
)
from lineage_platform.graph.embedded.cancel import Cancellation
from lineage_platform.graph.embedded.compiler_pool import CompilerPool
from lineage_platform.graph.embedded.detach import PLAIN_VALUES, detach
from lineage_platform.graph.embedded.memgraph import MemGraph
from lineage_platform.graph.embedded.pipeline import (
    MUTATING_STEPS,
    SEED,
    Compiler,
    path_mode,
    uses_steps,
)
from lineage_platform.graph.embedded.shapes import shape, strategy_name
from lineage_platform.graph.embedded.strategy_views import VIEW_STRATEGIES, View, nested_bytecodes, view_of
from lineage_platform.graph.embedded.strict import SchemaRules
from lineage_platform.graph.embedded.transaction import GraphLock, Transaction

_log = logging.getLogger(__name__)

# Strategies that only optimise or verify on TinkerGraph: the engine gives the same answers without them.
_IGNORED_STRATEGIES = frozenset(
    {
        "ProductiveByStrategy",
        "SeedStrategy",
        "LazyBarrierStrategy",
        "RepeatUnrollStrategy",
        "PathRetractionStrategy",
        "IncidentToAdjacentStrategy",
        "FilterRankingStrategy",
        "InlineFilterStrategy",
        "MatchPredicateStrategy",
        "AdjacentToIncidentStrategy",
        "CountStrategy",
        "EarlyLimitStrategy",
        "IdentityRemovalStrategy",
        "ConnectiveStrategy",
        "OrderLimitStrategy",
        "PathProcessorStrategy",
        "ByModulatorOptimizationStrategy",
        "ReservedKeysVerificationStrategy",
        "EdgeLabelVerificationStrategy",
        "StandardVerificationStrategy",
        "ComputerVerificationStrategy",
        "LambdaRestrictionStrategy",
    }
)


def _olap_refused() -> UnsupportedStepError:
    return UnsupportedStepError(
        "withComputer() (OLAP) is not supported by the embedded engine",
        hint="run OLAP traversals against JanusGraph with Spark, or drop withComputer()",
    )


def _add_view(compiler: Compiler, view: View) -> None:
    """Apply ``view`` to the traversals ``compiler`` compiles, but not to its criteria."""
    compiler.views.append(view.rewrite)
    for criterion in view.criteria():
        compiler.unviewed.update((id(b), b) for b in nested_bytecodes(criterion))


def _cancellation(bytecode: Bytecode, given: Cancellation | None) -> Cancellation:
    """The execution's Cancellation: ``given`` (or a new one), limited by ``g.with_('evaluationTimeout', ms)``.
    The other request options of ``with_()`` (batchSize, ...) mean nothing in process and are ignored."""
    cancellation = given if given is not None else Cancellation()
    for name, *args in bytecode.source_instructions:
        if name != "withStrategies":
            continue
        for strategy in args:
            if strategy_name(strategy) != "OptionsStrategy":
                continue
            millis = (getattr(strategy, "configuration", None) or {}).get("evaluationTimeout")
            if millis is None:
                continue
            if not isinstance(millis, int) or isinstance(millis, bool) or millis < 0:
                raise TraversalError(
                    f"evaluationTimeout must be milliseconds >= 0, got {millis!r}",
                    hint="write g.with_('evaluationTimeout', 5000); 0 means no timeout",
                )
            if millis:
                cancellation.limit(millis / 1000)
    return cancellation


class EmbeddedGraph:
    """An in-process Gremlin graph; see lineage_platform/graph/embedded/README.md for isolation and ids."""

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        *,
        unique: Iterable[tuple[str, str]] = (),
        indexed: Iterable[str] = (),
        rules: SchemaRules | None = None,
        sync: bool = True,
        lock_timeout: float = 30.0,
    ) -> None:
        """path None = memory only. unique: (vertex label, property key) pairs that must be unique; indexed:
        vertex property keys with an exact-value index. rules: strict-schema mode (see strict.py). sync: fsync
        each commit. lock_timeout: seconds to wait for a transaction held by someone else."""
        self.path = Path(path) if path is not None else None
        self.graph = MemGraph(unique=unique, indexed=indexed, rules=rules)
        self._lock = GraphLock(lock_timeout)
        self._compilers = CompilerPool(self.graph)
        self._log: Any = None
        self._closed = False
        if self.path is not None:
            self._open_store(self.path, sync)

    def _open_store(self, path: Path, sync: bool) -> None:
        """Load the store's snapshot and log, then freeze the heap (``gc.freeze()``): the opened graph is millions
        of container objects the cyclic GC would otherwise scan in full as they pass through its generations
        (three scans in the first seconds of use, ~1.3 s each per million elements here) and at every full
        collection after. Frozen objects are still freed by reference counting, and dropping an element unlinks
        every reference to its records (no cycle is left for the collector); ``close()`` unfreezes."""
        from lineage_platform.graph.embedded.storage import DurableLog  # only stores need it

        log = DurableLog(path, sync=sync)
        try:
            with gc_paused():
                state, pending = log.recover()
                if state is not None:
                    self.graph.import_state(state)
                for ops in pending:
                    self.graph.apply(ops)
                del state
                gc.freeze()
        except BaseException:
            log.close()
            raise
        self._log = log

    # ---------------------------------------------------------------- transactions
    def begin(self) -> Transaction:
        """An explicit transaction; it takes the graph lock at its first statement."""
        self._require_open()
        return Transaction(self._start_tx, self._finish_tx)

    def _start_tx(self, owner: Any, cancellation: Cancellation | None) -> None:
        self._lock.acquire(owner, cancellation)
        self.graph.begin_changes()

    def _finish_tx(self, owner: Any, commit: bool) -> None:
        try:
            if commit:
                self._commit_changes()
            else:
                self.graph.rollback_changes()
        finally:
            self._lock.release(owner)

    def _commit_changes(self) -> None:
        if self._log is None or not self.graph.has_changes:
            self.graph.commit_changes()
            return
        ops = self.graph.pending_ops()
        try:
            self._log.append(ops)
        except BaseException:
            self.graph.rollback_changes()
            raise
        self.graph.commit_changes()
        if self._log.should_checkpoint():
            try:
                self._log.checkpoint(self.graph.export_columns())
            except StoreError as exc:  # the commit is already durable in the log; the next checkpoint retries
                _log.warning(
                    "checkpoint of %s failed, the log keeps growing until one succeeds: %s", self.path, exc
                )

    # ---------------------------------------------------------------- execution
    def execute(
        self, bytecode: Bytecode, tx: Transaction | None = None, cancellation: Cancellation | None = None
    ) -> list[Traverser]:
        """Run one traversal; tx None = autocommit (committed on success, rolled back on error).

        ``cancellation`` (and ``g.with_('evaluationTimeout', ms)``) stops it with TraversalInterrupted, also
        while it waits for the graph lock; an interrupted statement rolls back the whole transaction ``tx``."""
        self._require_open()
        if not isinstance(bytecode, Bytecode):
            bytecode = getattr(bytecode, "bytecode", bytecode)
        cancellation = _cancellation(bytecode, cancellation)
        if tx is not None:
            tx.ensure_started(cancellation)
            mark = self.graph.savepoint()
            try:
                return self._run(bytecode, cancellation)
            except TraversalInterrupted:
                tx.rollback()
                raise
            except BaseException:
                self.graph.rollback_to(mark)
                raise
        autocommit = Transaction(self._start_tx, self._finish_tx)
        autocommit.ensure_started(cancellation)
        try:
            results = self._run(bytecode, cancellation)
        except BaseException:
            autocommit.rollback()
            raise
        autocommit.commit()
        return results

    def _run(self, bytecode: Bytecode, cancellation: Cancellation) -> list[Traverser]:
        with gc_paused():
            try:
                return self._run_traversal(bytecode, cancellation)
            except RecursionError:
                raise TraversalError(
                    "the traversal nests traversals too deeply to run",
                    hint="flatten nested __.<steps> arguments (long chains of steps are fine)",
                ) from None

    def _run_traversal(self, bytecode: Bytecode, cancellation: Cancellation) -> list[Traverser]:
        key = shape(bytecode)
        if key is None:  # writes or side effects (see shapes.py): compiled for this execution only
            mutating = uses_steps(bytecode, MUTATING_STEPS)
            compiler = Compiler(
                self.graph, track_paths=path_mode(bytecode), mutating=mutating, cancellation=cancellation
            )
            return self._results(bytecode, compiler, None, cancellation)
        settings, compiler = self._compilers.take(key, bytecode, cancellation)
        try:
            return self._results(bytecode, compiler, key[1], cancellation)
        finally:
            self._compilers.give_back(settings, compiler)

    def _results(
        self, bytecode: Bytecode, compiler: Compiler, steps_key: Any, cancellation: Cancellation
    ) -> list[Traverser]:
        """Compile the traversal (or take the pipeline its compiler kept for ``steps_key``) and run it: its
        detached results."""
        self._apply_source(bytecode, compiler, compiler.mutating)
        cancellation.check()
        pipeline = compiler.compile(bytecode, anonymous=False, key=steps_key)
        results: list[Traverser] = []
        append = results.append
        for t in pipeline.run((compiler.start(SEED),)):
            if not len(results) % 1024:
                cancellation.check_size(len(results) + 1, "the result")
            obj = t.obj
            if type(obj) in PLAIN_VALUES:
                append(Traverser(obj, t.bulk))
            elif obj is not SEED:
                append(Traverser(detach(obj), t.bulk))
        return results

    def _apply_source(self, bytecode: Bytecode, compiler: Compiler, mutating: bool) -> None:
        for name, *args in bytecode.source_instructions:
            if name == "withSideEffect":
                compiler.side_effects[args[0]] = copy.deepcopy(args[1])
                if len(args) > 2 and args[2] is not None:
                    compiler.side_effect_operators[args[0]] = args[2]
            elif name == "withSack":
                initial = args[0]
                compiler.sack_initial = lambda initial=initial: copy.deepcopy(initial)
                compiler.sack_merge = args[-1] if len(args) > 1 else None  # (initial, [split,] merge)
            elif name == "withBulk":
                compiler.bulk = bool(args[0]) if args else True
            elif name == "withStrategies":
                for strategy in args:
                    kind = strategy_name(strategy)
                    if kind in VIEW_STRATEGIES:
                        configuration = getattr(strategy, "configuration", None) or {}
                        _add_view(compiler, view_of(kind, configuration))
                        continue
                    self._check_strategy(strategy, mutating)
                    if kind == "ProductiveByStrategy":
                        compiler.productive_by = True
            elif name in ("withoutStrategies", "with", "withPath"):
                continue
            elif name == "withComputer":
                raise _olap_refused()
            elif name == "tx":
                raise TraversalError(
                    f"tx {args[0] if args else ''} must be sent on its own, not inside a traversal",
                    hint="use g.tx() to commit or roll back",
                )
            else:
                raise UnsupportedStepError(
                    f"source step {name}() is not supported by the embedded engine", hint="remove it"
                )

    @staticmethod
    def _check_strategy(strategy: Any, mutating: bool) -> None:
        name = strategy_name(strategy)
        if name == "VertexProgramStrategy":
            raise _olap_refused()
        if name == "OptionsStrategy":  # request options, read by execute()
            return
        if name == "ReadOnlyStrategy":
            if mutating:
                raise TraversalError(
                    "The provided traversal has a mutating step and thus is not read only",
                    hint="remove ReadOnlyStrategy or the writing steps",
                )
            return
        if name in _IGNORED_STRATEGIES:
            return
        raise UnsupportedStepError(
            f"strategy {name} is not supported by the embedded engine",
            hint="filter explicitly in the traversal instead of using the strategy",
        )

    # ---------------------------------------------------------------- lifecycle
    def _require_open(self) -> None:
        if self._closed:
            raise GraphError("this embedded graph is closed", hint="open a new EmbeddedGraph")

    def close(self) -> None:
        """Checkpoint the store (if any) and release it."""
        if self._closed:
            return
        self._closed = True
        if self._log is not None:
            self._lock.acquire(self)
            try:
                self._log.checkpoint(self.graph.export_columns())
                self._log.close()
            finally:
                self._lock.release(self)
                gc.unfreeze()  # the closed graph may go: let the collector see it again

    def __enter__(self) -> EmbeddedGraph:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
