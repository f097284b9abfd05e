"""math("expression"): arithmetic over the current object (`_`), as-labels, side effects and map keys.

The expression is parsed once with Python's `ast` and only numbers, variables, + - * / % ^, unary minus and a fixed
set of functions are accepted, so no user text is ever executed. by() modulators apply to the variables in the
order they first appear. A function may go without parentheses, as exp4j allows (``sin _`` is ``sin(_)``). The
result is always a float, as in Gremlin.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Iterator
from typing import Any

from gremlin_python.process.traversal import Pop

from lineage_platform.errors import TraversalError
from lineage_platform.graph.embedded.modulation import NOTHING, by_functions
from lineage_platform.graph.embedded.pipeline import Compiler, StepCall, StepFn, Trav, step
from lineage_platform.graph.embedded.scoping import select_value
from lineage_platform.graph.embedded.values import is_number


def _divide(a: float, b: float) -> float:
    """IEEE division as the JVM does it: x/0 is +-Infinity, 0/0 is NaN."""
    if b:
        return a / b
    return math.copysign(math.inf, a) if a else math.nan


def _remainder(a: float, b: float) -> float:
    return math.fmod(a, b) if b else math.nan


_BINARY: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: _divide,
    ast.Mod: _remainder,
    ast.Pow: math.pow,
}
_FUNCTIONS: dict[str, Callable[[float], float]] = {
    "abs": abs,
    "acos": math.acos,
    "asin": math.asin,
    "atan": math.atan,
    "cbrt": lambda x: math.copysign(abs(x) ** (1 / 3), x),
    "ceil": math.ceil,
    "cos": math.cos,
    "cosh": math.cosh,
    "exp": math.exp,
    "floor": math.floor,
    "log": math.log,
    "log10": math.log10,
    "log2": math.log2,
    "signum": lambda x: math.copysign(1.0, x) if x else 0.0,
    "sin": math.sin,
    "sinh": math.sinh,
    "sqrt": math.sqrt,
    "tan": math.tan,
    "tanh": math.tanh,
}


_TOKEN = re.compile(r"\s*([A-Za-z_][A-Za-z_0-9]*|\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+|\S)")


def _explicit_calls(expression: str) -> str:
    """Add the parentheses exp4j (Gremlin's math engine) lets a function go without: a function name not
    followed by ``(`` applies to the rest of its enclosing group, so ``sin _ + 1`` is ``sin(_ + 1)``."""
    tokens = _TOKEN.findall(expression)
    out: list[str] = []
    pending = [0]  # parentheses to close at the end of each open group, innermost last
    for i, token in enumerate(tokens):
        if token == ")" and len(pending) > 1:
            token = ")" * pending.pop() + token
        out.append(token)
        if token == "(":
            pending.append(0)
        elif token in _FUNCTIONS and (i + 1 == len(tokens) or tokens[i + 1] != "("):
            out.append("(")
            pending[-1] += 1
    out.append(")" * pending[0])
    return " ".join(filter(None, out))


def _variables(tree: ast.AST) -> list[str]:
    """Variable names in order of first appearance (function names excluded)."""
    functions = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and id(node) not in functions and node.id not in names:
            names.append(node.id)
    return names


def _evaluate(node: ast.AST, values: dict[str, float], expression: str) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body, values, expression)
    if isinstance(node, ast.Constant) and is_number(node.value):
        return float(node.value)
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left = _evaluate(node.left, values, expression)
        return _BINARY[type(node.op)](left, _evaluate(node.right, values, expression))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _evaluate(node.operand, values, expression)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
        if len(node.args) != 1:
            raise TraversalError(
                f"math(): {node.func.id}() takes one argument in {expression!r}", hint="fix it"
            )
        return float(_FUNCTIONS[node.func.id](_evaluate(node.args[0], values, expression)))
    raise TraversalError(
        f"math() cannot evaluate {ast.unparse(node)!r} in {expression!r}",
        hint="use numbers, variables, + - * / % ^ and functions such as sqrt(), abs(), sin()",
    )


@step("math")
def compile_math(call: StepCall, c: Compiler) -> StepFn:
    """math(expression) with by() projections for the variables."""
    expression = call.args[0] if call.args else None
    if not isinstance(expression, str):
        raise TraversalError("math() needs an expression string", hint="write math('_ + 1')")
    try:
        tree = ast.parse(_explicit_calls(expression).replace("^", "**"), mode="eval")
    except SyntaxError as exc:
        raise TraversalError(
            f"math() cannot parse {expression!r}: {exc.msg}", hint="check the expression"
        ) from None
    names = _variables(tree)
    bys = by_functions(call.modulator_args("by"), c, "math")

    def value_of(t: Trav, index: int, name: str) -> Any:
        raw = t.obj if name == "_" else select_value(t, name, Pop.last, "math", c.side_effects)
        if raw is NOTHING:
            raise TraversalError(f"math(): variable {name!r} is not bound", hint="label it with as() first")
        if bys:
            raw = bys[index % len(bys)](t.replace(raw))
        return raw

    def compute(t: Trav) -> float | None:
        values = {}
        for index, name in enumerate(names):
            value = value_of(t, index, name)
            if value is NOTHING:
                return None
            if not is_number(value):
                raise TraversalError(
                    f"math(): {name} is {value!r}, not a number", hint="project numbers with by()"
                )
            values[name] = float(value)
        return _evaluate(tree, values, expression)

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            result = compute(t)
            if result is not None:
                yield t.split(result)

    return run
