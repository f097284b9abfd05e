"""Side-effect steps: sideEffect, aggregate, store, cap."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lineage_platform.errors import TraversalError
from lineage_platform.graph.embedded.modulation import NOTHING, by_functions
from lineage_platform.graph.embedded.pipeline import Compiler, StepCall, StepFn, Trav, step
from lineage_platform.graph.embedded.steps_reduce import apply_operator, operator_name


@step("sideEffect")
def compile_side_effect(call: StepCall, c: Compiler) -> StepFn:
    """sideEffect(t): run t for each traverser and pass the traverser on."""
    branch = c.sub(call.args[0], "sideEffect")

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            for _ in branch.run((t.alone(),)):
                pass
            yield t

    return run


@step("aggregate", "store")
def compile_aggregate(call: StepCall, c: Compiler) -> StepFn:
    """aggregate(key): collect every object into a side-effect list (a barrier); store/aggregate(local) are lazy."""
    local, args = call.scoped_args()
    lazy = call.name == "store" or local
    key = args[0]
    bys = by_functions(call.modulator_args("by"), c, call.name)
    project = bys[0] if bys else (lambda t: t.obj)
    operator = c.side_effect_operators.get(key)
    # addAll and assign take the aggregated values as one collection, other operators fold them one by one
    whole = operator is not None and operator_name(operator) in ("addall", "assign")

    c.side_effects.setdefault(key, [])  # declared when compiled: cap() of one never reached gives []

    def values(t: Trav) -> list[Any]:
        value = project(t)
        return [] if value is NOTHING else [value] * t.bulk

    def fold_in(new: list[Any]) -> None:
        if not new:
            return
        current = c.side_effects[key]
        if whole:
            c.side_effects[key] = apply_operator(operator, current, new, call.name)
        elif operator is not None:
            for value in new:
                current = apply_operator(operator, current, value, call.name)
            c.side_effects[key] = current
        elif isinstance(current, list):
            current.extend(new)
        elif isinstance(current, set):
            current.update(new)
        else:
            raise TraversalError(
                f"{call.name}('{key}') cannot add to the side effect {current!r} of type {type(current).__name__}",
                hint="start it as a list or set, or give withSideEffect() an Operator to fold values with",
            )

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        if lazy:
            for t in travs:
                fold_in(values(t))
                yield t
            return
        collected = c.collect(travs, call.name + "()")
        fold_in(
            c.expand((t.replace(v) for t in collected if (v := project(t)) is not NOTHING), call.name + "()")
        )
        yield from collected

    return run


@step("cap")
def compile_cap(call: StepCall, c: Compiler) -> StepFn:
    """cap(keys...): after the stream is exhausted, the side effect (or a map of several)."""
    keys = list(call.args)

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for _ in travs:
            pass
        missing = [k for k in keys if k not in c.side_effects]
        if missing:
            raise TraversalError(
                f"cap() names unknown side effects {missing}", hint="cap() a key set by aggregate()"
            )
        if len(keys) == 1:
            yield c.start(c.side_effects[keys[0]])
        else:
            yield c.start({k: c.side_effects[k] for k in keys})

    return run
