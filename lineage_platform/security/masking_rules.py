"""Masking rules (the kinds Apache Ranger offers for Hive) and which columns they apply to.

Policy file section::

    masking:
      unmasked: [role:security]            # principals who see plaintext
      rules:
        - label: PII                       # a label (KEY or KEY=value), declared or propagated in the graph
          mask: hash
        - column: sales.customers.ssn      # a column rule wins over label rules
          mask: show_last
          n: 4
        - label: SENSITIVITY=high
          mask: custom
          expression: "concat('***', substr({col}, -2))"

The kinds (``hash``, ``show_last``, ...) and how each is written in SQL are defined once, in
:mod:`lineage_platform.security.mask_kinds`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import sqlglot
from sqlglot import exp

from lineage_platform.errors import SecurityError
from lineage_platform.security.mask_kinds import MASK_KINDS, POLICY_HINT, mask_kind, strictness

_PLACEHOLDER = "__masked_value__"


@dataclass(frozen=True)
class MaskRule:
    """One way to hide a value: a kind of :data:`~lineage_platform.security.mask_kinds.MASK_KINDS`."""

    kind: str
    n: int = 4
    expression: str | None = None

    def __post_init__(self) -> None:
        mask_kind(self.kind).template(self.expression)

    def apply(self, value: exp.Expr, dialect: str = "hive") -> exp.Expr:
        """The masked form of ``value``.

        >>> MaskRule("show_last", 4).apply(exp.column("ssn")).sql("hive")
        'MASK_SHOW_LAST_N(ssn, 4)'
        """
        kind = MASK_KINDS[self.kind]
        written = kind.template(self.expression)
        template = written.replace("{col}", _PLACEHOLDER)
        if "n" in kind.params:
            template = template.replace("{n}", str(self.n))
        try:
            masked = _parse(template, dialect)
        except sqlglot.errors.SqlglotError as error:
            raise SecurityError(
                f"bad {self.kind} mask expression {written!r}: {error}", hint=POLICY_HINT
            ) from error
        return masked.transform(lambda node: value.copy() if _is_placeholder(node) else node)


@lru_cache(maxsize=256)
def _parse(template: str, dialect: str) -> exp.Expr:
    return sqlglot.parse_one(template, read=dialect)


def strictest(rules: Iterable[MaskRule]) -> MaskRule:
    """The rule that hides the most (``MASK_KINDS`` order)."""
    return min(rules, key=lambda rule: strictness(rule.kind))


def _is_placeholder(node: exp.Expr) -> bool:
    return isinstance(node, exp.Column) and node.name == _PLACEHOLDER and not node.table


@dataclass(frozen=True)
class MaskingPolicy:
    """Who sees plaintext, and which rule masks which column or label."""

    column_rules: Mapping[str, MaskRule] = field(default_factory=dict)
    label_rules: tuple[tuple[str, str | None, MaskRule], ...] = ()  # (label key, value or None, rule)
    unmasked: frozenset[str] = frozenset()

    def rules_for(self, column: str, labels: Iterable[tuple[str, str]]) -> MaskRule | None:
        """The rule for ``db.table.column`` carrying ``labels`` ((key, value) pairs), or None."""
        if column in self.column_rules:
            return self.column_rules[column]
        matching = [
            rule
            for key, value, rule in self.label_rules
            for label_key, label_value in labels
            if key == label_key and value in (None, label_value)
        ]
        return strictest(matching) if matching else None


def masking_policy(raw: Mapping[str, Any] | None) -> MaskingPolicy:
    """Build a :class:`MaskingPolicy` from the ``masking`` section of a policy file."""
    raw = raw or {}
    column_rules: dict[str, MaskRule] = {}
    label_rules: list[tuple[str, str | None, MaskRule]] = []
    for number, entry in enumerate(raw.get("rules") or []):
        where = f"masking.rules[{number}]"
        if not isinstance(entry, Mapping) or "mask" not in entry or ("column" in entry) == ("label" in entry):
            raise SecurityError(
                f"{where}: a rule needs `mask` and exactly one of `column` or `label`", hint=POLICY_HINT
            )
        kind = mask_kind(str(entry["mask"]), where)
        rule = MaskRule(kind.name, _count(entry.get("n", 4), where), entry.get("expression"))
        if "column" in entry:
            column_rules[str(entry["column"]).lower()] = rule
        else:
            key, _, value = str(entry["label"]).partition("=")
            label_rules.append((key.strip(), value.strip() or None, rule))
    return MaskingPolicy(
        column_rules, tuple(label_rules), frozenset(str(p) for p in raw.get("unmasked") or [])
    )


def _count(value: object, where: str) -> int:
    """``n`` of a rule: a whole number of characters, at least 0 (a quoted number is read as one)."""
    try:
        count = -1 if isinstance(value, bool) else int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        count = -1
    if count < 0:
        raise SecurityError(
            f"{where}: `n` must be a whole number of characters, got {value!r}", hint=POLICY_HINT
        )
    return count
