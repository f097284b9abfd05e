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

Kinds: ``hash`` (``mask_hash``), ``redact`` (``mask``: letters to x/X, digits to n), ``show_first`` /
``show_last`` (``mask_show_first_n`` / ``mask_show_last_n``), ``nullify``, ``year`` (the date's year,
month and day set to 1) and ``custom`` (an expression over ``{col}``). The function names are Hive's
built-ins; :mod:`lineage_platform.security.duckdb_masks` defines them for DuckDB.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlglot
from sqlglot import exp

from lineage_platform.errors import SecurityError

KINDS = ("nullify", "hash", "redact", "custom", "show_first", "show_last", "year")
"""Rule kinds, strictest first: when several rules meet in one value, the strictest wins."""
PARTIAL_KINDS = frozenset({"custom", "show_first", "show_last", "year"})
"""Kinds that reveal part of a value: safe on the column itself, not on an arbitrary expression over it."""
_PLACEHOLDER = "__masked_value__"
_YEAR_ONLY = f"CAST(concat(CAST(year({_PLACEHOLDER}) AS STRING), '-01-01') AS DATE)"
_HINT = "see lineage_platform/security/README.md for the masking section of the policy file"


@dataclass(frozen=True)
class MaskRule:
    """One way to hide a value."""

    kind: str
    n: int = 4
    expression: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise SecurityError(f"unknown mask kind {self.kind!r}", hint=f"use one of {', '.join(KINDS)}")
        if self.kind == "custom" and (not self.expression or "{col}" not in self.expression):
            raise SecurityError("a custom mask needs `expression` containing {col}", hint=_HINT)

    @property
    def partial(self) -> bool:
        """Whether the rule shows part of the value."""
        return self.kind in PARTIAL_KINDS

    def apply(self, value: exp.Expr, dialect: str = "hive") -> exp.Expr:
        """The masked form of ``value``.

        >>> MaskRule("show_last", 4).apply(exp.column("ssn")).sql("hive")
        'MASK_SHOW_LAST_N(ssn, 4)'
        """
        if self.kind == "nullify":
            return exp.Null()
        if self.kind == "hash":
            return exp.Anonymous(this="mask_hash", expressions=[value])
        if self.kind == "redact":
            return exp.Anonymous(this="mask", expressions=[value])
        if self.kind in ("show_first", "show_last"):
            name = f"mask_{self.kind}_n"
            return exp.Anonymous(this=name, expressions=[value, exp.Literal.number(self.n)])
        template = _YEAR_ONLY if self.kind == "year" else str(self.expression).replace("{col}", _PLACEHOLDER)
        try:
            masked = sqlglot.parse_one(template, read=dialect)
        except sqlglot.errors.SqlglotError as error:
            raise SecurityError(
                f"bad custom mask expression {self.expression!r}: {error}", hint=_HINT
            ) from error
        return masked.transform(lambda node: value.copy() if _is_placeholder(node) else node)


def strictest(rules: Iterable[MaskRule]) -> MaskRule:
    """The rule that hides the most (``KINDS`` order)."""
    return min(rules, key=lambda rule: KINDS.index(rule.kind))


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
                f"{where}: a rule needs `mask` and exactly one of `column` or `label`", hint=_HINT
            )
        rule = MaskRule(str(entry["mask"]), int(entry.get("n", 4)), entry.get("expression"))
        if "column" in entry:
            column_rules[str(entry["column"]).lower()] = rule
        else:
            key, _, value = str(entry["label"]).partition("=")
            label_rules.append((key.strip(), value.strip() or None, rule))
    return MaskingPolicy(
        column_rules, tuple(label_rules), frozenset(str(p) for p in raw.get("unmasked") or [])
    )
