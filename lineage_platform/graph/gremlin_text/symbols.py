"""The names Gremlin text may use, each mapped to the gremlinpython object or method that implements it.

Every table is read from gremlinpython itself (steps by calling each method on a scratch traversal and
reading the instruction it records), so the parser accepts exactly the steps gremlinpython 3.7.3 has
and records them under the same Java names.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any

from aenum import Enum
from gremlin_python.process import strategies
from gremlin_python.process.graph_traversal import GraphTraversal, GraphTraversalSource
from gremlin_python.process.traversal import (
    DT,
    IO,
    Barrier,
    Bytecode,
    Cardinality,
    Column,
    ConnectedComponent,
    Direction,
    Merge,
    Operator,
    Order,
    P,
    PageRank,
    PeerPressure,
    Pick,
    Pop,
    Scope,
    ShortestPath,
    T,
    TextP,
    TraversalStrategies,
    TraversalStrategy,
    WithOptions,
)
from gremlin_python.structure.io.util import SymbolUtil

TERMINALS = frozenset({"toList", "next", "iterate", "hasNext", "toSet", "explain", "tryNext"})
"""Methods that end a traversal; the parser returns them instead of recording them."""

_PYTHON_TERMINALS = {"to_list": "toList", "has_next": "hasNext", "to_set": "toSet"}


def terminal_name(name: str) -> str | None:
    """The Java terminal method ``name`` stands for (Java or gremlinpython spelling), or None."""
    if name in TERMINALS:
        return name
    return _PYTHON_TERMINALS.get(name)


def java_name(python_name: str) -> str:
    """Java spelling of a gremlinpython name: ``not_`` -> ``not``, ``on_create`` -> ``onCreate``."""
    return SymbolUtil.to_camel_case(python_name.rstrip("_"))


def _recorded_instruction(call: Callable[[], Any], bytecode: Bytecode) -> tuple[str | None, bool]:
    """Run ``call`` and report the last instruction name it recorded and whether it warned (deprecated)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    recorded = getattr(result, "bytecode", bytecode)
    instructions = recorded.step_instructions or recorded.source_instructions
    return (instructions[-1][0] if instructions else None), bool(caught)


def _methods_by_recorded_name(
    owner: type, make_instance: Callable[[], Any], skip: frozenset[str]
) -> dict[str, str]:
    """Map each instruction name a class records to the (non-deprecated) method recording it."""
    names: dict[str, str] = {}
    for attr, member in vars(owner).items():
        if attr.startswith("_") or attr in skip or not callable(member):
            continue
        instance = make_instance()
        recorded, deprecated = _recorded_instruction(getattr(instance, attr), instance.bytecode)
        if recorded is not None and (not deprecated or recorded not in names):
            names[recorded] = attr
    return names


def _scratch_traversal() -> GraphTraversal:
    return GraphTraversal(None, None, Bytecode())


def _scratch_source() -> GraphTraversalSource:
    return GraphTraversalSource(None, TraversalStrategies())


STEPS: dict[str, str] = _methods_by_recorded_name(GraphTraversal, _scratch_traversal, frozenset({"clone"}))
"""Java step name -> GraphTraversal method, e.g. ``in`` -> ``in_``."""

_SOURCE_METHODS = _methods_by_recorded_name(
    GraphTraversalSource,
    _scratch_source,
    frozenset(
        {"get_graph_traversal_source", "get_graph_traversal", "tx", "with_remote", "withRemote"}
        | {"with_", "with_computer", "withComputer"}
    ),
)
SPAWN_STEPS: dict[str, str] = {
    name: method for name, method in _SOURCE_METHODS.items() if not name.startswith("with")
}
"""Java name -> GraphTraversalSource method that starts a traversal (``V``, ``addV``, ``inject``, ...)."""

SOURCE_STEPS: dict[str, str] = {
    **{name: method for name, method in _SOURCE_METHODS.items() if name.startswith("with")},
    "with": "with_",
    "withComputer": "with_computer",
}
"""Java name -> GraphTraversalSource method that configures the source (``withSideEffect``, ...)."""


def step_method(name: str, table: dict[str, str]) -> str | None:
    """The gremlinpython method for step ``name`` written in Java (``in``) or Python (``in_``) spelling."""
    if name in table:
        return table[name]
    return name if name in table.values() else None


_SPELLING_EXCEPTIONS = {(T, "id"): T.id}
"""``T.id`` stays ``T.id`` (gremlinpython's static ``id`` and this project's code use it; ``T.id_`` serializes alike)."""


def _enum_members(enum: type[Enum]) -> dict[str, Enum]:
    """Java member name -> member, spelled as TinkerPop translates Gremlin to Python where gremlinpython has
    several spellings: snake_case, with a trailing underscore where the name is a Python keyword or builtin
    (``Operator.sum`` -> ``Operator.sum_``, ``Barrier.normSack`` -> ``Barrier.norm_sack``)."""
    python_members = enum.__members__
    members: dict[str, Enum] = {}
    for python_name in python_members:
        name = java_name(python_name)
        if name not in members:
            snake = SymbolUtil.to_snake_case(name)
            spelling = next(c for c in (snake + "_", snake, name) if c in python_members)
            members[name] = _SPELLING_EXCEPTIONS.get((enum, name), python_members[spelling])
    return members


ENUMS: dict[str, dict[str, Enum]] = {
    enum.__name__: _enum_members(enum)
    for enum in (Barrier, Cardinality, Column, Direction, DT, Merge, Operator, Order, Pick, Pop, Scope, T)
}
"""Enum class name -> {Java member name -> gremlinpython member}, for ``T.id``, ``Scope.local``, ..."""

BARE_ENUMS: dict[str, Enum] = {
    name: member for members in reversed(list(ENUMS.values())) for name, member in members.items()
}
"""Enum members usable without their class prefix (``desc``, ``local``, ``values``, ``id``), as Groovy allows."""

TOKEN_CLASSES: dict[str, dict[str, Any]] = {
    cls.__name__: {name: value for name, value in vars(cls).items() if not name.startswith("_")}
    for cls in (WithOptions, IO, ConnectedComponent, ShortestPath, PageRank, PeerPressure)
}
"""Classes of constants: ``WithOptions.tokens``, ``IO.graphml``, ``PageRank.propertyName``, ..."""


def _predicate_functions(cls: type[P]) -> dict[str, Callable[..., P]]:
    """Java predicate name -> gremlinpython factory; the snake_case (non-deprecated) spelling wins."""
    functions: dict[str, Callable[..., P]] = {}
    for python_name, member in vars(cls).items():
        if isinstance(member, staticmethod) and not python_name.startswith("_"):
            name = java_name(python_name)
            if "_" in python_name or name not in functions:
                functions[name] = getattr(cls, python_name)
    return functions


PREDICATES: dict[str, dict[str, Callable[..., P]]] = {
    "P": _predicate_functions(P),
    "TextP": _predicate_functions(TextP),
}
"""``P``/``TextP`` -> {Java predicate name -> factory}, e.g. ``P.within``, ``TextP.startingWith``."""

BARE_PREDICATES: dict[str, Callable[..., P]] = {**PREDICATES["P"], **PREDICATES["TextP"]}
"""Predicates usable without prefix (``gt(1)``, ``within('a')``), as the Groovy console's imports allow."""

PREDICATE_CONNECTIVES = {"and": P.and_, "or": P.or_}
"""Methods called on a predicate: ``P.gt(1).and(P.lt(3))``."""

STRATEGIES: dict[str, type[TraversalStrategy]] = {
    name: cls
    for name, cls in vars(strategies).items()
    if inspect.isclass(cls) and issubclass(cls, TraversalStrategy) and cls is not TraversalStrategy
}
"""Strategy class name -> gremlinpython class (``ReadOnlyStrategy``, ``SubgraphStrategy``, ...)."""

LAMBDA_FACTORIES = frozenset(
    {
        "function",
        "supplier",
        "consumer",
        "predicate",
        "comparator",
        "unaryOperator",
        "binaryOperator",
        "biFunction",
    }
)
"""``Lambda.function("it.get()")`` and its siblings: all become a Groovy script lambda."""
