"""Branching steps: repeat, union, coalesce, optional, choose, local, map, flatMap, fail."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from gremlin_python.process.traversal import Pick

from lineage_platform.errors import FailStepError, TraversalError
from lineage_platform.graph.embedded.memgraph import VertexRec
from lineage_platform.graph.embedded.modulation import NOTHING, by_functions
from lineage_platform.graph.embedded.pipeline import (
    Compiler,
    Pipeline,
    StepCall,
    StepFn,
    Trav,
    as_bytecode,
    merge_bulks,
    step,
)
from lineage_platform.graph.embedded.predicates import compile_predicate
from lineage_platform.graph.embedded.strategies import Hop, NavigationWalk

LoopTest = Callable[[Trav], bool]


def _loop_test(name: str, args: list[Any], c: Compiler) -> LoopTest:
    """The predicate of until()/emit()/times() for a traverser."""
    if name == "times":
        count = args[0]
        if isinstance(count, bool) or not isinstance(count, int):
            raise TraversalError(f"times() needs an integer, got {count!r}", hint="write times(3)")
        return lambda t: t.loops[-1][1] >= count
    if not args:
        return lambda t: True
    nested = as_bytecode(args[0])
    if nested is None:
        test = compile_predicate(args[0])
        return lambda t: test(t.obj)
    pipeline = c.compile(nested)
    return pipeline.has_result


def _pop_loop(t: Trav) -> Trav:
    return Trav(t.obj, t.bulk, t.path, t.loops[:-1], t.sack)


@step("repeat")
def compile_repeat(call: StepCall, c: Compiler) -> StepFn:
    """repeat([name,] body) with times/until/emit before (while-do) or after (do-while) it.

    Iterations run breadth-first over the whole frontier, merging equal traversers, so a DAG walk does not explode;
    a body with a dedup() runs traversers one at a time in TinkerPop's order instead (what it drops depends on it).
    """
    args = list(call.args)
    loop_name = args.pop(0) if len(args) == 2 and isinstance(args[0], str) else None
    loop_state: dict[int, Any] = {}
    body: Pipeline = c.loop_body(args[0], loop_state)
    until_first = emit_first = None
    until = emit = None
    for first, (name, mod_args) in [(True, m) for m in call.leading] + [(False, m) for m in call.modulators]:
        if name in ("until", "times"):
            until, until_first = _loop_test(name, mod_args, c), first
        elif name == "emit":
            emit, emit_first = _loop_test(name, mod_args, c), first
    if call.walk is not None:  # the navigation_walk strategy chose the fast walk
        return _navigation_walk(call.walk, c)
    check_size = c.check_size

    def exits(t: Trav) -> tuple[Trav | None, bool]:
        """After an iteration: the traverser leaving (until) or emitted, if any, and whether ``t`` loops again."""
        if until_first is False and until is not None and until(t):
            return _pop_loop(t), False
        if emit_first is False and emit is not None and emit(t):
            return _pop_loop(t), True
        return None, True

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        frontier = [Trav(t.obj, t.bulk, t.path, (*t.loops, (loop_name, 0)), t.sack) for t in travs]
        while frontier:
            check_size(len(frontier), "repeat()")
            to_body = []
            for t in frontier:
                if until_first and until is not None and until(t):
                    yield _pop_loop(t)
                    continue
                if emit_first and emit is not None and emit(t):
                    yield _pop_loop(t)
                to_body.append(t)
            frontier = []
            for t in merge_bulks([_next_loop(t) for t in body.run(to_body)]):
                out, again = exits(t)
                if out is not None:
                    yield out
                if again:
                    frontier.append(t)

    def run_in_order(travs: Iterator[Trav]) -> Iterator[Trav]:
        """TinkerPop's order, for a body whose steps keep state across iterations (dedup()): one traverser at a
        time through the body, traversers looping back queued (equal ones merged) ahead of new starts."""
        for seen in loop_state.values():
            seen.clear()
        for start in travs:
            queue: OrderedDict[Any, Trav] = OrderedDict()
            _enqueue(
                queue, Trav(start.obj, start.bulk, start.path, (*start.loops, (loop_name, 0)), start.sack)
            )
            while queue:
                check_size(len(queue), "repeat()")
                t = queue.popitem(last=False)[1]
                if until_first and until is not None and until(t):
                    yield _pop_loop(t)
                    continue
                if emit_first and emit is not None and emit(t):
                    yield _pop_loop(t)
                for produced in body.run((t,)):
                    looped = _next_loop(produced)
                    out, again = exits(looped)
                    if out is not None:
                        yield out
                    if again:
                        _enqueue(queue, looped)

    return run_in_order if loop_state else run


def _next_loop(t: Trav) -> Trav:
    counter = t.loops[-1]
    return Trav(t.obj, t.bulk, t.path, (*t.loops[:-1], (counter[0], counter[1] + 1)), t.sack)


def _enqueue(queue: OrderedDict[Any, Trav], t: Trav) -> None:
    """Queue a traverser, merging it into an equal one already waiting (as TinkerPop's TraverserSet does)."""
    try:
        key = t.merge_key()
        waiting = queue.get(key)
    except TypeError:  # an unhashable object or sack: queued on its own
        key, waiting = object(), None
    if waiting is None:
        queue[key] = t
    else:
        queue[key] = waiting.with_bulk(waiting.bulk + t.bulk)


def _advance(frontier: dict[VertexRec, int], hops: tuple[Hop, ...]) -> dict[VertexRec, int]:
    """Move every (vertex, bulk) of the frontier along the hops, adding bulks of vertices reached twice."""
    for directions, labels in hops:
        reached: dict[VertexRec, int] = {}
        get = reached.get
        for upstream in directions:
            for v, bulk in frontier.items():
                adjacency = v.in_e if upstream else v.out_e
                buckets = [adjacency.get(label) for label in labels] if labels else list(adjacency.values())
                for bucket in buckets:
                    if not bucket:
                        continue
                    if upstream:
                        for e in bucket:
                            u = e.out_v
                            reached[u] = get(u, 0) + bulk
                    else:
                        for e in bucket:
                            u = e.in_v
                            reached[u] = get(u, 0) + bulk
        frontier = reached
    return frontier


def _neighbours(frontier: Iterable[VertexRec], upstream: bool, labels: tuple[str, ...]) -> set[VertexRec]:
    """The distinct vertices one hop away (set comprehensions: the hot loop of every lineage walk)."""
    if len(labels) == 1:
        label = labels[0]
        if upstream:
            return {e.out_v for v in frontier if (bucket := v.in_e.get(label)) for e in bucket}
        return {e.in_v for v in frontier if (bucket := v.out_e.get(label)) for e in bucket}
    if upstream:
        return {
            e.out_v
            for v in frontier
            for bucket in ([v.in_e.get(x) for x in labels] if labels else v.in_e.values())
            if bucket
            for e in bucket
        }
    return {
        e.in_v
        for v in frontier
        for bucket in ([v.out_e.get(x) for x in labels] if labels else v.out_e.values())
        if bucket
        for e in bucket
    }


def _require_vertex(t: Trav) -> None:
    if not isinstance(t.obj, VertexRec):
        raise TraversalError(f"repeat() navigation needs vertices, got {t.obj!r}", hint="start from vertices")


def _distinct_walk(
    travs: Iterator[Trav],
    hops: tuple[Hop, ...],
    limit: int | None,
    emit_start: bool,
    project: str | None,
    check_cancelled: Callable[[], None],
) -> Iterator[Trav]:
    """repeat(nav).emit()[.times(n)].dedup(): each vertex within reach once, breadth-first (so the first visit
    has the most hops left and nothing reachable is missed). ``project`` "id"/"label" yields that instead of the
    vertex (an id()/label() step right after the dedup() is folded in: most lineage walks end that way)."""
    seen: set[VertexRec] = set()
    for t in travs:
        _require_vertex(t)
        if emit_start and t.obj not in seen:
            seen.add(t.obj)
            yield Trav(t.obj if project is None else getattr(t.obj, project), 1, t.path, t.loops, t.sack)
        frontier: set[VertexRec] = {t.obj}
        depth = 0
        while frontier and (limit is None or depth < limit):
            check_cancelled()
            for directions, labels in hops:
                frontier = set().union(*(_neighbours(frontier, upstream, labels) for upstream in directions))
            frontier -= seen
            depth += 1
            seen |= frontier
            path, loops, sack = t.path, t.loops, t.sack
            if project == "id":
                yield from [Trav(v.id, 1, path, loops, sack) for v in frontier]
            elif project == "label":
                yield from [Trav(v.label, 1, path, loops, sack) for v in frontier]
            else:
                yield from [Trav(v, 1, path, loops, sack) for v in frontier]


def _navigation_walk(walk: NavigationWalk, c: Compiler) -> StepFn:
    """A fast repeat() for pure navigation bodies without paths: a breadth-first walk over vertex -> bulk maps
    (each vertex once when the walk absorbed a dedup(); see the navigation_walk strategy)."""
    hops, limit, until_first, emit_first = walk.hops, walk.limit, walk.until_first, walk.emit_first
    check_cancelled = c.check_cancelled
    if walk.distinct:
        return lambda travs: _distinct_walk(
            travs, hops, limit, emit_first is True, walk.project, check_cancelled
        )

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            _require_vertex(t)
            frontier = {t.obj: t.bulk}
            depth = 0
            while frontier:
                check_cancelled()
                if until_first and limit is not None and depth >= limit:
                    yield from (Trav(v, b, t.path, t.loops, t.sack) for v, b in frontier.items())
                    break
                if emit_first:
                    yield from (Trav(v, b, t.path, t.loops, t.sack) for v, b in frontier.items())
                frontier = _advance(frontier, hops)
                depth += 1
                if until_first is False and limit is not None and depth >= limit:
                    yield from (Trav(v, b, t.path, t.loops, t.sack) for v, b in frontier.items())
                    break
                if emit_first is False:
                    yield from (Trav(v, b, t.path, t.loops, t.sack) for v, b in frontier.items())

    return run


@step("union")
def compile_union(call: StepCall, c: Compiler) -> StepFn:
    """union(branches...): each branch runs over the whole incoming stream (so count() in a branch counts all)."""
    branches = [c.sub(a, "union") for a in call.args]

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        incoming = c.collect(travs, "union()")
        for branch in branches:
            yield from branch.run(incoming)

    return run


@step("coalesce")
def compile_coalesce(call: StepCall, c: Compiler) -> StepFn:
    """coalesce(branches...): the results of the first productive branch."""
    branches = [c.sub(a, "coalesce") for a in call.args]

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            for branch in branches:
                results = list(branch.run((t,)))
                if results:
                    yield from results
                    break

    return run


@step("optional")
def compile_optional(call: StepCall, c: Compiler) -> StepFn:
    """optional(branch): the branch's results, or the traverser itself when there are none."""
    branch = c.sub(call.args[0], "optional")

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            results = list(branch.run((t,)))
            yield from results if results else (t,)

    return run


@step("choose", "branch")
def compile_choose(call: StepCall, c: Compiler) -> StepFn:
    """choose(test, then[, else]) or choose(choice).option(value, branch)...option(Pick.none, branch);
    branch(choice).option(...) takes every matching option, not only the first. As in TinkerPop, each branch runs
    once over all the traversers that chose it (so a fold() or count() in a branch sees all of them)."""
    args = call.args
    if len(args) in (2, 3):
        nested = as_bytecode(args[0])
        test: Callable[[Trav], bool]
        if nested is not None:
            test = c.compile(nested).has_result
        else:
            predicate = compile_predicate(args[0])

            def test(t: Trav) -> bool:
                return predicate(t.obj)

        then = c.sub(args[1], "choose")
        otherwise = c.sub(args[2], "choose") if len(args) == 3 else Pipeline([])
        return _partitioned(lambda t: [then if test(t) else otherwise])
    choice = by_functions([args[:1]] if args else [[]], c, "choose")[0]
    options = []
    for key, branch in call.modulator_args("option"):
        nested_key = as_bytecode(key)
        matcher = None
        if not isinstance(key, Pick):
            matcher = (
                _traversal_matcher(c.compile(nested_key))
                if nested_key is not None
                else compile_predicate(key)
            )
        options.append((key, matcher, c.sub(branch, "option")))
    none_branch = next((branch for key, _, branch in options if key == Pick.none), None)
    any_branches = [branch for key, _, branch in options if key == Pick.any_]
    keyed = [(matcher, branch) for _, matcher, branch in options if matcher is not None]

    def pick(t: Trav) -> list[Pipeline]:
        value = choice(t)
        chosen = [branch for matcher, branch in keyed if value is not NOTHING and matcher(value)]
        if not chosen and none_branch is not None:
            chosen = [none_branch]
        return any_branches + (chosen if call.name == "branch" else chosen[:1])

    return _partitioned(pick)


def _traversal_matcher(pipeline: Pipeline) -> Callable[[Any], bool]:
    """option(__.<traversal>, branch): the option matches when the traversal produces something from the value."""
    return lambda value: pipeline.has_result(Trav(value))


def _partitioned(pick: Callable[[Trav], list[Pipeline]]) -> StepFn:
    """Send each traverser to the branches ``pick`` names, then run every branch once over its traversers."""

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        groups: dict[int, tuple[Pipeline, list[Trav]]] = {}
        for t in travs:
            for branch in pick(t):
                groups.setdefault(id(branch), (branch, []))[1].append(t)
        for branch, members in groups.values():
            yield from branch.run(members)

    return run


@step("local")
def compile_local(call: StepCall, c: Compiler) -> StepFn:
    """local(branch): run the branch for each traverser on its own."""
    branch = c.sub(call.args[0], "local")
    return lambda travs: (r for t in travs for r in branch.run((t,)))


@step("map", "flatMap")
def compile_map(call: StepCall, c: Compiler) -> StepFn:
    """map(t): the first result as the new object; flatMap(t): every result."""
    branch = c.sub(call.args[0], call.name)
    if call.name == "map":

        def run(travs: Iterator[Trav]) -> Iterator[Trav]:
            for t in travs:
                result = branch.first(t.alone())
                if result is not None:
                    yield t.split(result.obj)

        return run

    def run_flat(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            for r in branch.run((t.alone(),)):
                yield t.split(r.obj)
                if r.bulk > 1:  # a result of bulk n is n results
                    for _ in range(r.bulk - 1):
                        yield t.split(r.obj)

    return run_flat


@step("fail")
def compile_fail(call: StepCall, c: Compiler) -> StepFn:
    """fail([message]): stop the traversal with an error when a traverser reaches this step."""
    message = call.args[0] if call.args else "fail() step triggered"

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            raise FailStepError(f"{message} (at {t.obj!r})", hint="the traversal reached its fail() step")
        return
        yield

    return run
