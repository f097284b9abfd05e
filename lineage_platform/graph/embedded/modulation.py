"""by() modulators: turn ``by(...)`` arguments into functions of a traverser."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gremlin_python.process.traversal import Column, Order, T
from gremlin_python.structure.graph import Path

from lineage_platform.errors import TraversalError
from lineage_platform.graph.embedded.access import token_value, values_of
from lineage_platform.graph.embedded.pipeline import Compiler, Trav, as_bytecode
from lineage_platform.graph.embedded.values import MapEntry

NOTHING: Any = object()  # what an unproductive by() yields; steps filter such traversers out
ByFn = Callable[[Trav], Any]


def column_value(obj: Any, column: Column, step_name: str) -> Any:
    """Column.keys / Column.values of a map, a map entry or a path."""
    if isinstance(obj, MapEntry):
        return obj[0] if column == Column.keys else obj[1]
    if isinstance(obj, dict):
        return list(obj.keys()) if column == Column.keys else list(obj.values())
    if isinstance(obj, Path):
        return [set(labels) for labels in obj.labels] if column == Column.keys else list(obj.objects)
    raise TraversalError(
        f"{step_name}() cannot select {column} from {type(obj).__name__} {obj!r}",
        hint="apply Column to maps, map entries or paths",
    )


def value_function(arg: Any, compiler: Compiler, step_name: str) -> ByFn:
    """A function computing the by()/select-style projection ``arg`` of a traverser (NOTHING when unproductive)."""
    unproductive = None if compiler.productive_by else NOTHING
    nested = as_bytecode(arg)
    if nested is not None:
        pipeline = compiler.compile(nested)

        def by_traversal(t: Trav) -> Any:
            result = pipeline.first(t.alone())
            return unproductive if result is None else result.obj

        return by_traversal
    if isinstance(arg, str):

        def by_key(t: Trav) -> Any:
            return next(values_of(t.obj, (arg,), step_name), unproductive)

        return by_key
    if isinstance(arg, T):
        return lambda t: token_value(t.obj, arg, step_name)
    if isinstance(arg, Column):
        return lambda t: column_value(t.obj, arg, step_name)
    raise TraversalError(
        f"{step_name}().by() does not accept {arg!r}",
        hint="use by(), by('key'), by(T.id|T.label), by(Column.keys|values) or by(__.<traversal>)",
    )


def by_functions(by_args: list[list[Any]], compiler: Compiler, step_name: str) -> list[ByFn]:
    """One projection per by() modulator (identity for an empty by() or a bare by(Order))."""
    out = []
    for args in by_args:
        if not args or isinstance(args[0], Order):
            out.append(lambda t: t.obj)
        else:
            out.append(value_function(args[0], compiler, step_name))
    return out


def round_robin(bys: list[ByFn], index: int) -> ByFn | None:
    """The by() that applies to the index-th item (by()s are reused in turn)."""
    return bys[index % len(bys)] if bys else None
