"""Resolving a key the way select()/where() do: map entry, side effect, then as-labels on the path."""

from __future__ import annotations

from typing import Any

from gremlin_python.process.traversal import Pop

from lineage_platform.graph.embedded.modulation import NOTHING
from lineage_platform.graph.embedded.pipeline import Trav


def select_value(
    t: Trav, key: Any, pop: Pop, step_name: str, side_effects: dict[str, Any] | None = None
) -> Any:
    """The value ``key`` names for ``t`` (NOTHING when it names nothing)."""
    obj = t.obj
    if isinstance(obj, dict) and key in obj:
        return obj[key]
    if side_effects is not None and key in side_effects:
        return side_effects[key]
    if t.path is None or not isinstance(key, str):
        return NOTHING
    found = t.path.labelled(key)
    if not found:
        return NOTHING
    if pop == Pop.first:
        return found[0]
    if pop == Pop.last:
        return found[-1]
    if pop == Pop.all_:
        return found
    return found[0] if len(found) == 1 else found
