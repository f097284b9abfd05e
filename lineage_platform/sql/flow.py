"""Values on their way to an output: how a base column is used (strength, transform, masking, key path)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from lineage_platform.model import Strength, Transform

_DIRECT_RANK = {"IDENTITY": 0, "TRANSFORMATION": 1, "AGGREGATION": 2}


@dataclass(frozen=True)
class Usage:
    """How an expression position uses the values below it."""

    strength: Strength = "strong"
    transform: Transform = "IDENTITY"
    masking: bool = False
    key_path: str | None = None

    def transformed(self, *, aggregate: bool = False, masking: bool = False) -> Usage:
        """The usage one function or operator deeper; weak usages stay as they are."""
        if self.strength == "weak":
            return self
        step: Transform = "AGGREGATION" if aggregate else "TRANSFORMATION"
        transform = max(self.transform, step, key=_DIRECT_RANK.__getitem__)
        return replace(self, transform=transform, masking=self.masking or masking)

    def weak(self, transform: Transform) -> Usage:
        """A condition-like position; an enclosing weak usage keeps its own transform."""
        if self.strength == "weak":
            return self
        return Usage("weak", transform)

    def keyed(self, key_path: str) -> Usage:
        """The usage of a value whose sub-field ``key_path`` is read (applied before this usage's path)."""
        return replace(self.transformed(), key_path=join_key_paths(key_path, self.key_path))

    def then(self, outer: Usage) -> Usage:
        """This (inner) usage seen through an ``outer`` usage of its result."""
        if outer.strength == "weak":
            return outer
        if self.strength == "weak":
            return self
        transform = max(self.transform, outer.transform, key=_DIRECT_RANK.__getitem__)
        return Usage(
            "strong", transform, self.masking or outer.masking, join_key_paths(self.key_path, outer.key_path)
        )


@dataclass(frozen=True)
class Flow:
    """A base column reaching an output under a usage."""

    source: str
    usage: Usage = Usage()

    def through(self, outer: Usage) -> Flow:
        """This flow as seen by an expression that uses its value under ``outer``."""
        return Flow(self.source, self.usage.then(outer))


def join_key_paths(inner: str | None, outer: str | None) -> str | None:
    """``$.a`` then ``$.b`` is ``$.a.b``; either may be missing.

    >>> join_key_paths("$.a", "$.b"), join_key_paths(None, "$[0]")
    ('$.a.b', '$[0]')
    """
    if not inner or not outer:
        return inner or outer
    return inner + outer.removeprefix("$")
