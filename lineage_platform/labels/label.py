"""A label: ``KEY=value`` (business line, event type, sensitivity level) or a flag ``KEY`` (PII)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from lineage_platform.errors import LineageError
from lineage_platform.graph.dsl import classification_name

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
INFLUENCE_KEY = "INFLUENCED_BY"


@dataclass(frozen=True, order=True)
class Label:
    """A classification; ``value`` is empty for a flag."""

    key: str
    value: str = ""

    @classmethod
    def parse(cls, text: str) -> Label:
        """``"APP=douyin"`` -> Label("APP", "douyin"); ``"PII"`` -> Label("PII")."""
        key, _, value = text.strip().partition("=")
        if not _KEY.match(key.strip()):
            raise LineageError(
                f"bad label {text!r}",
                hint="write KEY=value (APP=douyin) or a flag KEY (PII); keys start with a letter",
            )
        return cls(key.strip(), value.strip())

    def __str__(self) -> str:
        return classification_name(self.key, self.value)
