"""A traversal's steps as the strategies and the compiler see them: one :class:`StepCall` per step, with its
modulators attached.

>>> from gremlin_python.process.graph_traversal import __
>>> [str(c) for c in group_steps(__.V().has("k", 1).repeat(__.out("x")).times(2).bytecode.step_instructions)]
['V()', "has('k', 1)", "repeat(__.out('x')).times(2)"]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gremlin_python.process.traversal import Bytecode, CardinalityValue, Direction, Scope, Traversal

from lineage_platform.errors import TraversalError

if TYPE_CHECKING:
    from lineage_platform.graph.embedded.strategies import NavigationWalk

# Instructions that modify the step before them instead of being steps themselves.
MODULATORS = frozenset({"by", "times", "until", "emit", "option", "with", "from", "to", "read", "write"})
# Modulators that may also come before the step they modify (until(...).repeat(...)).
LEADING_MODULATORS = frozenset({"until", "emit", "times"})
_DIRECTION_STEPS = {Direction.OUT: "out", Direction.IN: "in", Direction.BOTH: "both"}


@dataclass
class StepCall:
    """One step of a traversal with its arguments, modulators (by, times, option, ...) and `as` labels."""

    name: str
    args: list[Any]
    modulators: list[tuple[str, list[Any]]] = field(default_factory=list)
    leading: list[tuple[str, list[Any]]] = field(default_factory=list)
    folded: list[StepCall] = field(default_factory=list)  # steps a strategy folded into this one
    walk: NavigationWalk | None = None  # set by the navigation_walk strategy on a repeat() it applies to
    rows: list[dict[Any, Any]] | None = None  # maps of an inject() fuse_inject_merge gave a merge step
    starts_child: bool = False  # first step of a nested traversal (its input is already queued when it runs)

    def modulator_args(self, name: str) -> list[list[Any]]:
        """Argument lists of every modulator called ``name``, in order."""
        return [args for mod, args in self.modulators if mod == name]

    def scoped_args(self) -> tuple[bool, list[Any]]:
        """(local scope?, the arguments after a leading ``Scope``): ``dedup(Scope.local, 'a')`` → (True, ['a'])."""
        args = list(self.args)
        local = bool(args) and args[0] == Scope.local
        if args and isinstance(args[0], Scope):
            args.pop(0)
        return local, args

    def __str__(self) -> str:
        lead = "".join(f"{name}({_texts(args)})." for name, args in self.leading)
        inner = ", ".join(filter(None, [_texts(self.args), ", ".join(map(str, self.folded))]))
        mods = "".join(f".{name}({_texts(args)})" for name, args in self.modulators)
        walk = "" if self.walk is None else f" {{{self.walk}}}"
        rows = "" if self.rows is None else f" {{over {len(self.rows)} injected rows}}"
        return f"{lead}{self.name}({inner}){mods}{walk}{rows}"


def _texts(values: list[Any]) -> str:
    return ", ".join(map(_text, values))


def _text(value: Any) -> str:
    """A step argument as Gremlin-like text: nested traversals as ``__.step(...)``, step lists in brackets."""
    if isinstance(value, list) and all(isinstance(v, StepCall) for v in value):
        return f"[{', '.join(map(str, value))}]"
    nested = as_bytecode(value)
    if nested is not None:
        return "__." + ".".join(f"{name}({_texts(args)})" for name, *args in nested.step_instructions)
    return repr(value)


def as_bytecode(value: Any) -> Bytecode | None:
    """The bytecode of a nested traversal argument (Bytecode or GraphTraversal), else None."""
    if isinstance(value, CardinalityValue):
        return None
    if isinstance(value, Bytecode):
        return value
    if isinstance(value, Traversal):
        return value.bytecode
    return None


def _modulates_previous_repeat(calls: list[StepCall], name: str) -> bool:
    """Whether an emit()/until()/times() belongs to the repeat() just before it: as in TinkerPop, only when
    that repeat has no such modulator yet (else it leads the next repeat())."""
    if not calls or calls[-1].name != "repeat":
        return False
    kinds = {"emit": ("emit",), "until": ("until", "times"), "times": ("until", "times")}[name]
    return not any(existing in kinds for existing, _ in (*calls[-1].leading, *calls[-1].modulators))


def group_steps(instructions: list[list[Any]]) -> list[StepCall]:
    """Attach modulators to the step they modify, keeping steps in order."""
    calls: list[StepCall] = []
    pending: list[tuple[str, list[Any]]] = []
    for name, *args in instructions:
        if name in LEADING_MODULATORS and not _modulates_previous_repeat(calls, name):
            pending.append((name, args))
            continue
        if name == "to" and args and isinstance(args[0], Direction):
            name, args = _DIRECTION_STEPS[args[0]], args[1:]
        if name in MODULATORS:
            if not calls:
                raise TraversalError(
                    f"{name}() must follow a step it modulates",
                    hint=f"put {name}() after the step it configures",
                )
            calls[-1].modulators.append((name, args))
            continue
        if pending and name != "repeat":
            raise TraversalError(
                f"{pending[0][0]}() must be used with repeat()",
                hint="write until()/emit()/times() next to repeat()",
            )
        calls.append(StepCall(name, args, leading=pending))
        pending = []
    if pending:
        raise TraversalError(
            f"{pending[0][0]}() must be used with repeat()",
            hint="write until()/emit()/times() next to repeat()",
        )
    return calls
