"""Request values every wire format reads alike: lambdas (kept as text, never run) and enum wire names."""

from __future__ import annotations

from enum import Enum

from gremlin_python.structure.io.util import SymbolUtil


class ScriptLambda:
    """A lambda argument as sent by a client: the script text and its language, never executed here."""

    def __init__(self, language: str, script: str, arity: int) -> None:
        self.language = language
        self.script = script
        self.arity = arity

    def __call__(self) -> tuple[str, str]:
        """gremlinpython's lambda convention: calling it yields (script, language)."""
        return self.script, self.language

    def __repr__(self) -> str:
        return f"lambda[{self.language}: {self.script}]"


def enum_member(enum: type[Enum], wire_name: str) -> Enum:
    """The member of ``enum`` a wire name means: the name itself (``OUT``), its snake_case as gremlinpython
    names members, or that with the trailing underscore Python keywords and builtins get (``list`` ->
    ``Cardinality.list_``, which gremlinpython's own readers miss). Raises ValueError for other names."""
    snake = SymbolUtil.to_snake_case(wire_name)
    for name in (wire_name, snake, snake + "_"):
        if name in enum.__members__:
            return enum.__members__[name]
    raise ValueError(f"{wire_name!r} is not a {enum.__name__} value")
