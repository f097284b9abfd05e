"""The execution model: traversers, paths, compiled pipelines and the step registry.

A traversal compiles to a :class:`Pipeline`: a list of step functions, each turning an iterator of :class:`Trav` into
another (lazy generators; barrier steps collect). Paths are only tracked when the traversal needs them
(``path``, ``select``, ``simplePath``, ...), so plain navigation creates one small object per traverser and step.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any

from gremlin_python.process.traversal import Bytecode

from lineage_platform.errors import TraversalError, UnsupportedStepError
from lineage_platform.graph.embedded.cancel import Cancellation
from lineage_platform.graph.embedded.memgraph import MemGraph
from lineage_platform.graph.embedded.shapes import step_shape
from lineage_platform.graph.embedded.step_calls import StepCall, as_bytecode, group_steps
from lineage_platform.graph.embedded.strategies import (
    STRATEGIES,
    Context,
    Strategy,
    apply_strategies,
    navigation_walk,
)
from lineage_platform.graph.embedded.values import hash_key

# The engine's strategies under SubgraphStrategy/PartitionStrategy views: all but the navigation walk.
_UNDER_VIEWS = tuple(s for s in STRATEGIES if s is not navigation_walk)

# Steps whose presence anywhere in a traversal switches path tracking on.
# Steps that need every object a traverser passed through, and steps that only need the as-labelled ones.
FULL_PATH_STEPS = frozenset({"path", "simplePath", "cyclicPath", "tree", "otherV"})
LABEL_STEPS = frozenset({"select", "where", "match", "format", "math"})
# Steps whose writes can invalidate adjacency/index iterators: navigation snapshots when any is present.
MUTATING_STEPS = frozenset({"addV", "addE", "property", "drop", "mergeV", "mergeE"})


class PathNode:
    """One entry of a persistent (shared-tail) path: the object and the labels it was given."""

    __slots__ = ("prev", "obj", "labels")

    def __init__(self, prev: PathNode | None, obj: Any, labels: tuple[str, ...] = ()) -> None:
        self.prev = prev
        self.obj = obj
        self.labels = labels

    def entries(self) -> list[PathNode]:
        """All entries, oldest first."""
        out: list[PathNode] = []
        node: PathNode | None = self
        while node is not None:
            out.append(node)
            node = node.prev
        out.reverse()
        return out

    def objects(self) -> list[Any]:
        """The path's objects, oldest first."""
        return [n.obj for n in self.entries()]

    def labelled(self, label: str) -> list[Any]:
        """Objects carrying ``label``, oldest first."""
        return [n.obj for n in self.entries() if label in n.labels]


class LabelPath(PathNode):
    """A path that keeps only the start and the as-labelled objects (enough for select/where, and traversers
    that share it can still be merged into one bulk)."""

    __slots__ = ()


class Trav:
    """A traverser: the current object, its bulk, its path (None when paths are not tracked), loop counters, sack."""

    __slots__ = ("obj", "bulk", "path", "loops", "sack")

    def __init__(
        self, obj: Any, bulk: int = 1, path: PathNode | None = None, loops: tuple = (), sack: Any = None
    ) -> None:
        self.obj = obj
        self.bulk = bulk
        self.path = path
        self.loops = loops
        self.sack = sack

    def split(self, obj: Any) -> Trav:
        """A traverser moved on to ``obj`` (extends the path when tracked)."""
        path = self.path
        if path is not None and type(path) is PathNode:
            path = PathNode(path, obj)
        return Trav(obj, self.bulk, path, self.loops, self.sack)

    def replace(self, obj: Any) -> Trav:
        """A traverser for ``obj`` that keeps the path as it is (filters, side-effects, branch results)."""
        return Trav(obj, self.bulk, self.path, self.loops, self.sack)

    def alone(self) -> Trav:
        """This traverser with bulk 1: what a child traversal of map(), flatMap(), sideEffect() or by() is given
        (TinkerPop's TraversalUtil.apply); the parent's bulk multiplies the results afterwards."""
        return self if self.bulk == 1 else Trav(self.obj, 1, self.path, self.loops, self.sack)

    def with_bulk(self, bulk: int) -> Trav:
        """The same traverser with another bulk."""
        return Trav(self.obj, bulk, self.path, self.loops, self.sack)

    def merge_key(self) -> Any:
        """Traversers with equal keys can be merged by adding their bulks."""
        return (
            hash_key(self.obj),
            id(self.path) if self.path is not None else None,
            self.loops,
            hash_key(self.sack),
        )


def merge_bulks(travs: list[Trav]) -> list[Trav]:
    """Merge equal traversers (same object, path, loops, sack) by adding bulks; the first of each kind is updated
    in place, so pass traversers nobody else holds."""
    merged: dict[Any, Trav] = {}
    out: list[Trav] = []
    for t in travs:
        try:
            key = t.merge_key()
            existing = merged.get(key)
        except TypeError:  # an unhashable object or sack: never merged
            out.append(t)
            continue
        if existing is None:
            merged[key] = t
            out.append(t)
        else:
            existing.bulk += t.bulk
    return out


StepFn = Callable[[Iterator[Trav]], Iterator[Trav]]


class MapStep:
    """A step that turns every traverser into exactly one other (elementMap, project, constant, ...): a
    :class:`Pipeline` made only of such steps computes a by() projection without chaining generators."""

    __slots__ = ("one",)

    def __init__(self, one: Callable[[Trav], Trav]) -> None:
        self.one = one

    def __call__(self, travs: Iterator[Trav]) -> Iterator[Trav]:
        return map(self.one, travs)


StepCompiler = Callable[[StepCall, "Compiler"], StepFn]
_REGISTRY: dict[str, StepCompiler] = {}


def step(*names: str) -> Callable[[StepCompiler], StepCompiler]:
    """Register a compiler function for one or more step names."""

    def register(fn: StepCompiler) -> StepCompiler:
        for name in names:
            _REGISTRY[name] = fn
        return fn

    return register


def uses_steps(bytecode: Bytecode, names: frozenset[str]) -> bool:
    """True when the traversal (or a nested one) uses any of the named steps."""
    for name, *args in bytecode.step_instructions:
        if name in names:
            return True
        for arg in args:
            nested = as_bytecode(arg)
            if nested is not None and uses_steps(nested, names):
                return True
    return False


def path_mode(bytecode: Bytecode) -> str | None:
    """ "full" when the traversal (or a nested one) reads whole paths, "labels" when it only reads as-labels
    (select, where, dedup/from/to with labels), else None."""
    mode = None
    for name, *args in bytecode.step_instructions:
        if name in FULL_PATH_STEPS:
            return "full"
        if name in LABEL_STEPS or (name in ("dedup", "from", "to") and any(isinstance(a, str) for a in args)):
            mode = "labels"
        for arg in args:
            nested = as_bytecode(arg)
            if nested is not None:
                inner = path_mode(nested)
                if inner == "full":
                    return "full"
                mode = mode or inner
    return mode


# Steps chained lazily at most: each is a generator pulling from the one before, and Python limits how deeply
# generators nest (RecursionError at ~1000). A longer pipeline runs in segments of this many steps, each but the
# last collected into a list before the next starts.
LAZY_STEPS = 200
_CHECK_EVERY = 1024  # traversers a barrier collects between budget and cancellation checks
_EXPAND_CHUNK = 1 << 20  # copies of one bulk traverser expanded between cancellation checks
# pipelines a reusable compiler keeps (root and nested traversals), the least recently used dropped first
KEPT_PIPELINES = 256


class Pipeline:
    """A compiled traversal: apply it to any stream of traversers."""

    def __init__(self, steps: list[StepFn]) -> None:
        self.steps = steps
        maps = [fn.one for fn in steps if isinstance(fn, MapStep)]
        # the steps' one-traverser functions when every step is a MapStep (None otherwise, or when empty)
        self._maps = maps if steps and len(maps) == len(steps) else None

    def run(self, travs: Iterable[Trav]) -> Iterator[Trav]:
        """Push ``travs`` through every step (lazily, except between segments of a very long pipeline)."""
        stream: Iterator[Trav] = iter(travs)
        if len(self.steps) <= LAZY_STEPS:  # one segment: the usual case
            for fn in self.steps:
                stream = fn(stream)
            return stream
        for index, fn in enumerate(self.steps):
            if index and not index % LAZY_STEPS:
                stream = iter(list(stream))
            stream = fn(stream)
        return stream

    def first(self, t: Trav) -> Trav | None:
        """The first traverser this pipeline produces from ``t`` (or None)."""
        if self._maps is not None:
            for one in self._maps:
                t = one(t)
            return t
        return next(self.run((t,)), None)

    def has_result(self, t: Trav) -> bool:
        """True when the pipeline produces anything from ``t``."""
        return next(self.run((t,)), None) is not None

    def objects(self, t: Trav) -> list[Any]:
        """Every object produced from ``t`` (bulk expanded)."""
        return [r.obj for r in self.run((t,)) for _ in range(r.bulk)]


IDENTITY = Pipeline([])
SEED: Any = object()  # the object of the single traverser a root traversal starts from


class Compiler:
    """Compiles bytecode against one graph for one execution (holds the side effects and settings)."""

    def __init__(
        self,
        graph: MemGraph,
        *,
        track_paths: str | None,
        mutating: bool,
        side_effects: dict[str, Any] | None = None,
        cancellation: Cancellation | None = None,
        reusable: bool = False,
    ) -> None:
        """``reusable``: the compiler serves one execution after another (see :meth:`reset`) and keeps the
        pipelines it compiled, by shape, for the next ones (only for traversals without side effects or writes,
        whose pipelines keep no state of an execution once it ends)."""
        self.graph = graph
        self._cancellation = cancellation if cancellation is not None else Cancellation()
        self.track_paths = track_paths is not None
        self.label_paths_only = track_paths == "labels"
        self._no_labels = LabelPath(None, None)  # shared by unlabelled traversers, so they can merge
        self.mutating = mutating
        self.side_effects: dict[str, Any] = side_effects if side_effects is not None else {}
        self._compiled: dict[int, tuple[Any, Pipeline]] = {}
        # pipelines kept across executions, by (anonymous, shape of the steps), least recently used first
        self._by_shape: OrderedDict[Hashable, Pipeline] | None = OrderedDict() if reusable else None
        # while a repeat() body is compiled: the state its steps keep across the loop's iterations (dedup()'s
        # seen values), which repeat() clears when it starts; None elsewhere (other children start afresh)
        self.loop_state: dict[int, Any] | None = None
        self._settings()

    def _settings(self) -> None:
        """The settings the source instructions give (``engine._apply_source``), as they are without any."""
        # ProductiveByStrategy: a by() that produces nothing gives null instead of filtering the traverser out
        self.productive_by = False
        # withSideEffect(key, initial, Operator): how aggregate()/store() fold values into that side effect
        self.side_effect_operators: dict[str, Any] = {}
        self.sack_initial: Callable[[], Any] | None = None
        # withSack(initial, Operator): how barrier() merges the sacks of traversers it merges
        self.sack_merge: Any = None
        # withBulk(false): traversers barrier() merges count once
        self.bulk = True
        # traversers grouped so far by named group()/groupCount() side effects (steps naming the same key share it)
        self.group_members: dict[str, dict[Any, tuple[Any, list[Trav]]]] = {}
        # SubgraphStrategy/PartitionStrategy (strategy_views.View.rewrite): applied before the engine's strategies
        # to every traversal but the criteria they insert, whose bytecodes (nested ones too) are kept by id here
        self.views: list[Strategy] = []
        self.unviewed: dict[int, Bytecode] = {}

    def reset(self, cancellation: Cancellation) -> None:
        """Make a reusable compiler ready for its next execution, checked by ``cancellation``."""
        self._cancellation = cancellation
        self.side_effects = {}
        self._compiled = {}
        self._settings()

    def check_cancelled(self) -> None:
        """Raise TraversalInterrupted when the execution was cancelled or is past its deadline (steps whose work
        is unbounded or large call it per incoming traverser or per loop iteration)."""
        self._cancellation.check()

    def check_size(self, size: int, where: str) -> None:
        """Raise TraversalTooLarge when a collection ``where`` builds would hold more items than the execution's
        budget (steps that build collections call it); also checks for cancellation."""
        self._cancellation.check_size(size, where)

    @property
    def max_items(self) -> int | None:
        """The most items one collection of the execution may hold (None: no budget)."""
        return self._cancellation.max_items

    def collect(self, travs: Iterable[Trav], where: str) -> list[Trav]:
        """Materialise a stream of traversers (a barrier), checking cancellation and the item budget as it
        grows."""
        collected: list[Trav] = []
        append = collected.append
        for t in travs:
            append(t)
            if not len(collected) % _CHECK_EVERY:
                self.check_size(len(collected), where)
        self.check_size(len(collected), where)
        return collected

    def expand(self, travs: Iterable[Trav], where: str) -> list[Any]:
        """The traversers' objects, each repeated by its bulk (fold(), group values, ...), within the item
        budget: a bulk of 2**30 is refused before a list that long is built."""
        values: list[Any] = []
        append = values.append
        budget = self.max_items
        for t in travs:
            if t.bulk == 1:  # the size is checked per item, cancellation as often as collect() checks it
                append(t.obj)
                if (budget is not None and len(values) > budget) or not len(values) % _CHECK_EVERY:
                    self.check_size(len(values), where)
                continue
            self.check_size(len(values) + t.bulk, where)
            for start in range(0, t.bulk, _EXPAND_CHUNK):  # a huge bulk stays cancellable
                self.check_cancelled()
                values.extend([t.obj] * min(_EXPAND_CHUNK, t.bulk - start))
        return values

    def compile(
        self, bytecode: Bytecode | list[StepCall], *, anonymous: bool = True, key: Hashable | None = None
    ) -> Pipeline:
        """Compile a traversal (``anonymous`` False for the root one, whose first step is its start).

        Nested traversals are compiled once per execution however often a step evaluates them; a reusable
        compiler also keeps them (and the root, whose step shape is ``key``) for later executions, apart from
        their forms under SubgraphStrategy/PartitionStrategy views (a view's criterion, and all compiled for it,
        sees the whole graph)."""
        if self.views and isinstance(bytecode, Bytecode) and id(bytecode) in self.unviewed:
            views, self.views = self.views, []
            try:
                return self.compile(bytecode, anonymous=anonymous, key=key)
            finally:
                self.views = views
        cached = self._compiled.get(id(bytecode))
        if cached is not None and cached[0] is bytecode:
            return cached[1]
        kept = self._by_shape
        if kept is not None and isinstance(bytecode, Bytecode):
            if key is None:
                key = step_shape(bytecode)
            if key is not None:
                key = (anonymous, bool(self.views), key)
                pipeline = kept.get(key)
                if pipeline is None:
                    pipeline = kept[key] = self._compile(bytecode, anonymous)
                    if len(kept) > KEPT_PIPELINES:
                        kept.popitem(last=False)
                else:
                    kept.move_to_end(key)
                self._compiled[id(bytecode)] = (bytecode, pipeline)
                return pipeline
        pipeline = self._compile(bytecode, anonymous)
        self._compiled[id(bytecode)] = (bytecode, pipeline)
        return pipeline

    def _compile(self, bytecode: Bytecode | list[StepCall], anonymous: bool) -> Pipeline:
        calls = group_steps(bytecode.step_instructions) if isinstance(bytecode, Bytecode) else bytecode
        calls = apply_strategies(calls, self.strategy_context(anonymous), self._strategies_for(bytecode))
        if calls and anonymous:
            calls[0].starts_child = True
        steps = []
        for call in calls:
            fn = _REGISTRY.get(call.name)
            if fn is None:
                raise UnsupportedStepError(
                    f"step {call.name}() is not supported by the embedded engine",
                    hint="rewrite the traversal without it, or run it against JanusGraph Server",
                )
            steps.append(fn(call, self))
        return Pipeline(steps)

    def _strategies_for(self, bytecode: Bytecode | list[StepCall]) -> Sequence[Strategy]:
        """The engine's strategies, after the views' rewrites for a viewed traversal; under views the navigation
        walk is left out (it would walk a repeat() body past the views' filters)."""
        if not self.views:
            return STRATEGIES
        return (*self.views, *_UNDER_VIEWS) if isinstance(bytecode, Bytecode) else _UNDER_VIEWS

    def strategy_context(self, anonymous: bool) -> Context:
        """What the strategies may depend on for a traversal compiled in this execution."""
        full_paths = self.track_paths and not self.label_paths_only
        return Context(anonymous=anonymous, full_paths=full_paths, sack=self.sack_initial is not None)

    def sub(self, value: Any, step_name: str) -> Pipeline:
        """Compile a nested traversal argument, with a clear error when ``value`` is not one."""
        return self._nested(value, step_name, None)

    def loop_body(self, value: Any, state: dict[int, Any]) -> Pipeline:
        """Compile repeat()'s body: its own steps keep ``state`` across iterations (TinkerPop runs one body)."""
        return self._nested(value, "repeat", state)

    def _nested(self, value: Any, step_name: str, loop_state: dict[int, Any] | None) -> Pipeline:
        if isinstance(value, list) and all(isinstance(v, StepCall) for v in value):
            nested: Any = value
        else:
            nested = as_bytecode(value)
        if nested is None:
            raise TraversalError(
                f"{step_name}() expects a traversal argument, got {value!r}",
                hint=f"pass __.<steps> to {step_name}()",
            )
        outer, self.loop_state = self.loop_state, loop_state
        try:
            # a loop body is compiled afresh: its steps are bound to this loop's state
            return self.compile(nested) if loop_state is None else self._compile(nested, True)
        finally:
            self.loop_state = outer

    def start(self, obj: Any, bulk: int = 1) -> Trav:
        """A fresh traverser for ``obj`` at the start of a traversal (also makes the root's SEED traverser)."""
        sack = self.sack_initial() if self.sack_initial is not None else None
        return Trav(obj, bulk, self.new_path(obj) if self.track_paths and obj is not SEED else None, (), sack)

    def new_path(self, obj: Any) -> PathNode:
        """The path of a traverser that starts at ``obj``."""
        return self._no_labels if self.label_paths_only else PathNode(None, obj)

    def spawn(self, t: Trav, obj: Any) -> Trav:
        """The traverser a start-capable step (V, E, inject, addV) emits: fresh at the root, a split mid-traversal."""
        if t.obj is SEED:
            return Trav(obj, t.bulk, self.new_path(obj) if self.track_paths else None, (), t.sack)
        return t.split(obj)
