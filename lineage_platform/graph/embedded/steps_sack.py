"""sack(): read the traverser's sack, or fold a value into it with an Operator (withSack sets the initial value;
without it the sack starts null)."""

from __future__ import annotations

from collections.abc import Iterator

from lineage_platform.graph.embedded.modulation import NOTHING, by_functions
from lineage_platform.graph.embedded.pipeline import Compiler, StepCall, StepFn, Trav, step
from lineage_platform.graph.embedded.steps_reduce import apply_operator, operator_name


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
