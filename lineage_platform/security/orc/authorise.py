"""Per-user reads: ask the permission layer which columns a user may see, fetch keys only for those.

A column is readable in clear when one of the user's grants covers it for **all** rows of the table: a local
key decrypts every row, so a row-restricted grant does not unlock it (fail closed). Encrypted columns the
user may not see come back as the masked copy the file carries; unencrypted ones the user may not see are
left out (and refused when asked for by name). Without a KMS no key can be had: every encrypted column comes
back masked, whatever the grants.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from lineage_platform.errors import SecurityError
from lineage_platform.security.kms.base import KeyManagementService
from lineage_platform.security.orc.pushdown import parse_where
from lineage_platform.security.orc.reader import EncryptedOrcReader
from lineage_platform.security.policy import PolicyStore


@dataclass
class ReadReport:
    """What a per-user read showed: clear columns, masked columns, left-out columns, stripes read."""

    clear: list[str] = field(default_factory=list)
    masked: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    stripes: list[int] = field(default_factory=list)


def permitted_columns(store: PolicyStore, user: str, table: str, columns: Sequence[str]) -> set[str]:
    """The ``columns`` of ``table`` (``db.table``) that ``user`` may read for every row."""
    database, _, name = table.lower().rpartition(".")
    if not database:
        raise SecurityError(f"table {table!r} needs its database", hint="pass --table DB.TABLE")
    allowed: set[str] = set()
    for grant in store.grants_of(user):
        if grant.database.lower() != database or grant.table not in (None, name) or grant.rows:
            continue
        allowed |= {c for c in columns if grant.columns is None or c.lower() in grant.columns}
    return allowed


def table_of(path: str | Path) -> str | None:
    """``db.table`` from a Hive warehouse path (``.../DB.db/TABLE/[part=../]file.orc``), if it is one."""
    for parent in Path(path).resolve().parents:
        if parent.parent.name.endswith(".db"):
            return f"{parent.parent.name.removesuffix('.db')}.{parent.name}"
    return None


def read_as_user(
    path: str | Path,
    user: str,
    store: PolicyStore,
    kms: KeyManagementService | None,
    *,
    table: str | None = None,
    columns: Sequence[str] | None = None,
    where: str | None = None,
    rows: tuple[int, int] | None = None,
) -> tuple[pa.Table, ReadReport]:
    """Rows of the ORC file at ``path`` as ``user`` may see them, and what was clear, masked or left out;
    with ``kms`` None, encrypted columns are masked even when granted."""
    table = table or table_of(path)
    if table is None:
        raise SecurityError(f"cannot tell which table {path} belongs to", hint="pass --table DB.TABLE")
    reader = EncryptedOrcReader(path, kms)
    names = list(columns) if columns else reader.top_level_columns
    allowed = permitted_columns(store, user, table, names)
    encrypted = reader.encrypted_columns
    report = ReadReport()
    for name in names:
        if name in allowed and (kms is not None or name not in encrypted):
            report.clear.append(name)
        elif name in encrypted:
            report.masked.append(name)
        else:
            report.hidden.append(name)
    if columns and report.hidden:
        raise SecurityError(
            f"{user} may not read {', '.join(report.hidden)} of {table}",
            hint="ask the data owner for a grant",
        )
    shown = [n for n in names if n not in report.hidden]
    for predicate in parse_where(where):
        if predicate.column not in shown:
            raise SecurityError(
                f"--where tests {predicate.column!r}, which {user} does not read",
                hint="filter on a shown column",
            )
    reader.unlock([n for n in report.clear if n in encrypted])
    report.stripes = reader.stripes_for(where, rows)
    return reader.read(shown, where=where, rows=rows), report
