"""Filter steps: has-family, is, where/not/and/or/filter, dedup, limit/range/skip/tail, simplePath/cyclicPath."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from typing import Any

from gremlin_python.process.traversal import Bytecode, P, Pop, Scope, T

from lineage_platform.errors import TraversalError
from lineage_platform.graph.embedded.access import flatten_ids, token_value, values_of
from lineage_platform.graph.embedded.memgraph import EdgeRec, PropRec, VertexPropRec, VertexRec
from lineage_platform.graph.embedded.modulation import NOTHING, ByFn, by_functions, round_robin
from lineage_platform.graph.embedded.pipeline import (
    Compiler,
    Pipeline,
    StepCall,
    StepFn,
    Trav,
    as_bytecode,
    step,
)
from lineage_platform.graph.embedded.predicates import Test, compile_predicate
from lineage_platform.graph.embedded.scoping import select_value
from lineage_platform.graph.embedded.values import gremlin_eq, hash_key

ElementTest = Callable[[Any], bool]
_ELEMENTS = (VertexRec, EdgeRec, VertexPropRec)


def _values_predicate(args: list[Any]) -> Test:
    """hasLabel('a','b') / hasId(1, 2) / hasKey(P) style arguments as one test."""
    if len(args) == 1 and isinstance(args[0], P):
        return compile_predicate(args[0])
    candidates = flatten_ids(args)

    def test(value: Any) -> bool:
        return any(
            gremlin_eq(value, c) or (isinstance(c, str) and not isinstance(value, str) and str(value) == c)
            for c in candidates
        )

    return test


def _traversal_test(pipeline: Pipeline) -> Test:
    """has(key, traversal): the value passes when the traversal produces something from it."""
    return lambda value: pipeline.has_result(Trav(value))


def _has_key_value(key: Any, predicate: Any, c: Compiler) -> ElementTest:
    nested = as_bytecode(predicate)
    if isinstance(key, T):
        if nested is not None:
            test = _traversal_test(c.compile(nested))
        elif key in (T.id, T.id_) and not isinstance(predicate, P):
            test = _values_predicate([predicate])
        else:
            test = compile_predicate(predicate)
        return lambda obj: isinstance(obj, (_ELEMENTS, PropRec)) and test(token_value(obj, key, "has"))
    if nested is not None:
        value_test = _traversal_test(c.compile(nested))
        return lambda obj: (
            isinstance(obj, _ELEMENTS) and any(value_test(value) for value in values_of(obj, (key,), "has"))
        )
    test = compile_predicate(predicate)
    return lambda obj: (
        isinstance(obj, _ELEMENTS) and any(test(value) for value in values_of(obj, (key,), "has"))
    )


def element_test(call: StepCall, c: Compiler) -> ElementTest:
    """The test of a has()/hasLabel()/hasId()/hasNot()/hasKey()/hasValue() call on one object."""
    name, args = call.name, call.args
    if name == "has":
        if len(args) == 1:
            key = args[0]
            if isinstance(key, T):
                return lambda obj: isinstance(obj, _ELEMENTS)
            return lambda obj: (
                isinstance(obj, _ELEMENTS) and next(values_of(obj, (key,), "has"), NOTHING) is not NOTHING
            )
        if len(args) == 2:
            return _has_key_value(args[0], args[1], c)
        if len(args) == 3:
            label_test = compile_predicate(args[0])
            value_test = _has_key_value(args[1], args[2], c)
            return lambda obj: (
                isinstance(obj, (VertexRec, EdgeRec)) and label_test(obj.label) and value_test(obj)
            )
        raise TraversalError(f"has() takes 1 to 3 arguments, got {args!r}", hint="write has(key[, value|P])")
    if name == "hasLabel":
        test = _values_predicate(args)
        return lambda obj: isinstance(obj, _ELEMENTS) and test(obj.label)
    if name == "hasId":
        test = _values_predicate(args)
        return lambda obj: isinstance(obj, _ELEMENTS) and test(obj.id)
    if name == "hasNot":
        key = args[0]
        return lambda obj: next(values_of(obj, (key,), "hasNot"), NOTHING) is NOTHING
    if name in ("hasKey", "hasValue"):
        test = _values_predicate(args)
        attribute = "key" if name == "hasKey" else "value"
        return lambda obj: isinstance(obj, (VertexPropRec, PropRec)) and test(getattr(obj, attribute))
    raise TraversalError(
        f"unknown has-step {name}", hint="use has, hasLabel, hasId, hasNot, hasKey or hasValue"
    )


@step("has", "hasLabel", "hasId", "hasNot", "hasKey", "hasValue")
def compile_has(call: StepCall, c: Compiler) -> StepFn:
    """The has-family of filters."""
    test = element_test(call, c)
    return lambda travs: (t for t in travs if test(t.obj))


@step("is")
def compile_is(call: StepCall, c: Compiler) -> StepFn:
    """is(value|P)."""
    test = compile_predicate(call.args[0])
    return lambda travs: (t for t in travs if test(t.obj))


@step("filter")
def compile_filter(call: StepCall, c: Compiler) -> StepFn:
    """filter(traversal): keep traversers for which the traversal produces something."""
    pipeline = c.sub(call.args[0], "filter")
    return lambda travs: (t for t in travs if pipeline.has_result(t))


@step("not")
def compile_not(call: StepCall, c: Compiler) -> StepFn:
    """not(traversal)."""
    pipeline = c.sub(call.args[0], "not")
    return lambda travs: (t for t in travs if not pipeline.has_result(t))


@step("and", "or")
def compile_and_or(call: StepCall, c: Compiler) -> StepFn:
    """and(t1, t2, ...) / or(t1, t2, ...)."""
    pipelines = [c.sub(a, call.name) for a in call.args]
    combine = all if call.name == "and" else any
    return lambda travs: (t for t in travs if combine(p.has_result(t) for p in pipelines))


_COLLECTIONS = (list, tuple, set, frozenset)


def predicate_labels(p: P) -> Iterator[str]:
    """The as-labels a where() predicate names (its string arguments), in the order it names them."""
    if p.operator in ("and", "or"):
        yield from predicate_labels(p.value)
        yield from predicate_labels(p.other)
    elif p.operator == "not":
        yield from predicate_labels(p.value)
    else:
        for value in (p.value, p.other):
            values = value if isinstance(value, list) else [value]
            yield from (v for v in values if isinstance(v, str))


def _label_predicate(p: P, resolve: Callable[[str], Any]) -> P:
    """Replace the as-labels inside a where() predicate by the values they select."""
    if p.operator in ("and", "or"):
        return P(p.operator, _label_predicate(p.value, resolve), _label_predicate(p.other, resolve))
    if p.operator == "not":
        return P("not", _label_predicate(p.value, resolve))
    if p.operator in ("within", "without"):
        values = p.value if isinstance(p.value, list) else [p.value]
        resolved = [resolve(v) for v in values]
        if len(resolved) == 1 and isinstance(resolved[0], (list, tuple, set, frozenset)):
            resolved = list(resolved[0])
        return P(p.operator, resolved)
    return P(p.operator, resolve(p.value), resolve(p.other) if p.other is not None else None)


def _where_test(bytecode: Bytecode, c: Compiler) -> Callable[[Trav], bool]:
    """The test of a where() traversal: and/or/not of where patterns, or one pattern whose start as-label selects
    the start object and whose end as-label must equal a result."""
    instructions = [list(i) for i in bytecode.step_instructions]
    if len(instructions) == 1 and instructions[0][0] in ("and", "or", "not"):
        name, *args = instructions[0]
        children = [as_bytecode(a) for a in args]
        if children and all(child is not None for child in children):
            tests = [_where_test(child, c) for child in children]
            if name == "not":
                return lambda t: not tests[0](t)
            combine = all if name == "and" else any
            return lambda t: combine(test(t) for test in tests)
    start_label = instructions[0][1] if instructions and instructions[0][0] == "as" else None
    end_label = instructions[-1][1] if len(instructions) > 1 and instructions[-1][0] == "as" else None
    body = instructions[1 if start_label else 0 : -1 if end_label else None]
    inner = Bytecode()
    inner.step_instructions = body
    pipeline = c.compile(inner)

    def keep(t: Trav) -> bool:
        start = t
        if start_label is not None:
            value = select_value(t, start_label, Pop.last, "where", c.side_effects)
            if value is NOTHING:
                return False
            start = t.replace(value)
        if end_label is None:
            return pipeline.has_result(start)
        expected = select_value(t, end_label, Pop.last, "where", c.side_effects)
        return expected is not NOTHING and any(gremlin_eq(r.obj, expected) for r in pipeline.run((start,)))

    return keep


def _where_traversal(call: StepCall, c: Compiler) -> StepFn:
    """where(traversal): see _where_test."""
    keep = _where_test(as_bytecode(call.args[0]), c)
    return lambda travs: (t for t in travs if keep(t))


@step("where")
def compile_where(call: StepCall, c: Compiler) -> StepFn:
    """where(traversal) | where(P over as-labels) | where('a', P over as-labels), with by() projections."""
    if as_bytecode(call.args[0]) is not None:
        return _where_traversal(call, c)
    left_label = call.args[0] if len(call.args) == 2 else None
    predicate = call.args[-1]
    if not isinstance(predicate, P):
        raise TraversalError(
            f"where() expects a predicate or traversal, got {predicate!r}", hint="use where(P.eq('a'))"
        )
    # the by()s apply in turn, as a ring: the start, then each label in the order the predicate names them
    bys = by_functions(call.modulator_args("by"), c, "where")
    labels = [] if bys else list(predicate_labels(predicate))
    last: list[Any] = [None, None]  # (key, test): the test built from collections only, by identity and size

    def over_collections(t: Trav) -> Callable[[Any], bool] | None:
        """The test when every label names a collection (a side effect such as aggregate('x')): built once while
        the collections stay the same, instead of once per traverser; else None."""
        values = [select_value(t, label, Pop.last, "where", c.side_effects) for label in labels]
        if not values or not all(isinstance(v, _COLLECTIONS) for v in values):
            return None
        key = tuple((id(v), len(v)) for v in values)
        if last[0] != key:
            by_label = dict(zip(labels, values, strict=True))
            last[:] = [
                key,
                compile_predicate(
                    _label_predicate(predicate, lambda x: by_label.get(x, x) if isinstance(x, str) else x)
                ),
            ]
        return last[1]

    def keep(t: Trav) -> bool:
        if labels:
            test = over_collections(t)
            if test is not None:
                left = (
                    t.obj
                    if left_label is None
                    else select_value(t, left_label, Pop.last, "where", c.side_effects)
                )
                return left is not NOTHING and test(left)
        ring = itertools.cycle(bys) if bys else None

        def project(value: Any) -> Any:
            return value if ring is None else next(ring)(t.replace(value))

        left = t.obj if left_label is None else select_value(t, left_label, Pop.last, "where", c.side_effects)
        if left is NOTHING:
            return False
        left = project(left)
        missing = []

        def resolve(label: Any) -> Any:
            if not isinstance(label, str):
                return label
            value = select_value(t, label, Pop.last, "where", c.side_effects)
            if value is NOTHING:
                missing.append(label)
                return None
            return project(value)

        resolved = _label_predicate(predicate, resolve)
        if missing or left is NOTHING:
            return False
        return compile_predicate(resolved)(left)

    return lambda travs: (t for t in travs if keep(t))


def _local_items(obj: Any) -> list[Any] | None:
    if isinstance(obj, dict):
        return list(obj.items())
    if isinstance(obj, (list, tuple, set, frozenset)):
        return list(obj)
    return None


def _rebuild(obj: Any, items: list[Any]) -> Any:
    if isinstance(obj, dict):
        return dict(items)
    if isinstance(obj, (set, frozenset)):
        return set(items)
    return items


def _deduplicated(obj: Any, kept: list[Any]) -> Any:
    """dedup(local)'s result: a map stays a map; any other collection becomes a set, as in TinkerPop (a list
    when an item cannot be hashed in Python, e.g. a map)."""
    if isinstance(obj, dict):
        return dict(kept)
    try:
        return set(kept)
    except TypeError:
        return kept


@step("dedup")
def compile_dedup(call: StepCall, c: Compiler) -> StepFn:
    """dedup([Scope.local], labels...) with an optional by()."""
    local, args = call.scoped_args()
    labels = args
    bys = by_functions(call.modulator_args("by"), c, "dedup")
    by = bys[0] if bys else None
    if local:

        def dedup_local(t: Trav) -> Trav:
            items = _local_items(t.obj)
            if items is None:
                return t
            seen: set[Any] = set()
            kept = []
            for item in items:
                key = hash_key(by(t.replace(item)) if by else item)
                if key not in seen:
                    seen.add(key)
                    kept.append(item)
            return t.replace(_deduplicated(t.obj, kept))

        return lambda travs: (dedup_local(t) for t in travs)

    def key_of(t: Trav) -> Any:
        if labels:
            values = [select_value(t, label, Pop.last, "dedup") for label in labels]
            if by is not None:
                values = [by(t.replace(v)) for v in values]
            # a label whose by() gives nothing drops the traverser, as without labels
            return NOTHING if any(v is NOTHING for v in values) else hash_key(values)
        value = by(t) if by is not None else t.obj
        return NOTHING if value is NOTHING else hash_key(value)

    # inside repeat(): what was seen is kept across the loop's iterations (repeat() clears it when it starts)
    loop_seen: set[Any] | None = None if c.loop_state is None else c.loop_state.setdefault(id(call), set())

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        seen: set[Any] = set() if loop_seen is None else loop_seen
        for t in travs:
            key = key_of(t)
            if key is NOTHING or key in seen:
                continue
            seen.add(key)
            yield t if t.bulk == 1 else t.with_bulk(1)

    return run


def _int_arg(value: Any, step_name: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TraversalError(
            f"{step_name}() needs an integer {what}, got {value!r}", hint=f"pass an int {what}"
        )
    return value


def _global_range(low: int, high: int) -> StepFn:
    if low == 0 and high != -1:  # limit(n): the common case, without the window arithmetic per traverser

        def run_limit(travs: Iterator[Trav]) -> Iterator[Trav]:
            position = 0
            for t in travs:
                if position >= high:
                    return
                position += t.bulk
                yield t if position <= high else t.with_bulk(t.bulk - position + high)

        return run_limit

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        position = 0
        for t in travs:
            if high != -1 and position >= high:
                return
            start, end = position, position + t.bulk
            position = end
            take_from = max(start, low)
            take_to = end if high == -1 else min(end, high)
            if take_to > take_from:
                yield t if take_to - take_from == t.bulk else t.with_bulk(take_to - take_from)

    return run


def _local_range(low: int, high: int, single: bool) -> StepFn:
    def apply(t: Trav) -> Trav | None:
        items = _local_items(t.obj)
        if items is None:
            return t
        picked = items[low:] if high == -1 else items[low:high]
        if single and not isinstance(t.obj, dict):
            return t.replace(picked[0]) if len(picked) == 1 else (t.replace(picked) if picked else None)
        return t.replace(_rebuild(t.obj, picked))

    return lambda travs: (r for r in map(apply, travs) if r is not None)


def range_step(
    call: StepCall, low_high: Callable[[list[Any]], tuple[int, int]], single_when_one: bool
) -> StepFn:
    """Shared body of limit/range/skip: global over the stream or local over a collection."""
    local, args = call.scoped_args()
    low, high = low_high(args)
    return _local_range(low, high, single_when_one) if local else _global_range(low, high)


@step("limit")
def compile_limit(call: StepCall, c: Compiler) -> StepFn:
    """limit([Scope], n)."""
    return range_step(call, lambda a: (0, _int_arg(a[0], "limit", "count")), single_when_one=True)


@step("range")
def compile_range(call: StepCall, c: Compiler) -> StepFn:
    """range([Scope], low, high); high -1 means to the end."""

    def bounds(a: list[Any]) -> tuple[int, int]:
        low, high = _int_arg(a[0], "range", "low"), _int_arg(a[1], "range", "high")
        if high != -1 and high < low:
            raise TraversalError(
                f"range() high ({high}) must not be below low ({low})",
                hint="use range(low, high) with low <= high",
            )
        return low, high

    return range_step(call, bounds, single_when_one=True)


@step("skip")
def compile_skip(call: StepCall, c: Compiler) -> StepFn:
    """skip([Scope], n)."""
    return range_step(call, lambda a: (_int_arg(a[0], "skip", "count"), -1), single_when_one=False)


@step("tail")
def compile_tail(call: StepCall, c: Compiler) -> StepFn:
    """tail([Scope], n=1): the last n traversers (global) or items (local)."""
    local, args = call.scoped_args()
    n = _int_arg(args[0], "tail", "count") if args else 1
    if local:

        def tail_local(t: Trav) -> Trav:
            items = _local_items(t.obj)
            if items is None:
                return t
            picked = items[len(items) - n :] if n else []
            if n == 1 and not isinstance(t.obj, dict):
                return t.replace(picked[0]) if picked else t.replace([])
            return t.replace(_rebuild(t.obj, picked))

        return lambda travs: (tail_local(t) for t in travs)

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        collected = c.collect(travs, "tail()")
        remaining = n
        out: list[Trav] = []
        for t in reversed(collected):
            if remaining <= 0:
                break
            take = min(t.bulk, remaining)
            remaining -= take
            out.append(t if take == t.bulk else t.with_bulk(take))
        out.reverse()
        yield from out

    return run


def _path_slice(t: Trav, call: StepCall, bys: list[ByFn]) -> list[Any] | None:
    """Keys of the path's objects between from() and to(), projected by the by()s in turn; None when a by()
    gives nothing."""
    entries = t.path.entries() if t.path is not None else []
    start, end = 0, len(entries)
    for name, args in call.modulators:
        matches = [i for i, e in enumerate(entries) if args[0] in e.labels]
        if name == "from" and matches:
            start = matches[0]
        elif name == "to" and matches:
            end = matches[-1] + 1
    keys = []
    for i, entry in enumerate(entries[start:end]):
        by = round_robin(bys, i)
        value = entry.obj if by is None else by(t.replace(entry.obj))
        if value is NOTHING:
            return None
        keys.append(hash_key(value))
    return keys


@step("simplePath", "cyclicPath")
def compile_simple_path(call: StepCall, c: Compiler) -> StepFn:
    """simplePath(): no repeated objects on the path; cyclicPath(): some repeated object. by() compares
    projections of the objects instead; an object the by() gives nothing for drops the traverser."""
    want_simple = call.name == "simplePath"
    bys = by_functions(call.modulator_args("by"), c, call.name)

    def keep(t: Trav) -> bool:
        keys = _path_slice(t, call, bys)
        return keys is not None and (len(set(keys)) == len(keys)) == want_simple

    return lambda travs: (t for t in travs if keep(t))


@step("none", "discard")
def compile_none(call: StepCall, c: Compiler) -> StepFn:
    """none(): drop every traverser (what iterate() appends), after running the stream for its effects."""

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for _ in travs:
            pass
        return
        yield

    return run


@step("any", "all")
def compile_any_all(call: StepCall, c: Compiler) -> StepFn:
    """any(P) / all(P): keep lists (or other collections) where some / every item passes the predicate."""
    test = compile_predicate(call.args[0])
    combine = any if call.name == "any" else all

    def keep(t: Trav) -> bool:
        obj = t.obj
        if not isinstance(obj, (list, tuple, set, frozenset)):
            return False
        return combine(test(item) for item in obj) if obj or call.name == "any" else True

    return lambda travs: (t for t in travs if keep(t))


@step("coin")
def compile_coin(call: StepCall, c: Compiler) -> StepFn:
    """coin(p): keep each traverser with probability p."""
    probability = call.args[0]
    if isinstance(probability, bool) or not isinstance(probability, (int, float)):
        raise TraversalError(f"coin() needs a probability, got {probability!r}", hint="write coin(0.5)")
    return lambda travs: (t for t in travs if random.random() < probability)


@step("sample")
def compile_sample(call: StepCall, c: Compiler) -> StepFn:
    """sample([Scope.local,] n): n traversers (or collection items) picked at random."""
    args = [a for a in call.args if not isinstance(a, Scope)]
    local = bool(call.args) and call.args[0] == Scope.local
    n = _int_arg(args[0], "sample", "count")
    if local:

        def sample_local(t: Trav) -> Trav:
            items = _local_items(t.obj)
            if items is None:
                return t
            return t.replace(_rebuild(t.obj, random.sample(items, min(n, len(items)))))

        return lambda travs: (sample_local(t) for t in travs)

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        expanded = [t.with_bulk(1) for t in c.collect(travs, "sample()") for _ in range(t.bulk)]
        yield from random.sample(expanded, min(n, len(expanded)))

    return run
