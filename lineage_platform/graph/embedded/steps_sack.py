"""sack(): read the traverser's sack, or fold a value into it with an Operator (withSack sets the initial value;
without it the sack starts null); barrier(), which merges traversers and so their sacks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gremlin_python.process.traversal import Barrier

from lineage_platform.errors import TraversalError
from lineage_platform.graph.embedded.modulation import NOTHING, by_functions
from lineage_platform.graph.embedded.pipeline import Compiler, StepCall, StepFn, Trav, merge_bulks, step
from lineage_platform.graph.embedded.steps_reduce import apply_operator, operator_name
from lineage_platform.graph.embedded.values import hash_key, is_number


def _null_sack(operator: object, value: object) -> object:
    """An operator applied to an empty sack (no withSack()), as TinkerPop's null arithmetic has it:
    assign, min and max take the value; sum, minus, mult, div and the rest stay null."""
    return value if operator_name(operator) in ("assign", "min", "max") else None


@step("sack")
def compile_sack(call: StepCall, c: Compiler) -> StepFn:
    """sack(): the sack value; sack(Operator).by(x): sack = Operator(sack, x) and the traverser goes on."""
    if not call.args:
        return lambda travs: (t.split(t.sack) for t in travs)
    operator = call.args[0]
    bys = by_functions(call.modulator_args("by"), c, "sack")
    project = bys[0] if bys else (lambda t: t.obj)

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            value = project(t)
            if value is NOTHING:
                continue
            sack = (
                _null_sack(operator, value)
                if t.sack is None
                else apply_operator(operator, t.sack, value, "sack")
            )
            yield Trav(t.obj, t.bulk, t.path, t.loops, sack)

    return run


def _merge_sacks(travs: list[Trav], operator: Any) -> list[Trav]:
    """Merge traversers equal but for their sacks: bulks add up, sacks fold with the withSack() merge operator."""
    merged: dict[Any, Trav] = {}
    for t in travs:
        key = (hash_key(t.obj), id(t.path) if t.path is not None else None, t.loops)
        first = merged.get(key)
        if first is None:
            merged[key] = t
        else:
            sack = apply_operator(operator, first.sack, t.sack, "barrier")
            merged[key] = Trav(first.obj, first.bulk + t.bulk, first.path, first.loops, sack)
    return list(merged.values())


def _norm_sacks(travs: list[Trav]) -> list[Trav]:
    """Barrier.normSack: scale the numeric sacks so that they (weighted by bulk) add up to 1."""
    if any(not is_number(t.sack) for t in travs):
        raise TraversalError(
            "barrier(normSack) needs numeric sacks", hint="start the sacks with withSack(1.0) or similar"
        )
    total = sum(t.sack * t.bulk for t in travs)
    if not total:
        return travs
    return [Trav(t.obj, t.bulk, t.path, t.loops, t.sack / total) for t in travs]


@step("barrier")
def compile_barrier(call: StepCall, c: Compiler) -> StepFn:
    """barrier([Barrier.normSack]): collect the stream and merge equal traversers (their sacks with the
    withSack() merge operator when one is given; counted once under withBulk(false)); normSack then scales
    the sacks to add up to 1."""
    norm = bool(call.args) and call.args[0] in (Barrier.normSack, Barrier.norm_sack)

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        collected = [t.with_bulk(t.bulk) for t in c.collect(travs, "barrier()")]
        merged = _merge_sacks(collected, c.sack_merge) if c.sack_merge is not None else merge_bulks(collected)
        if not c.bulk:
            merged = [t.with_bulk(1) for t in merged]
        yield from _norm_sacks(merged) if norm else merged

    return run
