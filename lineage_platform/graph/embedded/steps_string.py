"""The 3.7 string steps: asString, concat, format, toLower, toUpper, trim, lTrim, rTrim, length, split, substring,
replace, reverse. With Scope.local they apply to each item of a list."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from gremlin_python.process.traversal import Pop, Scope
from gremlin_python.structure.graph import Path

from lineage_platform.errors import TraversalError
from lineage_platform.graph.embedded.access import values_of
from lineage_platform.graph.embedded.detach import detach
from lineage_platform.graph.embedded.memgraph import EdgeRec, VertexPropRec, VertexRec
from lineage_platform.graph.embedded.modulation import NOTHING, by_functions
from lineage_platform.graph.embedded.pipeline import Compiler, StepCall, StepFn, Trav, as_bytecode, step
from lineage_platform.graph.embedded.scoping import select_value


class _NotAString(Exception):
    """A string step met a value that is not a string; the step turns it into the error for its scope."""

    def __init__(self, value: Any) -> None:
        super().__init__(type(value).__name__)
        self.type_name = type(value).__name__


def _string_only(fn: Callable[[str], Any]) -> Callable[[Any], Any]:
    """Apply ``fn`` to strings; null stays null; anything else raises :class:`_NotAString`."""

    def apply(value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, str):
            raise _NotAString(value)
        return fn(value)

    return apply


def _mapping_step(call: StepCall, fn: Callable[[Any], Any]) -> StepFn:
    """A per-traverser map, applied to each list item with Scope.local; a non-string gets TinkerPop's
    message for the step's scope."""
    local = bool(call.args) and call.args[0] == Scope.local

    def apply(t: Trav) -> Trav:
        try:
            if local and isinstance(t.obj, (list, tuple)):
                return t.split([fn(item) for item in t.obj])
            return t.split(fn(t.obj))
        except _NotAString as err:
            if local:
                raise TraversalError(
                    f"The {call.name}(local) step can only take string or list of strings, "
                    f"encountered {err.type_name}",
                    hint=f"apply {call.name}(Scope.local) to strings or lists of strings",
                ) from None
            raise TraversalError(
                f"The {call.name}() step can only take string as argument, encountered {err.type_name}",
                hint=f"apply {call.name}() to strings (or use {call.name}(Scope.local) on a list of strings)",
            ) from None

    return lambda travs: (apply(t) for t in travs)


def _args(call: StepCall) -> list[Any]:
    return [a for a in call.args if not isinstance(a, Scope)]


def as_string(value: Any) -> Any:
    """Java's String.valueOf as Gremlin prints it: true/false, {k=v, ...}, [a, b]; null stays null."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{as_string(k)}={as_string(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple, set, frozenset)):
        return "[" + ", ".join(str(as_string(v)) for v in value) + "]"
    return str(detach(value))


def _register(name: str, make: Callable[[list[Any]], Callable[[Any], Any]]) -> None:
    def compile_string_step(call: StepCall, c: Compiler) -> StepFn:
        return _mapping_step(call, make(_args(call)))

    step(name)(compile_string_step)


_register("asString", lambda args: as_string)
_register("toLower", lambda args: _string_only(str.lower))
_register("toUpper", lambda args: _string_only(str.upper))
_register("trim", lambda args: _string_only(str.strip))
_register("lTrim", lambda args: _string_only(str.lstrip))
_register("rTrim", lambda args: _string_only(str.rstrip))
_register("length", lambda args: _string_only(len))


def _split(args: list[Any]) -> Callable[[Any], Any]:
    separator = args[0] if args else None
    if separator == "":
        return _string_only(list)
    if separator is None:
        return _string_only(str.split)
    return _string_only(lambda s: s.split(separator))


def _substring(args: list[Any]) -> Callable[[Any], Any]:
    for arg in args:
        if isinstance(arg, bool) or not isinstance(arg, int):
            raise TraversalError(
                f"substring() needs integer positions, got {arg!r}", hint="write substring(1, 3)"
            )
    start = args[0]
    end = args[1] if len(args) > 1 else None
    return _string_only(lambda s: s[start:end])


def _replace(args: list[Any]) -> Callable[[Any], Any]:
    old, new = args[0], args[1]
    if old is None:
        return _string_only(lambda s: s)
    return _string_only(lambda s: s.replace(old, "" if new is None else new))


def _reverse_value(value: Any) -> Any:
    if isinstance(value, str):
        return value[::-1]
    if isinstance(value, (list, tuple)):
        return list(reversed(value))
    if isinstance(value, Path):  # iterable in Java, so reversed into a list of its objects
        return list(reversed(value.objects))
    return value


_register("split", _split)
_register("substring", _substring)
_register("replace", _replace)


@step("reverse")
def compile_reverse(call: StepCall, c: Compiler) -> StepFn:
    """reverse(): strings reversed, lists and paths into reversed lists, anything else unchanged."""
    return lambda travs: (t.split(_reverse_value(t.obj)) for t in travs)


@step("concat")
def compile_concat(call: StepCall, c: Compiler) -> StepFn:
    """concat(strings... | traversals...): the incoming string followed by the arguments (nulls count as "")."""
    parts = []
    for arg in call.args:
        nested = as_bytecode(arg)
        parts.append(c.compile(nested) if nested is not None else arg)

    def concat(t: Trav) -> str | None:
        if t.obj is None and not parts:
            return None
        pieces = [] if t.obj is None else [t.obj]
        for part in parts:
            if isinstance(part, str) or part is None:
                pieces.append(part)
            else:
                result = part.first(t)
                pieces.append(None if result is None else result.obj)
        for piece in pieces:
            if piece is not None and not isinstance(piece, str):
                raise TraversalError(
                    f"String concat() can only take string as argument, encountered {type(piece).__name__}",
                    hint="concat() strings only (asString() first)",
                )
        return "".join(p for p in pieces if p is not None)

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            yield t.split(concat(t))

    return run


_PLACEHOLDER = re.compile(r"%\{([^}]*)\}")


@step("format")
def compile_format(call: StepCall, c: Compiler) -> StepFn:
    """format("%{key} ... %{_}"): keys come from the incoming map, the element's properties or as-labels;
    each %{_} takes the next by() projection (by()s are reused in turn). A placeholder that resolves to nothing drops the traverser."""
    if not call.args or not isinstance(call.args[0], str):
        raise TraversalError("format() needs a format string", hint="write format('%{name} is %{age}')")
    template = call.args[0]
    bys = by_functions(call.modulator_args("by"), c, "format")

    def resolve(t: Trav, key: str) -> Any:
        obj = t.obj
        if isinstance(obj, dict) and key in obj:
            return obj[key]
        if isinstance(obj, (VertexRec, EdgeRec, VertexPropRec)):
            value = next(values_of(obj, (key,), "format"), NOTHING)
            if value is not NOTHING:
                return value
        return select_value(t, key, Pop.last, "format", c.side_effects)

    def render(t: Trav) -> str | None:
        taken = 0
        pieces: list[str] = []
        position = 0
        for match in _PLACEHOLDER.finditer(template):
            key = match.group(1)
            if key == "_":
                value = bys[taken % len(bys)](t) if bys else NOTHING
                taken += 1
            else:
                value = resolve(t, key)
            if value is NOTHING:
                return None
            pieces += [template[position : match.start()], str(as_string(value))]
            position = match.end()
        return "".join([*pieces, template[position:]])

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            text = render(t)
            if text is not None:
                yield t.split(text)

    return run
