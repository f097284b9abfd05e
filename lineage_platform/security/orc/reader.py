"""Reading ORC files with column encryption: clear values for the columns a caller may see, masks otherwise.

>>> reader = EncryptedOrcReader("part-0.orc", LocalKeyStore("keys.json"))   # doctest: +SKIP
>>> reader.unlock(["ssn"])                                                   # doctest: +SKIP
>>> reader.read(columns=["id", "ssn"], where="id < 100").to_pylist()         # doctest: +SKIP

Decryption rebuilds the selected stripes as a plain ORC file in memory (``plain.plain_orc``) and lets ORC C++
(pyarrow) decode it, so every ORC type and codec that ORC C++ reads comes back decoded.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as pa_orc

from lineage_platform.errors import SecurityError
from lineage_platform.security.kms.base import KeyManagementService
from lineage_platform.security.orc.keys import VariantKeys, unlock
from lineage_platform.security.orc.plain import plain_orc
from lineage_platform.security.orc.pushdown import may_match, parse_where, row_filter
from lineage_platform.security.orc.statistics import (
    ColumnStats,
    plain_stripe_statistics,
    variant_stripe_statistics,
)
from lineage_platform.security.orc.tail import OrcTail, read_tail


class EncryptedOrcReader:
    """One ORC file, its encryption variants, and the local keys unlocked so far."""

    def __init__(self, path: str | Path, kms: KeyManagementService | None = None) -> None:
        self.tail: OrcTail = read_tail(path)
        self.kms = kms
        self.keys: dict[int, VariantKeys] = {}

    @property
    def top_level_columns(self) -> list[str]:
        """Names of the root struct's fields."""
        return [self.tail.columns[c].name for c in self.tail.columns[0].children]

    @property
    def encrypted_columns(self) -> dict[str, str]:
        """Encrypted column roots -> ``key@version``."""
        return {self.tail.columns[v.root].name: f"{v.key_name}@{v.key_version}" for v in self.tail.variants}

    def unlock(self, columns: Iterable[str]) -> list[str]:
        """Fetch local keys for the encrypted columns among ``columns`` (and those under them); returns the
        encrypted column roots now readable in clear. Raises SecurityError naming the column when its key
        cannot be had (KMS down, key refused, wrong key)."""
        wanted = {self.tail.column_named(name).id for name in columns}
        roots = {
            v.root for v in self.tail.variants if v.root not in self.keys and self._related(v.root, wanted)
        }
        if roots and self.kms is None:
            names = ", ".join(self.tail.columns[r].name for r in sorted(roots))
            raise SecurityError(
                f"columns {names} are encrypted and no KMS is configured", hint="pass --kms URL"
            )
        if roots and self.kms is not None:
            self.keys.update(unlock(self.tail, self.kms, roots))
        return [self.tail.columns[r].name for r in sorted(self.keys)]

    def _related(self, root: int, columns: set[int]) -> bool:
        """Whether the subtree at ``root`` overlaps any of ``columns`` (one inside the other)."""
        return any(self._contains(c, root) or self._contains(root, c) for c in columns)

    def _contains(self, ancestor: int, column: int) -> bool:
        """Whether ``column`` lies in the subtree of ``ancestor``."""
        return ancestor <= column <= self.tail.columns[ancestor].last_id

    def stripe_statistics(self) -> list[dict[int, ColumnStats]]:
        """Per stripe: column id -> statistics, clear for unlocked columns, masked otherwise."""
        stats = [dict(enumerate(s)) for s in plain_stripe_statistics(self.tail)]
        for keys in self.keys.values():
            for column, per_stripe in variant_stripe_statistics(
                self.tail, keys.variant, keys.footer_key
            ).items():
                for stripe, value in zip(stats, per_stripe, strict=False):
                    stripe[column] = value
        return stats

    def stripes_for(self, where: str | None = None, rows: tuple[int, int] | None = None) -> list[int]:
        """Stripes that may hold rows in ``rows`` (start, stop) and rows matching ``where`` (by statistics)."""
        predicates = parse_where(where)
        stats = self.stripe_statistics() if predicates else []
        out = []
        for stripe in self.tail.stripes:
            if rows and (stripe.first_row + stripe.rows <= rows[0] or stripe.first_row >= rows[1]):
                continue
            if predicates and stripe.index < len(stats):
                column_stats = stats[stripe.index]
                if not all(may_match(p, column_stats.get(self._column_id(p.column))) for p in predicates):
                    continue
            out.append(stripe.index)
        return out

    def _column_id(self, name: str) -> int:
        return self.tail.column_named(name).id

    def plain_file(self, stripes: Sequence[int] | None = None) -> bytes:
        """The selected stripes as a plain ORC file: clear unlocked columns, masked others."""
        return plain_orc(self.tail, self.keys, stripes)

    def read(
        self,
        columns: Sequence[str] | None = None,
        *,
        where: str | None = None,
        rows: tuple[int, int] | None = None,
        stripes: Sequence[int] | None = None,
    ) -> pa.Table:
        """An Arrow table of ``columns`` (default all top-level), restricted to a row range, stripes and ``where``."""
        # a row range needs its stripes contiguous: statistics only skip stripes when no range is asked
        candidates = self.stripes_for(None, rows) if rows else self.stripes_for(where)
        chosen = [s for s in candidates if stripes is None or s in stripes]
        names = list(columns) if columns else self.top_level_columns
        for name in names:
            self.tail.column_named(name)
        predicates = parse_where(where)
        wanted = names + [p.column for p in predicates if p.column not in names]
        if not chosen:
            return _empty(self.tail, names)
        ids = {self._column_id(name) for name in wanted}
        needed = {root: keys for root, keys in self.keys.items() if self._related(root, ids)}
        plain = plain_orc(self.tail, needed, chosen)  # columns not read stay masked: no AES work for them
        table = pa_orc.ORCFile(io.BytesIO(plain)).read(columns=wanted)
        if rows:
            first = self.tail.stripes[chosen[0]].first_row
            table = table.slice(max(0, rows[0] - first), rows[1] - max(rows[0], first))
        return row_filter(table, predicates).select(names)

    def rows(self, columns: Sequence[str] | None = None, **options: Any) -> list[dict[str, Any]]:
        """``read`` as a list of dicts."""
        return self.read(columns, **options).to_pylist()


def _empty(tail: OrcTail, names: list[str]) -> pa.Table:
    """A zero-row table with the file's schema (built from one decoded stripe-free plain file)."""
    schema = pa_orc.ORCFile(io.BytesIO(plain_orc(tail, {}, []))).schema
    return schema.empty_table().select(names)
