"""What every event decoder produces, and the checks they share on the JSON they read."""

from __future__ import annotations

from typing import Any

from lineage_platform.errors import IngestError
from lineage_platform.model import RunInfo, StatementLineage

LineageItems = list[tuple[StatementLineage, RunInfo | None]]
"""``(statement lineage, run provenance or None)`` pairs, the input of ``LineageWriter.write_runs``."""


def field(mapping: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """``mapping[key]`` if present and of type ``kind``; else an IngestError naming the field and where it is."""
    if not isinstance(mapping, dict):
        raise IngestError(f"{where} is not a JSON object", hint="check the event against its format's spec")
    value = mapping.get(key)
    if not isinstance(value, kind):
        expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        problem = "is missing" if value is None else f"is a {type(value).__name__}, not {expected}"
        raise IngestError(f"{where}.{key} {problem}", hint="check the event against its format's spec")
    return value
