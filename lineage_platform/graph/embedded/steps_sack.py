"""sack(): read the traverser's sack, or fold a value into it with an Operator (withSack sets the initial value)."""

from __future__ import annotations

from collections.abc import Iterator

from lineage_platform.errors import TraversalError
from lineage_platform.graph.embedded.modulation import NOTHING, by_functions
from lineage_platform.graph.embedded.pipeline import Compiler, StepCall, StepFn, Trav, step
from lineage_platform.graph.embedded.steps_reduce import apply_operator, operator_name


@step("sack")
def compile_sack(call: StepCall, c: Compiler) -> StepFn:
    """sack(): the sack value; sack(Operator).by(x): sack = Operator(sack, x) and the traverser goes on."""
    if not call.args:
        return lambda travs: (t.split(t.sack) for t in travs)
    operator = call.args[0]
    if c.sack_initial is None and operator_name(operator) != "assign":  # assign needs no value to start from
        raise TraversalError(
            "sack() needs a sack: start with g.withSack(initial)", hint="use g.withSack(0) first"
        )
    bys = by_functions(call.modulator_args("by"), c, "sack")
    project = bys[0] if bys else (lambda t: t.obj)

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            value = project(t)
            if value is NOTHING:
                continue
            yield Trav(t.obj, t.bulk, t.path, t.loops, apply_operator(operator, t.sack, value, "sack"))

    return run
