"""Reducing and collecting steps: count, sum, min, max, mean, fold, order, group, groupCount."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

from gremlin_python.process.traversal import Order
from gremlin_python.statics import long
from gremlin_python.structure.graph import Path

from lineage_platform.errors import TraversalError
from lineage_platform.graph.embedded.modulation import NOTHING, ByFn, by_functions, value_function
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
from lineage_platform.graph.embedded.values import (
    Incomparable,
    MapEntry,
    compare,
    hash_key,
    hashable_key,
    is_number,
    order_key,
)


def _local_values(obj: Any) -> list[Any]:
    if isinstance(obj, dict):
        return [MapEntry(item) for item in obj.items()]
    if isinstance(obj, (list, tuple, set, frozenset)) and not isinstance(obj, MapEntry):
        return list(obj)
    if isinstance(obj, Path):
        return list(obj.objects)
    return [obj]


def _reducer(
    name: str, reduce: Callable[[list[tuple[Any, int]]], Any]
) -> Callable[[StepCall, Compiler], StepFn]:
    """A step reducing (value, bulk) pairs: globally over the stream, or locally over each collection."""

    def compile_reduce(call: StepCall, c: Compiler) -> StepFn:
        local, _ = call.scoped_args()
        if local:

            def run_local(travs: Iterator[Trav]) -> Iterator[Trav]:
                for t in travs:
                    result = reduce([(v, 1) for v in _local_values(t.obj)])
                    if result is not NOTHING:
                        yield t.split(result)

            return run_local

        def run(travs: Iterator[Trav]) -> Iterator[Trav]:
            result = reduce([(t.obj, t.bulk) for t in travs])
            if result is not NOTHING:
                yield c.start(result)

        return run

    return step(name)(compile_reduce)


def _count(pairs: list[tuple[Any, int]]) -> Any:
    return long(sum(bulk for _, bulk in pairs))


def _numbers(pairs: list[tuple[Any, int]], step_name: str) -> list[tuple[Any, int]]:
    kept = [(v, b) for v, b in pairs if v is not None]
    for value, _ in kept:
        if not is_number(value):
            raise TraversalError(
                f"{step_name}() needs numbers but got {type(value).__name__} {value!r}",
                hint=f"apply {step_name}() to numeric values (e.g. values('age').{step_name}())",
            )
    return kept


def _only_nulls(pairs: list[tuple[Any, int]]) -> Any:
    """What sum/mean/min/max give when nothing is left after skipping nulls: null if there were nulls, else nothing."""
    return None if pairs else NOTHING


def _sum(pairs: list[tuple[Any, int]]) -> Any:
    numbers = _numbers(pairs, "sum")
    if not numbers:
        return _only_nulls(pairs)
    return sum(v * b for v, b in numbers)


def _mean(pairs: list[tuple[Any, int]]) -> Any:
    numbers = _numbers(pairs, "mean")
    if not numbers:
        return _only_nulls(pairs)
    return sum(v * b for v, b in numbers) / sum(b for _, b in numbers)


def _extreme(step_name: str, better: int) -> Callable[[list[tuple[Any, int]], Any], Any]:
    def reduce(pairs: list[tuple[Any, int]]) -> Any:
        best: Any = NOTHING
        for value, _ in pairs:
            if value is None:
                continue
            if best is NOTHING:
                best = value
                continue
            try:
                if compare(value, best) == better:
                    best = value
            except Incomparable:
                raise TraversalError(
                    f"{step_name}() cannot compare {value!r} with {best!r}",
                    hint=f"apply {step_name}() to values of one comparable type",
                ) from None
        return _only_nulls(pairs) if best is NOTHING else best

    return reduce


_reducer("count", _count)
_reducer("sum", _sum)
_reducer("mean", _mean)
_reducer("min", _extreme("min", -1))
_reducer("max", _extreme("max", 1))


def _add_all(a: Any, b: Any) -> Any:
    if isinstance(a, dict):
        return {**a, **b}
    if isinstance(a, list):
        return list(a) + list(b)
    return set(a) | set(b)


# Keyed by the operator's normalised name: gremlinpython has separate members for aliases (addAll/add_all).
_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "sum": lambda a, b: a + b,
    "sumlong": lambda a, b: a + b,
    "minus": lambda a, b: a - b,
    "mult": lambda a, b: a * b,
    "div": lambda a, b: a / b if isinstance(a, float) or isinstance(b, float) else a // b,
    "min": min,
    "max": max,
    "assign": lambda a, b: b,
    "and": lambda a, b: a and b,
    "or": lambda a, b: a or b,
    "addall": _add_all,
}


def operator_name(operator: Any) -> str:
    """An Operator's normalised name (``addAll``, ``add_all`` -> ``addall``; ``and_`` -> ``and``)."""
    return getattr(operator, "name", "").rstrip("_").replace("_", "").lower()


def apply_operator(operator: Any, a: Any, b: Any, step_name: str) -> Any:
    """Apply a gremlin Operator (sum, minus, mult, div, min, max, assign, and, or, addAll)."""
    fn = _OPERATORS.get(operator_name(operator))
    if fn is None:
        raise TraversalError(
            f"{step_name}() does not support operator {operator!r}", hint="use an Operator value"
        )
    return fn(a, b)


@step("fold")
def compile_fold(call: StepCall, c: Compiler) -> StepFn:
    """fold() into a list, or fold(seed, Operator)."""
    if call.args:
        seed, operator = call.args[0], call.args[1]

        def run_seeded(travs: Iterator[Trav]) -> Iterator[Trav]:
            acc = seed
            for t in travs:
                for done in range(t.bulk):
                    if not done % 1024:
                        c.check_cancelled()
                    acc = apply_operator(operator, acc, t.obj, "fold")
            yield c.start(acc)

        return run_seeded

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        yield c.start(c.expand(travs, "fold()"))

    return run


Comparator = tuple[ByFn, Any]


def order_comparators(call: StepCall, c: Compiler) -> list[Comparator]:
    """The (projection, Order) pairs of order()'s by() modulators (identity ascending when none)."""
    comparators: list[Comparator] = []
    for args in call.modulator_args("by"):
        direction = next((a for a in args if isinstance(a, Order)), Order.asc)
        projection = [a for a in args if not isinstance(a, Order)]
        fn = by_functions([projection], c, "order")[0]
        comparators.append((fn, direction))
    return comparators or [(lambda t: t.obj, Order.asc)]


def sort_traversers(travs: list[Trav], comparators: list[Comparator]) -> list[Trav]:
    """Sort by the comparators (first is most significant); unproductive projections drop the traverser."""
    if not travs:
        return travs
    keyed = []
    for t in travs:
        keys = [fn(t) for fn, _ in comparators]
        if any(k is NOTHING for k in keys):
            continue
        keyed.append((keys, t))
    for index in reversed(range(len(comparators))):
        direction = comparators[index][1]
        if direction == Order.shuffle:
            random.shuffle(keyed)
        else:
            keyed.sort(key=lambda item: order_key(item[0][index]), reverse=direction == Order.desc)
    return [t for _, t in keyed]


@step("order")
def compile_order(call: StepCall, c: Compiler) -> StepFn:
    """order([Scope.local]).by(...): sort the stream, or each collection."""
    local, _ = call.scoped_args()
    comparators = order_comparators(call, c)
    if local:

        def order_local(t: Trav) -> Trav:
            if not isinstance(t.obj, (dict, list, tuple, set, frozenset)) or isinstance(t.obj, MapEntry):
                return t
            items = _local_values(t.obj)
            ordered = sort_traversers([t.replace(item) for item in items], comparators)
            values = [o.obj for o in ordered]
            if isinstance(t.obj, dict):
                return t.replace(dict(values))
            return t.replace(values)

        return lambda travs: (order_local(t) for t in travs)

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        yield from sort_traversers(c.collect(travs, "order()"), comparators)

    return run


def group_value_reducer(args: list[Any] | None, c: Compiler) -> Callable[[list[Trav]], Any]:
    """How group() turns one group's traversers into its value: a list of the objects (or of a by('key')/by(T)
    projection), or the first result of a by(traversal) run over all of them."""
    if not args:
        return lambda travs: c.expand(travs, "group()")
    nested = as_bytecode(args[0])
    if nested is None:
        project = value_function(args[0], c, "group")

        def fold_projection(travs: list[Trav]) -> list[Any]:
            projected = (t.replace(value) for t in travs if (value := project(t)) is not NOTHING)
            return c.expand(projected, "group()")

        return fold_projection
    pipeline: Pipeline = c.compile(nested)

    def apply(travs: list[Trav]) -> Any:
        # bulk equal members first (as TinkerPop's lazy barriers do): a group often holds many copies of a vertex
        result = next(pipeline.run(merge_bulks([t.with_bulk(t.bulk) for t in travs])), None)
        return NOTHING if result is None else result.obj

    return apply


Grouper = Callable[[list[Trav], dict[Any, tuple[Any, list[Trav]]]], dict[Any, Any]]


def _grouper(call: StepCall, c: Compiler, counting: bool) -> Grouper:
    """A function adding traversers to ``members`` (hash key -> (map key, traversers)) and returning the map."""
    bys = call.modulator_args("by")
    key_fn = by_functions(bys[:1], c, call.name)[0] if bys else (lambda t: t.obj)
    reduce_values = None if counting else group_value_reducer(bys[1] if len(bys) > 1 else None, c)

    def group(travs: list[Trav], members: dict[Any, tuple[Any, list[Trav]]]) -> dict[Any, Any]:
        for t in travs:
            key = key_fn(t)
            if key is NOTHING:
                continue
            hk = hash_key(key)
            if hk not in members:
                members[hk] = (hashable_key(key), [])
            members[hk][1].append(t)
        out: dict[Any, Any] = {}
        for key, group_travs in members.values():
            if counting:
                out[key] = long(sum(t.bulk for t in group_travs))
            else:
                value = reduce_values(group_travs)
                if value is not NOTHING:
                    out[key] = value
        return out

    return group


@step("group", "groupCount")
def compile_group(call: StepCall, c: Compiler) -> StepFn:
    """group([key]).by(key).by(value) / groupCount([key]).by(key): a map, or a side effect when named (which
    keeps growing while the step runs again, e.g. inside repeat())."""
    group = _grouper(call, c, counting=call.name == "groupCount")
    side_effect_key = call.args[0] if call.args else None
    if side_effect_key is None:

        def run(travs: Iterator[Trav]) -> Iterator[Trav]:
            yield c.start(group(c.collect(travs, call.name + "()"), {}))

        return run

    members = c.group_members.setdefault(side_effect_key, {})
    c.side_effects.setdefault(
        side_effect_key, {}
    )  # declared when compiled: cap() of an unreached one gives {}

    def run_side_effect(travs: Iterator[Trav]) -> Iterator[Trav]:
        collected = c.collect(travs, call.name + "()")
        c.side_effects[side_effect_key] = group(collected, members)
        yield from collected

    return run_side_effect
