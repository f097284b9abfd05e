"""The 3.7 list steps: conjoin, combine, difference, disjunct, intersect, merge, product, index."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from gremlin_python.process.traversal import WithOptions
from gremlin_python.structure.graph import Path

from lineage_platform.errors import TraversalError
from lineage_platform.graph.embedded.pipeline import Compiler, StepCall, StepFn, Trav, as_bytecode, step
from lineage_platform.graph.embedded.steps_string import as_string
from lineage_platform.graph.embedded.values import hash_key


def _incoming(t: Trav, step_name: str) -> list[Any] | dict[Any, Any]:
    obj = t.obj
    if obj is None:
        raise TraversalError(
            f"Incoming traverser for {step_name} step can't be null", hint="filter out nulls"
        )
    if isinstance(obj, dict) and step_name == "merge":
        return obj
    if isinstance(obj, Path):
        return list(obj.objects)
    if isinstance(obj, (list, tuple, set, frozenset)):
        return list(obj)
    raise TraversalError(
        f"{step_name} step can only take an array or an Iterable type for incoming traversers, "
        f"encountered {type(obj).__name__}",
        hint=f"fold() the values before {step_name}()",
    )


def _argument(arg: Any, c: Compiler, step_name: str) -> Callable[[Trav, Any], Any]:
    """The list argument of a list step, resolved against the traverser and its incoming value: a constant or
    the first result of a traversal. merge() of an incoming map takes a map argument instead."""
    nested = as_bytecode(arg)
    if nested is None and arg is None:
        raise TraversalError(f"Argument provided for {step_name} step can't be null", hint="pass a list")
    pipeline = c.compile(nested) if nested is not None else None

    def resolve(t: Trav, incoming: Any) -> Any:
        if pipeline is None:
            found = arg
        else:
            result = pipeline.first(t)
            found = None if result is None else result.obj
            if found is None:
                raise TraversalError(
                    f"traversal argument for {step_name} step must yield an iterable type, not null",
                    hint="make the argument traversal produce a list",
                )
        if isinstance(incoming, dict):  # only merge() accepts an incoming map
            if not isinstance(found, dict):
                raise TraversalError(
                    f"{step_name} step expected provided argument to evaluate to a Map, "
                    f"encountered {type(found).__name__}",
                    hint="merge maps with maps, lists with lists",
                )
            return found
        if pipeline is not None and not isinstance(found, (list, tuple, set, frozenset)):
            raise TraversalError(
                f"traversal argument for {step_name} step must yield an iterable type, "
                f"encountered {type(found).__name__}",
                hint="fold() inside the argument traversal",
            )
        if isinstance(found, dict):
            raise TraversalError(
                f"step type mismatch: expected argument to be iterable but got map for {step_name} step",
                hint="merge maps with maps, lists with lists",
            )
        if not isinstance(found, (list, tuple, set, frozenset)):
            raise TraversalError(
                f"{step_name} step can only take an array or an Iterable as an argument, encountered {found!r}",
                hint=f"pass a list (or a traversal producing one) to {step_name}()",
            )
        return list(found)

    return resolve


def _distinct(items: list[Any]) -> dict[Any, Any]:
    """Items keyed by Gremlin equality, first occurrence kept, in order."""
    out: dict[Any, Any] = {}
    for item in items:
        out.setdefault(hash_key(item), item)
    return out


def _set_operation(name: str, combine: Callable[[dict[Any, Any], dict[Any, Any]], Any]) -> None:
    def compile_set_operation(call: StepCall, c: Compiler) -> StepFn:
        if len(call.args) != 1:
            raise TraversalError(
                f"{name}() takes one argument", hint=f"write {name}([...]) or {name}(__.<traversal>)"
            )
        other = _argument(call.args[0], c, name)

        def run(travs: Iterator[Trav]) -> Iterator[Trav]:
            for t in travs:
                left = _incoming(t, name)
                right = other(t, left)
                if isinstance(left, dict):
                    yield t.split({**left, **right})
                    continue
                yield t.split(combine(_distinct(left), _distinct(right)))

        return run

    step(name)(compile_set_operation)


def _as_set(items: list[Any]) -> set[Any] | list[Any]:
    """A set of the items, or the (already distinct) list when some item is unhashable."""
    try:
        return set(items)
    except TypeError:
        return items


_set_operation("difference", lambda a, b: _as_set([a[k] for k in a if k not in b]))
_set_operation(
    "disjunct", lambda a, b: _as_set([a[k] for k in a if k not in b] + [b[k] for k in b if k not in a])
)
_set_operation("intersect", lambda a, b: _as_set([a[k] for k in a if k in b]))
_set_operation("merge", lambda a, b: _as_set(list(a.values()) + [b[k] for k in b if k not in a]))


@step("combine")
def compile_combine(call: StepCall, c: Compiler) -> StepFn:
    """combine(list): the incoming list followed by the argument's items (duplicates kept)."""
    other = _argument(call.args[0] if call.args else None, c, "combine")

    def combine(t: Trav) -> list[Any]:
        incoming = _incoming(t, "combine")
        return list(incoming) + other(t, incoming)

    return lambda travs: (t.split(combine(t)) for t in travs)


@step("product")
def compile_product(call: StepCall, c: Compiler) -> StepFn:
    """product(list): every pair [incoming item, argument item]."""
    other = _argument(call.args[0] if call.args else None, c, "product")

    def product(t: Trav) -> list[list[Any]]:
        incoming = _incoming(t, "product")
        return [[a, b] for a in incoming for b in other(t, incoming)]

    return lambda travs: (t.split(product(t)) for t in travs)


@step("conjoin")
def compile_conjoin(call: StepCall, c: Compiler) -> StepFn:
    """conjoin(delimiter): the list's non-null items as strings joined by the delimiter."""
    if not call.args or not isinstance(call.args[0], str):
        raise TraversalError("conjoin() needs a string delimiter", hint="write conjoin(',')")
    delimiter = call.args[0]

    def conjoin(t: Trav) -> str:
        items = [item for item in _incoming(t, "conjoin") if item is not None]
        return delimiter.join(as_string(item) for item in items)

    return lambda travs: (t.split(conjoin(t)) for t in travs)


@step("index")
def compile_index(call: StepCall, c: Compiler) -> StepFn:
    """index(): [[item, 0], [item, 1], ...] for a collection (a single object counts as one item);
    with(WithOptions.indexer, WithOptions.map) gives {0: item, 1: item, ...} instead."""
    as_map = any(args[:2] == [WithOptions.indexer, WithOptions.map] for args in call.modulator_args("with"))

    def index(obj: Any) -> Any:
        items = list(obj) if isinstance(obj, (list, tuple, set, frozenset)) else [obj]
        if as_map:
            return dict(enumerate(items))
        return [[item, position] for position, item in enumerate(items)]

    return lambda travs: (t.split(index(t.obj)) for t in travs)
