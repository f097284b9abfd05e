"""``lineage orc encrypt-table``: a Spark job writing a table as ORC with column encryption chosen from the
sensitivity labels in the lineage graph.

Rules map a label (``PII``, ``SENSITIVITY=high``) to a KMS key and a mask; the first rule a column's labels
match wins. Masks are kept to those ORC 2.3.0 writes without crashing: ``redact`` on string/char/varchar
(NPE), and ``sha256``/``redact`` on struct, list or map columns (NPE on null structs, overflow on long
lists) fall back to ``nullify``, and the plan says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lineage_platform.errors import SecurityError

MASKS = ("nullify", "sha256", "redact")
_COMPLEX_PREFIXES = ("struct", "array", "map")


@dataclass(frozen=True)
class EncryptionRule:
    """Columns labelled ``label`` are encrypted with master key ``key`` and masked with ``mask``."""

    label: str
    key: str
    mask: str = "nullify"

    @classmethod
    def parse(cls, text: str) -> EncryptionRule:
        """``LABEL:KEY[:MASK]``, e.g. ``PII:pii:sha256``."""
        parts = text.split(":")
        if len(parts) not in (2, 3) or not all(parts) or (len(parts) == 3 and parts[2] not in MASKS):
            raise SecurityError(
                f"bad encryption rule {text!r}", hint=f"write LABEL:KEY[:MASK], MASK one of {MASKS}"
            )
        return cls(*parts)


DEFAULT_RULES = (EncryptionRule("PII", "pii"), EncryptionRule("SENSITIVITY=high", "secret"))


@dataclass
class EncryptionPlan:
    """Which key encrypts and which mask hides each column, plus mask downgrades."""

    keys: dict[str, list[str]] = field(default_factory=dict)
    masks: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def orc_options(self) -> dict[str, str]:
        """``orc.encrypt`` and ``orc.mask`` in ORC's grammar (empty when nothing is sensitive)."""
        if not self.keys:
            return {}
        join = lambda groups: ";".join(f"{k}:{','.join(cols)}" for k, cols in sorted(groups.items()))  # noqa: E731
        return {"orc.encrypt": join(self.keys), "orc.mask": join(self.masks)}


def plan_encryption(
    table: str,
    columns: Sequence[tuple[str, str]],
    labels: Mapping[str, Iterable[Any]],
    rules: Sequence[EncryptionRule] = DEFAULT_RULES,
) -> EncryptionPlan:
    """The plan for ``columns`` ((name, Spark simple type)) of ``table`` given ``labels`` by qualified column
    name (values: taggings or labels whose ``str`` is ``KEY`` or ``KEY=value``)."""
    plan = EncryptionPlan()
    for name, spark_type in columns:
        found = {str(getattr(t, "label", t)) for t in labels.get(f"{table}.{name}", ())}
        rule = next((r for r in rules if r.label in found), None)
        if rule is None:
            continue
        mask = rule.mask
        if mask == "redact" and spark_type.startswith(("string", "char", "varchar")):
            mask = "nullify"
            plan.notes.append(f"{name}: redact on {spark_type} crashes ORC 2.3.0's writer; using nullify")
        if mask != "nullify" and spark_type.startswith(_COMPLEX_PREFIXES):
            plan.notes.append(f"{name}: {mask} on {spark_type} crashes ORC 2.3.0's writer; using nullify")
            mask = "nullify"
        plan.keys.setdefault(rule.key, []).append(name)
        plan.masks.setdefault(mask, []).append(name)
    return plan


def encrypt_table(
    spark: Any,
    g: Any,
    table: str,
    target: str,
    kms_uri: str,
    *,
    rules: Sequence[EncryptionRule] = DEFAULT_RULES,
    compression: str = "zstd",
) -> EncryptionPlan:
    """Write Spark table ``table`` to ``target`` as encrypted ORC, keys from the KMS at ``kms_uri``."""
    from lineage_platform.labels.propagate import labels_of

    frame = spark.table(table)
    columns = [(f.name, f.dataType.simpleString()) for f in frame.schema.fields]
    labels = labels_of(g, [f"{table}.{name}" for name, _ in columns])
    plan = plan_encryption(table, columns, labels, rules)
    writer = frame.write.mode("overwrite").format("orc").option("compression", compression)
    for key, value in plan.orc_options().items():
        writer = writer.option(key, value)
    if plan.keys:
        writer = writer.option("hadoop.security.key.provider.path", kms_uri).option(
            "orc.key.provider", "hadoop"
        )
    writer.save(target)
    return plan
