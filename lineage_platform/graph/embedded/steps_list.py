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


def _argument(arg: Any, c: Compiler, step_name: str) -> Callable[[Trav], Any]:
    """The list argument of a list step: a constant or the first result of a traversal."""
    nested = as_bytecode(arg)
    if nested is None and arg is None:
        raise TraversalError(f"Argument provided for {step_name} step can't be null", hint="pass a list")
    pipeline = c.compile(nested) if nested is not None else None

    def resolve(t: Trav) -> Any:
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
            if not isinstance(found, (list, tuple, set, frozenset, dict)):
                raise TraversalError(
                    f"traversal argument for {step_name} step must yield an iterable type, encountered {found!r}",
                    hint="fold() inside the argument traversal",
                )
        if isinstance(found, dict) and step_name == "merge":
            return found
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
                left, right = _incoming(t, name), other(t)
                if isinstance(left, dict) or isinstance(right, dict):
                    if not (isinstance(left, dict) and isinstance(right, dict)):
                        raise TraversalError(
                            f"{name}() needs two maps or two lists",
                            hint="merge maps with maps, lists with lists",
                        )
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
    return lambda travs: (t.split(list(_incoming(t, "combine")) + other(t)) for t in travs)


@step("product")
def compile_product(call: StepCall, c: Compiler) -> StepFn:
    """product(list): every pair [incoming item, argument item]."""
    other = _argument(call.args[0] if call.args else None, c, "product")
    return lambda travs: (t.split([[a, b] for a in _incoming(t, "product") for b in other(t)]) for t in travs)


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
