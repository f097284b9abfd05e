"""match(): declarative pattern matching over as-labels, as TinkerPop's MatchStep answers it.

Each argument is a pattern: ``__.as("a")...steps...[.as("b")]`` (from the value bound to its start label, the
steps give the values of its end label: bound already, they must be equal; unbound, each binds it; without an end
label the pattern is a filter), ``__.where(...)`` over labels, ``__.not(pattern)``, ``__.and(patterns...)`` and
``__.or(patterns...)``. Every incoming traverser starts with the labels its path already holds, and the match's
start label (the first start label no pattern ends in) bound to the traverser's object if the path does not bind
it. Patterns run one at a time, each as soon as what it reads is bound, in the order given otherwise; each
complete set of bindings becomes one traverser whose object is the map of the match's labels, its path carrying
them as as-labels (so select(), where() and dedup() after the match read them).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from gremlin_python.process.traversal import P, Pop

from lineage_platform.errors import TraversalError
from lineage_platform.graph.embedded.modulation import NOTHING
from lineage_platform.graph.embedded.pipeline import (
    Compiler,
    LabelPath,
    PathNode,
    Pipeline,
    StepFn,
    Trav,
    step,
)
from lineage_platform.graph.embedded.scoping import select_value
from lineage_platform.graph.embedded.step_calls import StepCall, as_bytecode, group_steps
from lineage_platform.graph.embedded.steps_filter import predicate_labels
from lineage_platform.graph.embedded.strategies import Context, infix_connectives
from lineage_platform.graph.embedded.values import hash_key

Bindings = dict[str, Any]


@dataclass
class _Pattern:
    """One pattern: ``kind`` "path" (start label, body, end label), "where" (a filter over labels), "not" (one
    inner pattern), "or" (alternatives, each a list of patterns)."""

    kind: str
    start: str | None = None
    end: str | None = None
    body: Pipeline | None = None
    reads: frozenset[str] = frozenset()
    inner: list[list[_Pattern]] = field(default_factory=list)

    def labels(self) -> set[str]:
        """Every label the pattern names (its own and its inner patterns')."""
        own = {label for label in (self.start, self.end) if label is not None} | set(self.reads)
        return own.union(*(p.labels() for group in self.inner for p in group))

    def ready(self, bound: Bindings) -> bool:
        """Whether the pattern can run with ``bound``: a path pattern once its start is bound, the others once
        every label they name is."""
        if self.kind == "path":
            return self.start in bound
        return self.labels() <= bound.keys()


def _calls(source: Any) -> list[StepCall]:
    if isinstance(source, list):
        return source
    bytecode = as_bytecode(source)
    if bytecode is None:
        raise TraversalError(
            f"match() takes traversals as patterns, got {source!r}",
            hint='write match(__.as("a").out().as("b"), ...)',
        )
    return infix_connectives(group_steps(bytecode.step_instructions), Context())


def _viewed(calls: list[StepCall], c: Compiler) -> list[StepCall]:
    """A pattern's steps through the SubgraphStrategy/PartitionStrategy views of the execution (a pattern is a
    traversal of the query's own, as the nested traversals the compiler views)."""
    for view in c.views:
        calls = view(calls, Context())
    return calls


def _parse(source: Any, c: Compiler) -> list[_Pattern]:
    """The patterns one match() argument holds (an and() holds several)."""
    calls = _calls(source)
    if len(calls) == 1 and calls[0].name == "and" and calls[0].args:
        return [p for arg in calls[0].args for p in _parse(arg, c)]
    if len(calls) == 1 and calls[0].name == "or" and calls[0].args:
        return [_Pattern("or", inner=[_parse(arg, c) for arg in calls[0].args])]
    if len(calls) == 1 and calls[0].name == "not" and calls[0].args:
        return [_Pattern("not", inner=[_parse(calls[0].args[0], c)])]
    if calls and calls[0].name == "as" and len(calls[0].args) == 1:
        start, rest = calls[0].args[0], calls[1:]
        end = None
        if rest and rest[-1].name == "as" and len(rest[-1].args) == 1:
            end, rest = rest[-1].args[0], rest[:-1]
        body = c.compile(_viewed(rest, c)) if rest else None
        return [_Pattern("path", start=start, end=end, body=body)]
    if calls and calls[0].name == "where":
        return [_Pattern("where", reads=frozenset(_labels_in(calls)), body=c.compile(_viewed(calls, c)))]
    raise TraversalError(
        "a match() pattern starts with as(label), where(), not(), and() or or()",
        hint='write each pattern as __.as("a")...steps...as("b")',
    )


def _labels_in(calls: list[StepCall]) -> Iterator[str]:
    """The labels ``calls`` name: as() labels, where()'s label arguments and the labels of its predicate, at any
    depth of nesting."""
    for call in calls:
        if call.name in ("as", "where"):
            yield from (a for a in call.args if isinstance(a, str))
            for arg in call.args:
                if isinstance(arg, P):
                    yield from predicate_labels(arg)
        for arg in [*call.args, *(a for _, args in call.modulators for a in args)]:
            if isinstance(arg, list) and all(isinstance(a, StepCall) for a in arg):
                yield from _labels_in(arg)
            elif (nested := as_bytecode(arg)) is not None:
                yield from _labels_in(group_steps(nested.step_instructions))


def _within(patterns: list[_Pattern], labels: set[str]) -> None:
    """Where-patterns wait only for the match's own labels among those they name (others come from the path)."""
    for pattern in _walk(patterns):
        if pattern.kind == "where":
            pattern.reads = pattern.reads & labels


def _start_label(patterns: list[_Pattern]) -> str | None:
    """The first start label that no pattern ends in (else the first start label)."""
    starts = [p.start for p in _walk(patterns) if p.start is not None]
    ends = {p.end for p in _walk(patterns) if p.end is not None}
    return next((s for s in starts if s not in ends), starts[0] if starts else None)


def _walk(patterns: list[_Pattern]) -> Iterator[_Pattern]:
    for pattern in patterns:
        yield pattern
        for group in pattern.inner:
            yield from _walk(group)


@step("match")
def compile_match(call: StepCall, c: Compiler) -> StepFn:
    """match(patterns...): one traverser per complete set of label bindings, its object the map of them."""
    if not call.args:
        raise TraversalError(
            "match() needs at least one pattern", hint='write match(__.as("a").out().as("b"))'
        )
    patterns = [p for arg in call.args for p in _parse(arg, c)]
    start = _start_label(patterns)
    labels = list(
        dict.fromkeys(label for p in _walk(patterns) for label in (p.start, p.end) if label is not None)
    )

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            bound = {}
            for label in labels:
                value = select_value(t, label, Pop.last, "match")
                if value is not NOTHING:
                    bound[label] = value
            if start is not None and start not in bound:
                bound[start] = t.obj
            for solution, bulk in _solve(bound, patterns, t, c):
                result = {label: solution[label] for label in labels if label in solution}
                yield Trav(result, t.bulk * bulk, _labelled(t, solution), t.loops, t.sack)

    return run


def _solve(bound: Bindings, pending: list[_Pattern], t: Trav, c: Compiler) -> Iterator[tuple[Bindings, int]]:
    """Every extension of ``bound`` that satisfies ``pending``, with its multiplicity."""
    if not pending:
        yield bound, 1
        return
    index = next((i for i, p in enumerate(pending) if p.ready(bound)), None)
    if index is None:
        missing = sorted(set().union(*(p.labels() for p in pending)) - bound.keys())
        raise TraversalError(
            f"match(): no pattern can start, the labels {missing} are never bound",
            hint="start a pattern at a label the match binds (its start label or a label bound before it)",
        )
    pattern, rest = pending[index], pending[:index] + pending[index + 1 :]
    for extended, bulk in _holds(pattern, bound, t, c):
        for solution, more in _solve(extended, rest, t, c):
            yield solution, bulk * more


def _holds(pattern: _Pattern, bound: Bindings, t: Trav, c: Compiler) -> Iterator[tuple[Bindings, int]]:
    """The bindings ``pattern`` lets through or extends ``bound`` to, with multiplicities."""
    check = c.check_cancelled
    check()
    if pattern.kind == "not":
        if not any(True for _ in _solve(bound, pattern.inner[0], t, c)):
            yield bound, 1
        return
    if pattern.kind == "or":
        if any(any(True for _ in _solve(bound, group, t, c)) for group in pattern.inner):
            yield bound, 1
        return
    if pattern.kind == "where":
        if pattern.body is not None and pattern.body.has_result(Trav(dict(bound), 1, _labelled(t, bound))):
            yield bound, 1
        return
    origin = Trav(bound[pattern.start], 1, _labelled(t, bound), t.loops, t.sack)
    results = (
        [(r.obj, r.bulk) for r in pattern.body.run((origin,))]
        if pattern.body is not None
        else [(origin.obj, 1)]
    )
    if pattern.end is None:
        if results:
            yield bound, 1
        return
    if pattern.end in bound:
        want = hash_key(bound[pattern.end])
        equal = sum(bulk for obj, bulk in results if hash_key(obj) == want)
        if equal:
            yield bound, equal
        return
    counts: Counter[Any] = Counter()
    values: dict[Any, Any] = {}
    for obj, bulk in results:
        key = hash_key(obj)
        counts[key] += bulk
        values.setdefault(key, obj)
    for key, bulk in counts.items():
        yield {**bound, pattern.end: values[key]}, bulk


def _labelled(t: Trav, bound: Bindings) -> PathNode | None:
    """``t``'s path with each binding it does not hold yet added as an as-labelled entry."""
    node = t.path
    if node is None:
        return None
    for label, value in bound.items():
        if select_value(t, label, Pop.last, "match") is value:
            continue
        node = (
            LabelPath(node, value, (label,)) if type(node) is LabelPath else PathNode(node, value, (label,))
        )
    return node
