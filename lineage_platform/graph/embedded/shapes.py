"""A traversal's shape: a hashable key equal for traversals the engine compiles alike, so a compiled pipeline
can be reused by the next execution of an equal traversal (see ``engine.py``'s compile cache).

The key holds every step with its arguments, nested traversals included, each scalar with its Python type (``1``,
``1.0`` and ``True`` are equal in Python but not in Gremlin). Request options (``OptionsStrategy``: the
evaluation timeout, which a trace shortens at every request) are left out: they do not change what is compiled.

Only a traversal whose compiled pipeline keeps nothing of an execution once it ends has a shape: none with a
step in :data:`STATEFUL_STEPS` (writes, and side effects the compiler declares when it compiles them), with
``withSideEffect()``/``withSack()``, with a graph element as an argument (compiled into the stored element it
names, which a later execution may have dropped) or with an argument the key cannot hold (a lambda, an object of
an unknown type), and none with a step of more than :data:`MAX_ARGS` arguments or a collection argument of more items (``V()`` of
many ids, ``within()`` of many names: kept, such pipelines would hold on to them).

>>> from gremlin_python.process.graph_traversal import __
>>> step_shape(__.out("x").limit(1).bytecode) == step_shape(__.out("x").limit(1).bytecode)
True
>>> step_shape(__.limit(1).bytecode) == step_shape(__.limit(1.0).bytecode)
False
>>> step_shape(__.out("x").aggregate("a").bytecode) is None
True
"""

from __future__ import annotations

from collections.abc import Hashable
from enum import Enum
from typing import Any

from gremlin_python.process.traversal import (
    Binding,
    Bytecode,
    CardinalityValue,
    P,
    Traversal,
    TraversalStrategy,
)

# Steps whose compiled form holds state of one execution: writes, and the side effects the compiler declares
STATEFUL_STEPS = frozenset(
    {
        *("addV", "addE", "property", "drop", "mergeV", "mergeE"),
        *(
            "aggregate",
            "store",
            "group",
            "groupCount",
            "cap",
            "sack",
            "subgraph",
            "tree",
            "profile",
            "io",
            "call",
        ),
    }
)
MAX_ARGS = 64  # arguments of one step beyond which its traversal has no shape
_STATEFUL_SOURCES = frozenset({"withSideEffect", "withSack"})
_SCALARS = frozenset({int, float, bool, type(None)})
_OPTIONS = "OptionsStrategy"  # request options only (evaluationTimeout, batchSize, ...)


class _NoShape(Exception):
    """A step or argument that keeps the traversal from having a shape."""


def shape(bytecode: Bytecode) -> tuple[Hashable, Hashable] | None:
    """The traversal's key: (that of its source instructions, that of its steps), or None (see the module)."""
    try:
        source = []
        for name, *args in bytecode.source_instructions:
            if name in _STATEFUL_SOURCES:
                return None
            if name == "withStrategies":
                args = [a for a in args if strategy_name(a) != _OPTIONS]
                if not args:
                    continue
            source.append((name, *map(_value, args)))
        return tuple(source), _steps(bytecode.step_instructions)
    except _NoShape:
        return None


def step_shape(bytecode: Bytecode) -> Hashable | None:
    """The key of the traversal's steps (those of a nested traversal), or None (see the module)."""
    try:
        return _steps(bytecode.step_instructions)
    except _NoShape:
        return None


def _steps(instructions: list[list[Any]]) -> tuple:
    out = []
    for name, *args in instructions:
        if name in STATEFUL_STEPS or len(args) > MAX_ARGS:
            raise _NoShape(name)
        out.append((name, *map(_value, args)))
    return tuple(out)


def strategy_name(strategy: Any) -> str:
    """A TraversalStrategy's short name (``SubgraphStrategy``), as gremlinpython or a request decoder gives it."""
    return str(getattr(strategy, "strategy_name", type(strategy).__name__)).rsplit(".", 1)[-1]


def _value(value: Any) -> Hashable:
    """One argument's key: strings as they are, other scalars with their type, containers item by item."""
    kind = type(value)
    if kind is str:
        return value
    if kind in _SCALARS or isinstance(value, int):  # int subclasses: gremlinpython's long
        return kind, value
    if isinstance(value, Enum):
        return kind, value.name
    if isinstance(value, CardinalityValue):  # a Bytecode, but a value
        raise _NoShape(kind.__name__)
    if isinstance(value, Bytecode):
        return "__", _steps(value.step_instructions)
    if isinstance(value, Traversal):
        return "__", _steps(value.bytecode.step_instructions)
    if isinstance(value, P):  # P and TextP: operator and operands
        return kind, value.operator, _value(value.value), _value(value.other)
    if kind in (list, tuple, set, frozenset, dict) and len(value) > MAX_ARGS:
        raise _NoShape(f"{kind.__name__} of {len(value)}")
    if kind in (list, tuple):
        return kind, tuple(map(_value, value))
    if kind in (set, frozenset):
        return kind, frozenset(map(_value, value))
    if kind is dict:
        return kind, tuple((_value(k), _value(v)) for k, v in value.items())
    if isinstance(value, Binding):
        return kind, value.key, _value(value.value)
    if isinstance(value, TraversalStrategy):
        return kind, strategy_name(value), _value(dict(value.configuration))
    raise _NoShape(kind.__name__)
