"""Propagation rules per label key: which edges carry a label, what a filter does to it, where it stops.

Defaults (overridable per key in a YAML rules file, see ``RuleSet.load``):
- strong column edges carry every label through IDENTITY, TRANSFORMATION and AGGREGATION transforms, so
  ``max(phone)`` and ``collect_set(phone)`` are PII;
- masking edges stop a label (``masking: stop``): hashing/masking functions and counting aggregates
  (``count(DISTINCT phone)``, ``approx_count_distinct``), which the SQL layer marks as masking;
- weak edges (filters, joins, grouping) carry nothing (``weak: none``); ``weak: influence`` makes them add an
  ``INFLUENCED_BY=<key>`` label instead; ``weak: carry`` carries the label itself;
- table-level lineage carries table labels; a filter ``WHERE col = 'x'`` / ``IN (...)`` on one of the rule's
  ``narrow_by`` columns of the labelled table narrows the label's values to those the filter keeps (in every
  read, when a statement reads the table several times);
- ``single: true`` keys allow one value per vertex in declarations (a second one is a conflict);
- ``enabled: false`` switches a label off; ``propagate: false`` on a process or edge in the graph stops all labels.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import yaml

from lineage_platform.errors import LineageError
from lineage_platform.labels.label import INFLUENCE_KEY

DIRECT = ("IDENTITY", "TRANSFORMATION", "AGGREGATION")
WeakMode = Literal["none", "carry", "influence"]


@dataclass(frozen=True)
class LabelRule:
    """How one label key propagates."""

    carry: frozenset[str] = frozenset(DIRECT)
    masking: Literal["stop", "carry"] = "stop"
    weak: WeakMode = "none"
    narrow_by: frozenset[str] = frozenset()
    single: bool = False
    enabled: bool = True
    table_level: bool = True


DEFAULT_RULES: dict[str, LabelRule] = {
    "PII": LabelRule(weak="influence"),
    "APP": LabelRule(narrow_by=frozenset({"app", "app_name", "app_id"})),
    "SENSITIVITY": LabelRule(single=True),
    # "influenced by" marks where a weak use happened; it follows the values it marks, not whole tables
    INFLUENCE_KEY: LabelRule(table_level=False),
}


@dataclass(frozen=True)
class RuleSet:
    """Rules for every label key; keys without a rule of their own use ``default``."""

    rules: Mapping[str, LabelRule] = field(default_factory=lambda: dict(DEFAULT_RULES))
    default: LabelRule = LabelRule()

    def rule(self, key: str) -> LabelRule:
        """The rule for a label key."""
        return self.rules.get(key, self.default)

    @classmethod
    def load(cls, path: str | Path) -> RuleSet:
        """Read ``{default: {...}, rules: {KEY: {...}}}`` from YAML, on top of the built-in rules."""
        try:
            raw = yaml.safe_load(Path(path).read_text()) or {}
        except yaml.YAMLError as exc:
            raise LineageError(f"{path}: not valid YAML: {exc}", hint="fix the rules file") from exc
        default = _rule(LabelRule(), raw.get("default", {}), f"{path}: default")
        rules = dict(DEFAULT_RULES)
        for key, spec in (raw.get("rules") or {}).items():
            rules[key] = _rule(rules.get(key, default), spec, f"{path}: rules.{key}")
        return cls(rules, default)


def _rule(base: LabelRule, spec: Mapping[str, Any], where: str) -> LabelRule:
    known = set(LabelRule.__dataclass_fields__)
    unknown = set(spec) - known
    if unknown:
        raise LineageError(f"{where}: unknown setting(s) {sorted(unknown)}", hint=f"use {sorted(known)}")
    values: dict[str, Any] = dict(spec)
    for name in ("carry", "narrow_by"):
        if name in values:
            values[name] = frozenset(_strings(values[name], f"{where}.{name}"))
    if values.get("weak", "none") not in ("none", "carry", "influence"):
        raise LineageError(f"{where}.weak: {values['weak']!r}", hint="use none, carry or influence")
    if values.get("masking", "stop") not in ("stop", "carry"):
        raise LineageError(f"{where}.masking: {values['masking']!r}", hint="use stop or carry")
    return replace(base, **values)


def _strings(value: Any, where: str) -> Iterable[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise LineageError(f"{where} must be a list of names", hint="e.g. [IDENTITY, TRANSFORMATION]")
    return value
