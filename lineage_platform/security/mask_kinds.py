"""The mask kinds, each defined once: how it is written in SQL, what DuckDB needs to run it, what it keeps.

Adding a mask kind is one entry in :data:`MASK_KINDS`: policy validation (:mod:`masking_rules`), the SQL
rewrite (:meth:`masking_rules.MaskRule.apply`), the DuckDB macros (:mod:`duckdb_masks`), the README's table
(:func:`markdown_table`) and the tests (each kind's example runs on DuckDB) all read it.

A kind's ``sql`` is a template over ``{col}`` (the masked value) and, for kinds that take ``n``, ``{n}``; it is
parsed in the query's dialect, so it is written in SQL every dialect the platform reads accepts. The function
names are Hive's built-ins (Hive and Spark SQL with Hive's UDFs run them as they are); ``function`` defines the
one a kind introduces as a DuckDB macro over ``v`` and its other parameters.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lineage_platform.errors import SecurityError


@dataclass(frozen=True)
class MaskFunction:
    """A masking function of Hive that DuckDB lacks, and its definition as a DuckDB macro."""

    name: str
    params: tuple[str, ...]
    duckdb: str

    def duckdb_macro(self) -> str:
        """The ``CREATE MACRO`` statement defining the function on DuckDB."""
        return f"CREATE OR REPLACE MACRO {self.name}({', '.join(self.params)}) AS {self.duckdb}"


@dataclass(frozen=True)
class MaskKind:
    """One way of hiding a value, as a policy file names it (``mask: <name>``)."""

    name: str
    sql: str | None
    """The masked value over ``{col}`` (and ``{n}``); None: the rule's own ``expression``."""
    shows: str
    """What the masked value still shows (one line of the README's table)."""
    keeps_equality: bool
    """Distinct values stay distinct, so equality, joins and grouping on the masked value match the real ones."""
    example: Mapping[str, Any]
    """A policy rule of this kind (``mask`` implied) with ``value`` → ``masked``: documented, and run on DuckDB."""
    params: tuple[str, ...] = ()
    """Keys of the policy rule the kind reads besides ``mask``."""
    function: MaskFunction | None = field(default=None)

    def template(self, expression: str | None) -> str:
        """The SQL template of a rule of this kind (``expression`` is the rule's own, for ``custom``)."""
        if self.sql is not None:
            return self.sql
        if not expression or "{col}" not in expression:
            raise SecurityError(f"a {self.name} mask needs `expression` containing {{col}}", hint=POLICY_HINT)
        return expression


POLICY_HINT = "see lineage_platform/security/README.md for the masking section of the policy file"
_SSN = "123-45-6789"

MASK_KINDS: dict[str, MaskKind] = {
    kind.name: kind
    for kind in (
        MaskKind(
            "nullify",
            "NULL",
            "nothing",
            False,
            {"value": _SSN, "masked": None},
        ),
        MaskKind(
            "hash",
            "mask_hash({col})",
            "the SHA-256 hex digest of the value's text",
            True,
            {
                "value": "ann@example.com",
                "masked": "71d4f55f72fa128dfb468a1a3901507c804b74316488744d769d7f4b16696476",
            },
            function=MaskFunction("mask_hash", ("v",), "sha256(CAST(v AS VARCHAR))"),
        ),
        MaskKind(
            "redact",
            "mask({col})",
            "the shape: upper-case letters become X, lower-case x, digits n",
            False,
            {"value": "Ann-42", "masked": "Xxx-nn"},
            function=MaskFunction(
                "mask",
                ("v",),
                "regexp_replace(regexp_replace(regexp_replace("
                "CAST(v AS VARCHAR), '[A-Z]', 'X', 'g'), '[a-z]', 'x', 'g'), '[0-9]', 'n', 'g')",
            ),
        ),
        MaskKind(
            "custom",
            None,
            "whatever `expression` (SQL over `{col}`) computes",
            False,
            {"expression": "concat('***', substr({col}, -2))", "value": _SSN, "masked": "***89"},
            params=("expression",),
        ),
        MaskKind(
            "show_first",
            "mask_show_first_n({col}, {n})",
            "the first `n` characters (default 4), the rest redacted",
            False,
            {"n": 4, "value": _SSN, "masked": "123-nn-nnnn"},
            params=("n",),
            function=MaskFunction(
                "mask_show_first_n",
                ("v", "n"),
                "left(CAST(v AS VARCHAR), n) || mask(substr(CAST(v AS VARCHAR), n + 1))",
            ),
        ),
        MaskKind(
            "show_last",
            "mask_show_last_n({col}, {n})",
            "the last `n` characters (default 4), the rest redacted",
            False,
            {"n": 4, "value": _SSN, "masked": "nnn-nn-6789"},
            params=("n",),
            function=MaskFunction(
                "mask_show_last_n",
                ("v", "n"),
                "mask(left(CAST(v AS VARCHAR), greatest(length(CAST(v AS VARCHAR)) - n, 0))) "
                "|| right(CAST(v AS VARCHAR), n)",
            ),
        ),
        MaskKind(
            "year",
            "CAST(concat(CAST(year({col}) AS STRING), '-01-01') AS DATE)",
            "the year of a date (month and day set to 1)",
            False,
            {"value": datetime.date(1990, 5, 17), "masked": datetime.date(1990, 1, 1)},
        ),
    )
}
"""Every mask kind, strictest first: when several rules meet in one value, the strictest wins."""


def mask_kind(name: str, where: str = "") -> MaskKind:
    """The kind a policy rule names; an unknown name is an error listing the known ones.

    >>> mask_kind("hash").keeps_equality
    True
    >>> mask_kind("sha1", "masking.rules[0]")
    Traceback (most recent call last):
    ...
    lineage_platform.errors.SecurityError: masking.rules[0]: unknown mask kind 'sha1' (use one of nullify, hash, redact, custom, show_first, show_last, year)
    """
    kind = MASK_KINDS.get(name)
    if kind is None:
        prefix = f"{where}: " if where else ""
        raise SecurityError(f"{prefix}unknown mask kind {name!r}", hint=f"use one of {', '.join(MASK_KINDS)}")
    return kind


def strictness(name: str) -> int:
    """Rank of a kind in :data:`MASK_KINDS` (0 hides the most)."""
    return list(MASK_KINDS).index(name)


def duckdb_macros() -> list[str]:
    """The ``CREATE MACRO`` statements defining every kind's function on DuckDB, in registry order."""
    return [kind.function.duckdb_macro() for kind in MASK_KINDS.values() if kind.function is not None]


def markdown_table() -> str:
    """The README's table of mask kinds.

    >>> print(markdown_table().splitlines()[2])
    | `nullify` | `mask: nullify` | `NULL` | nothing | no | `'123-45-6789'` → `NULL` |
    """
    lines = [
        "| kind | policy rule | written as | the masked value shows | equality and joins kept | example |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for kind in MASK_KINDS.values():
        entry = ", ".join([f"mask: {kind.name}", *(f"{p}: {kind.example[p]}" for p in kind.params)])
        written = f"`{kind.sql}`" if kind.sql is not None else "the rule's `expression`"
        example = f"{_literal(kind.example['value'])} → {_literal(kind.example['masked'])}"
        kept = "yes" if kind.keeps_equality else "no"
        lines.append(f"| `{kind.name}` | `{entry}` | {written} | {kind.shows} | {kept} | {example} |")
    return "\n".join(lines).replace("{n}", "n")


def _literal(value: object) -> str:
    text = "NULL" if value is None else f"'{value}'"
    return f"`{text[:17]}…'`" if len(text) > 24 else f"`{text}`"
