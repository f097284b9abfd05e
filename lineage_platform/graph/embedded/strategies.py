"""The embedded engine's rewrites, as TinkerPop keeps them: an ordered list of strategies over a traversal's steps.

Each strategy is a function from a step list to a step list (and the :class:`Context` of the compilation); the
compiler applies :data:`STRATEGIES` in order to every traversal, nested ones included, before it compiles the
steps. A strategy returns new :class:`StepCall` objects for what it changes and leaves its input untouched, so
:func:`explain` can show the list before and after each one.

>>> from gremlin_python.process.graph_traversal import __
>>> print(explain(__.V().has("name", "a").repeat(__.out("x")).emit().dedup().id_()))
original            V(), has('name', 'a'), repeat(__.out('x')).emit(), dedup(), id()
fold_start_filters  V(has('name', 'a')), repeat(__.out('x')).emit(), dedup(), id()
infix_connectives   V(has('name', 'a')), repeat(__.out('x')).emit(), dedup(), id()
navigation_walk     V(has('name', 'a')), repeat(__.out('x')).emit() {walk: out('x') each vertex once, as id}
fuse_inject_merge   V(has('name', 'a')), repeat(__.out('x')).emit() {walk: out('x') each vertex once, as id}
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gremlin_python.process.traversal import Bytecode, Traversal

from lineage_platform.graph.embedded.step_calls import StepCall, as_bytecode, group_steps


@dataclass(frozen=True)
class Context:
    """What a strategy may depend on besides the steps: whether the traversal is a root one (its first step is
    its start) and the execution's settings (full paths tracked, a sack)."""

    anonymous: bool = True
    full_paths: bool = False
    sack: bool = False


Strategy = Callable[[list[StepCall], Context], list[StepCall]]

# what a start step absorbs (it then looks the filters up in its indexes), and what addV()/addE() absorb
_FOLDS = {
    "V": frozenset({"has", "hasLabel", "hasId"}),
    "E": frozenset({"has", "hasLabel", "hasId"}),
    "addV": frozenset({"property"}),
    "addE": frozenset({"property"}),
}


def fold_start_filters(calls: list[StepCall], context: Context) -> list[StepCall]:
    """``V().has(...)``/``E().hasLabel(...)`` fold the filters into the start step (index lookups), ``addV()``/
    ``addE()`` fold the ``property()`` steps that follow them (one element with its properties).

    >>> [str(c) for c in fold_start_filters([StepCall("V", []), StepCall("has", ["k", 1])], Context())]
    ["V(has('k', 1))"]
    """
    out: list[StepCall] = []
    for call in calls:
        host = out[-1] if out else None
        if host is None or call.name not in _FOLDS.get(host.name, ()):
            out.append(call)
        elif host.name == "addE" and all(name in ("from", "to") for name, _ in call.modulators):
            # addE().property(...).from(x): from()/to() modulate the addE() the property() was folded into
            bare = replace(call, modulators=[])
            out[-1] = replace(
                host, folded=[*host.folded, bare], modulators=[*host.modulators, *call.modulators]
            )
        elif not call.modulators and (not host.modulators or host.name in ("addV", "addE")):
            out[-1] = replace(host, folded=[*host.folded, call])
        else:
            out.append(call)
    return out


def _split(calls: list[StepCall], connective: str) -> list[list[StepCall]]:
    parts: list[list[StepCall]] = [[]]
    for call in calls:
        if call.name == connective and not call.args:
            parts.append([])
        else:
            parts[-1].append(call)
    return parts


def infix_connectives(calls: list[StepCall], context: Context) -> list[StepCall]:
    """Infix ``a.and().b`` / ``a.or().b`` become and(a, b) / or(a, b) filters; and binds tighter than or. In a
    root traversal the start step and its as-labels stay outside the filter.

    >>> calls = [StepCall("out", ["x"]), StepCall("or", []), StepCall("in", ["y"])]
    >>> [str(c) for c in infix_connectives(calls, Context())]
    ["or([out('x')], [in('y')])"]
    """
    if not any(c.name in ("and", "or") and not c.args for c in calls):
        return calls
    start = 0
    if not context.anonymous:
        start = 1
        while start < len(calls) and calls[start].name == "as":
            start += 1

    def conjunction(part: list[StepCall]) -> list[StepCall]:
        operands = _split(part, "and")
        return operands[0] if len(operands) == 1 else [StepCall("and", list(operands))]

    alternatives = [conjunction(part) for part in _split(calls[start:], "or")]
    if len(alternatives) == 1:
        return calls[:start] + alternatives[0]
    return [*calls[:start], StepCall("or", alternatives)]


Hop = tuple[tuple[bool, ...], tuple[str, ...]]  # (directions as "upstream?" flags, edge labels)


@dataclass(frozen=True)
class NavigationWalk:
    """How repeat() walks a pure navigation body: breadth-first over vertex -> bulk maps.

    ``limit``: times(n) or None; ``until_first``/``emit_first``: whether times()/emit() lead the repeat() (None:
    absent); ``distinct``: a dedup() right after an emitting repeat() was absorbed (each vertex once);
    ``project``: "id"/"label" when the step after that dedup() was absorbed too."""

    hops: tuple[Hop, ...]
    limit: int | None = None
    until_first: bool | None = None
    emit_first: bool | None = None
    distinct: bool = False
    project: str | None = None

    def __str__(self) -> str:
        hops = ".".join(
            f"{'both' if len(ups) == 2 else 'in' if ups[0] else 'out'}({', '.join(map(repr, labels))})"
            for ups, labels in self.hops
        )
        limit = "" if self.limit is None else f" {self.limit} times"
        distinct = " each vertex once" if self.distinct else ""
        project = f", as {self.project}" if self.project else ""
        return f"walk: {hops}{limit}{distinct}{project}"


def navigation_hops(body: Any) -> tuple[Hop, ...] | None:
    """The hops of a body made only of out/in/both(labels) steps, else None."""
    bytecode = as_bytecode(body)
    if bytecode is None or not bytecode.step_instructions:
        return None
    hops: list[Hop] = []
    for call in group_steps(bytecode.step_instructions):
        if (
            call.name not in ("out", "in", "both")
            or call.modulators
            or not all(isinstance(a, str) for a in call.args)
        ):
            return None
        directions = {"out": (False,), "in": (True,), "both": (False, True)}[call.name]
        hops.append((directions, tuple(call.args)))
    return tuple(hops)


def _walk(call: StepCall, context: Context) -> NavigationWalk | None:
    """The walk a repeat() step can take: a pure navigation body, no full paths or sack, until() absent or
    times(n), emit() absent or unconditional."""
    if call.name != "repeat" or call.walk is not None or context.full_paths or context.sack:
        return None
    args = call.args[1:] if len(call.args) == 2 and isinstance(call.args[0], str) else call.args
    hops = navigation_hops(args[0]) if args else None
    if hops is None:
        return None
    limit: int | None = None
    until_first = emit_first = None
    for first, (name, mod_args) in [(True, m) for m in call.leading] + [(False, m) for m in call.modulators]:
        if name == "times" and isinstance(mod_args[0], int) and not isinstance(mod_args[0], bool):
            limit, until_first = mod_args[0], first
        elif name == "emit" and not mod_args:
            emit_first = first
        else:
            return None
    return NavigationWalk(hops, limit, until_first, emit_first)


def _plain(call: StepCall | None, *names: str) -> bool:
    return call is not None and call.name in names and not call.args and not call.modulators


def navigation_walk(calls: list[StepCall], context: Context) -> list[StepCall]:
    """repeat() over a pure navigation body walks breadth-first over vertex -> bulk maps; an emitting one
    followed by a plain dedup() absorbs it (each vertex is walked once: breadth-first, the first visit has the
    most hops left), and an id()/label() right after that dedup() too.

    >>> from gremlin_python.process.graph_traversal import __
    >>> calls = [StepCall("repeat", [__.out("x")], [("emit", [])]), StepCall("dedup", []), StepCall("id", [])]
    >>> [(c.name, c.walk) for c in navigation_walk(calls, Context())]
    [('repeat', NavigationWalk(hops=(((False,), ('x',)),), limit=None, until_first=None, emit_first=False, \
distinct=True, project='id'))]
    """
    out: list[StepCall] = []
    index = 0
    while index < len(calls):
        call = calls[index]
        walk = _walk(call, context)
        index += 1
        if walk is None:
            out.append(call)
            continue
        following = calls[index] if index < len(calls) else None
        if walk.emit_first is not None and _plain(following, "dedup"):
            index += 1
            projection = calls[index] if index < len(calls) else None
            project = (
                projection.name if projection is not None and _plain(projection, "id", "label") else None
            )
            if project is not None:  # the walk yields ids or labels itself
                index += 1
            walk = replace(walk, distinct=True, project=project)
        out.append(replace(call, walk=walk))
    return out


def fuse_inject_merge(calls: list[StepCall], context: Context) -> list[StepCall]:
    """A root traversal starting ``inject(maps...)`` or ``inject([maps]).unfold()`` straight into mergeV()/mergeE()
    (the lineage writer's batch) gives the maps to the merge step, which runs over them itself: one step instead of
    a stream of traversers between two or three (each map gets the traverser inject() would have given it, so
    results, errors and writes are those of the steps it replaces). Not with full paths (unfold() would have
    extended them).

    >>> calls = [StepCall("inject", [{"a": 1}, {"a": 2}]), StepCall("mergeV", []), StepCall("id", [])]
    >>> [str(c) for c in fuse_inject_merge(calls, Context(anonymous=False))]
    ['mergeV() {over 2 injected rows}', 'id()']
    """
    if (
        context.anonymous
        or context.full_paths
        or not calls
        or calls[0].name != "inject"
        or calls[0].modulators
    ):
        return calls
    rows, rest = calls[0].args, calls[1:]
    if rest and _plain(rest[0], "unfold") and len(rows) == 1 and type(rows[0]) is list:
        rows, rest = rows[0], rest[1:]
    if not rest or rest[0].name not in ("mergeV", "mergeE") or not all(type(row) is dict for row in rows):
        return calls
    return [replace(rest[0], rows=list(rows)), *rest[1:]]


STRATEGIES: tuple[Strategy, ...] = (fold_start_filters, infix_connectives, navigation_walk, fuse_inject_merge)
"""Applied in this order to every traversal before it is compiled."""


def apply_strategies(
    calls: list[StepCall], context: Context, strategies: Sequence[Strategy] = STRATEGIES
) -> list[StepCall]:
    """The steps after each strategy in turn."""
    for strategy in strategies:
        calls = strategy(calls, context)
    return calls


def explain(
    traversal: Bytecode | Traversal,
    context: Context | None = None,
    strategies: Sequence[Strategy] = STRATEGIES,
) -> str:
    """The traversal's steps before the strategies and after each one, a line each (like TinkerPop's explain());
    ``context`` defaults to a root traversal without paths or sack."""
    bytecode = as_bytecode(traversal)
    assert bytecode is not None, "explain() takes a traversal or its bytecode"
    calls = group_steps(bytecode.step_instructions)
    context = context or Context(anonymous=False)
    rows = [("original", calls)]
    for strategy in strategies:
        calls = strategy(calls, context)
        rows.append((strategy.__name__, calls))
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {', '.join(map(str, steps))}" for name, steps in rows)
