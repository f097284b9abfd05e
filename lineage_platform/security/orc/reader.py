"""Reading ORC files with column encryption: clear values for the columns a caller may see, masks otherwise.

>>> reader = EncryptedOrcReader("part-0.orc", LocalKeyStore("keys.json"))   # doctest: +SKIP
>>> reader.unlock(["ssn"])                                                   # doctest: +SKIP
>>> reader.read(columns=["id", "ssn"], where="id < 100").to_pylist()         # doctest: +SKIP

Decryption rebuilds the selected stripes as a plain ORC file in memory (``plain.plain_orc``) and lets ORC C++
(pyarrow) decode it, so every ORC type and codec that ORC C++ reads comes back decoded.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as pa_orc

from lineage_platform.errors import SecurityError
from lineage_platform.gc_pause import gc_paused
from lineage_platform.model import Predicate
from lineage_platform.security.kms.base import KeyManagementService
from lineage_platform.security.orc.keys import VariantKeys, unlock
from lineage_platform.security.orc.plain import plain_orc
from lineage_platform.security.orc.pushdown import matching_groups, may_match, parse_where, row_filter
from lineage_platform.security.orc.read_stats import ReadStats
from lineage_platform.security.orc.row_index import StripeRowIndex, check_stripe_keys
from lineage_platform.security.orc.rows import orc_rows, table_rows
from lineage_platform.security.orc.seek import DECODE_ERRORS, decode_rows, group_runs, stripe_part
from lineage_platform.security.orc.statistics import (
    ColumnStats,
    plain_stripe_statistics,
    variant_stripe_statistics,
)
from lineage_platform.security.orc.tail import OrcTail, StripeInfo, read_tail
from lineage_platform.security.orc.verify import check_stripe_presence, check_stripes, ranged

# A stripe of which at most this share of the rows is wanted is read from those row groups only; ORC C++
# decodes them through pyorc at ~250k rows/s, against ~5M rows/s for a whole stripe through pyarrow, so a
# larger share decrypts less but takes longer than reading the whole stripe.
SEEK_SHARE = 0.05


class EncryptedOrcReader:
    """One ORC file, its encryption variants, and the local keys unlocked so far."""

    def __init__(self, path: str | Path, kms: KeyManagementService | None = None) -> None:
        self.tail: OrcTail = read_tail(path)
        self.kms = kms
        self.keys: dict[int, VariantKeys] = {}
        self.last_read = ReadStats()  # what the latest ``read`` decrypted and decoded
        # stripe statistics read so far: (unlocked roots, stripes in Metadata, column -> entry per stripe)
        self._statistics: tuple[frozenset[int], int, dict[int, list[ColumnStats | None]]] | None = None

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
            with self._naming_the_file():
                unlocked = unlock(self.tail, self.kms, roots)
                for keys in unlocked.values():
                    check_stripe_keys(self.tail, keys)
            self.keys.update(unlocked)
        return [self.tail.columns[r].name for r in sorted(self.keys)]

    def _related(self, root: int, columns: set[int]) -> bool:
        """Whether the subtree at ``root`` overlaps any of ``columns`` (one inside the other)."""
        return any(self._contains(c, root) or self._contains(root, c) for c in columns)

    def _contains(self, ancestor: int, column: int) -> bool:
        """Whether ``column`` lies in the subtree of ``ancestor``."""
        return ancestor <= column <= self.tail.columns[ancestor].last_id

    def stripe_statistics(self, columns: Iterable[int] | None = None) -> list[dict[int, ColumnStats]]:
        """Per stripe: column id -> statistics of ``columns`` (default all), clear for unlocked columns,
        masked otherwise (each column's read once per set of unlocked keys)."""
        wanted = range(len(self.tail.columns)) if columns is None else list(columns)
        unlocked = frozenset(self.keys)
        if self._statistics is None or self._statistics[0] != unlocked:
            self._statistics = unlocked, 0, {}
        _, stripes, known = self._statistics
        missing = [c for c in wanted if c not in known]
        if missing:
            stripes, read = self._read_statistics(missing)
            known.update(read)
            self._statistics = unlocked, stripes, known
        return [{c: value for c in wanted if (value := known[c][i]) is not None} for i in range(stripes)]

    def _read_statistics(self, columns: list[int]) -> tuple[int, dict[int, list[ColumnStats | None]]]:
        """(stripes in Metadata, column -> entry per stripe) for ``columns``: the clear entries of unlocked
        variants' columns, the Metadata's (masked for encrypted columns) of the others."""
        clear: dict[int, list[ColumnStats]] = {}
        for keys in self.keys.values():
            inside = [c for c in columns if keys.variant.covers(c)]
            if inside:
                clear.update(variant_stripe_statistics(self.tail, keys.variant, keys.footer_key, inside))
        plain = plain_stripe_statistics(self.tail, [c for c in columns if c not in clear])
        stats = {c: [stripe.get(c) for stripe in plain] for c in columns if c not in clear}
        for column, per_stripe in clear.items():
            stats[column] = [per_stripe[i] if i < len(per_stripe) else None for i in range(len(plain))]
        return len(plain), stats

    def stripes_for(self, where: str | None = None, rows: tuple[int, int] | None = None) -> list[int]:
        """Stripes that may hold rows in ``rows`` (start, stop) and rows matching ``where`` (by statistics)."""
        predicates = parse_where(where)
        stats = self.stripe_statistics({self._column_id(p.column) for p in predicates}) if predicates else []
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
        """An Arrow table of ``columns`` (default all top-level), restricted to a row range, stripes and
        ``where``. Stripes and row groups that statistics rule out are skipped; a stripe of which at most
        ``SEEK_SHARE`` of the rows are wanted is decrypted and decoded only from the row groups wanted.
        ``last_read`` counts what it cost."""
        names = list(columns) if columns else self.top_level_columns
        for name in names:
            self.tail.column_named(name)
        with self._naming_the_file():
            return self._read(names, where, rows, stripes)

    def _read(
        self,
        names: list[str],
        where: str | None,
        rows: tuple[int, int] | None,
        stripes: Sequence[int] | None,
    ) -> pa.Table:
        predicates = parse_where(where)
        wanted = names + [p.column for p in predicates if p.column not in names]
        self.last_read = stats = ReadStats()
        ids = self._ids(wanted)
        # ``needed``: keys by variant root for the columns read; ``owner``: the same by column id
        needed = self._keys_for(ids)
        owner = {c: needed[v.root] for c in ids if (v := self.tail.variant_of(c)) and v.root in needed}
        parts: list[pa.Table] = []
        whole: list[int] = []  # consecutive stripes read whole, decoded together
        for number in self.stripes_for(where, rows):
            if stripes is not None and number not in stripes:
                continue
            stripe = self.tail.stripes[number]
            span = _span(stripe, rows)
            if not predicates and span == (0, stripe.rows):
                whole.append(number)
                continue
            index = StripeRowIndex(self.tail, stripe, stats)
            groups = self._row_groups(index, span, predicates, owner)
            if len(groups) == index.groups and span == (0, stripe.rows):
                whole.append(number)
                continue
            if whole:
                parts.append(self._decode_whole(needed, whole, wanted, stats))
                whole = []
            if groups:
                parts.append(self._decode_groups(index, ids, needed, owner, groups, span, wanted))
        if whole:
            parts.append(self._decode_whole(needed, whole, wanted, stats))
        table = pa.concat_tables(parts) if parts else self._schema(wanted).empty_table()
        return row_filter(table, predicates).select(names)

    def _ids(self, names: Iterable[str]) -> set[int]:
        """Column ids of ``names`` and every column under them."""
        return {i for n in names for i in range(self._column_id(n), self.tail.column_named(n).last_id + 1)}

    def _keys_for(self, ids: set[int]) -> dict[int, VariantKeys]:
        """Unlocked keys, by variant root, of the variants overlapping the columns ``ids``."""
        return {root: keys for root, keys in self.keys.items() if self._related(root, ids)}

    def _decode_whole(
        self, keys: dict[int, VariantKeys], stripes: list[int], columns: list[str], stats: ReadStats
    ) -> pa.Table:
        """Whole stripes decrypted (columns not read stay masked: no AES work for them) and decoded."""
        return self._checked_table(self._rebuild_whole(keys, stripes, stats), keys, stripes, columns)

    def _checked_table(
        self, plain: bytes, keys: dict[int, VariantKeys], stripes: list[int], columns: list[str]
    ) -> pa.Table:
        """``columns`` of ``plain`` (the whole ``stripes`` rebuilt) decoded into Arrow, each stripe checked
        against its statistics."""
        try:
            table = pa_orc.ORCFile(pa.BufferReader(plain)).read(columns=columns)  # no Python file calls
        except DECODE_ERRORS as error:
            raise self._undecodable(keys, stripes, columns, error) from error
        statistics = self.stripe_statistics(self._column_id(n) for n in columns)
        check_stripes(self.tail, stripes, table, columns, statistics)
        return table

    def _rebuild_whole(
        self,
        keys: dict[int, VariantKeys],
        stripes: list[int],
        stats: ReadStats,
        present: dict[int, dict[int, bytes]] | None = None,
    ) -> bytes:
        """Whole stripes as one plain ORC file, counted in ``stats`` (``present``: see ``plain_orc``)."""
        plain = plain_orc(self.tail, keys, stripes, stats=stats, present=present)
        stats.stripes += len(stripes)
        stats.row_groups += sum(-(-self.tail.stripes[s].rows // self.tail.row_index_stride) for s in stripes)
        stats.rows_decoded += sum(self.tail.stripes[s].rows for s in stripes)
        return plain

    def _undecodable(
        self, keys: dict[int, VariantKeys], stripes: list[int], columns: list[str], error: Exception
    ) -> SecurityError:
        """The error for stripes ORC C++ could not decode, naming the first stripe and column that fail alone."""
        for stripe in stripes:
            plain = plain_orc(self.tail, keys, [stripe])
            for column in columns:
                try:
                    pa_orc.ORCFile(io.BytesIO(plain)).read(columns=[column])
                except DECODE_ERRORS as failure:
                    return _corrupted(stripe, column, failure)
        return _corrupted(stripes[0], ", ".join(columns), error)

    @contextmanager
    def _naming_the_file(self) -> Iterator[None]:
        """Errors raised inside name the file first."""
        try:
            yield
        except SecurityError as error:
            if error.message.startswith(str(self.tail.path)):
                raise
            raise SecurityError(f"{self.tail.path}: {error.message}", hint=error.hint) from error

    def _decode_groups(
        self,
        index: StripeRowIndex,
        ids: set[int],
        keys: dict[int, VariantKeys],
        owner: dict[int, VariantKeys],
        groups: list[int],
        span: tuple[int, int],
        columns: list[str],
    ) -> pa.Table:
        """The rows of ``span`` (stripe-relative) in the row ``groups`` of one stripe."""
        stripe, stride, stats = index.stripe, index.stride, index.stats
        runs = group_runs(groups)
        wanted = [(max(a * stride, span[0]), min(b * stride, span[1], stripe.rows)) for a, b in runs]
        unions = any(self.tail.columns[c].kind == "uniontype" for c in ids)
        if unions or sum(b - a for a, b in wanted) > SEEK_SHARE * stripe.rows:
            table = self._decode_whole(keys, [stripe.index], columns, stats)
            return pa.concat_tables([table.slice(a, b - a) for a, b in wanted])
        part = stripe_part(self.tail, index, ids, owner, runs)
        plain = plain_orc(self.tail, keys, [stripe.index], parts={stripe.index: part}, stats=stats)
        stats.stripes += 1
        stats.row_groups += len(groups)
        stats.rows_decoded += sum(min(b * stride, stripe.rows) - a * stride for a, b in runs)
        return decode_rows(plain, self._schema(columns), wanted)  # the rebuilt file holds this stripe only

    def _row_groups(
        self,
        index: StripeRowIndex,
        span: tuple[int, int],
        predicates: Sequence[Predicate],
        owner: dict[int, VariantKeys],
    ) -> list[int]:
        """Row groups of the stripe overlapping ``span`` whose statistics (clear when the column's key is
        unlocked) do not rule out ``predicates``."""
        groups = range(span[0] // index.stride, -(-span[1] // index.stride))
        stats: dict[str, list[ColumnStats | None]] = {}
        for predicate in predicates:
            column = self._column_id(predicate.column)
            stats[predicate.column] = [entry.stats for entry in index.entries(column, owner.get(column))]
        return matching_groups(predicates, stats, groups)

    def _schema(self, columns: list[str]) -> pa.Schema:
        """The Arrow schema ORC C++ gives ``columns`` (read from a stripe-free plain file)."""
        return pa_orc.ORCFile(io.BytesIO(plain_orc(self.tail, {}, []))).read(columns=columns).schema

    def rows(
        self,
        columns: Sequence[str] | None = None,
        *,
        where: str | None = None,
        rows: tuple[int, int] | None = None,
        stripes: Sequence[int] | None = None,
    ) -> list[dict[str, Any]]:
        """``read`` as a list of dicts (structs and maps as dicts); without ``where`` and ``rows``, what
        ``iter_rows`` yields, built by pyorc in one call with Python's cyclic garbage collector paused."""
        if where or rows:
            return table_rows(self.read(columns, where=where, rows=rows, stripes=stripes))
        names, plain, keys, selected = self._checked_plain(columns, stripes)
        try:
            with gc_paused():
                return orc_rows(plain, names).read()
        except DECODE_ERRORS as error:
            with self._naming_the_file():
                raise self._undecodable(keys, selected, names, error) from error

    def iter_rows(
        self, columns: Sequence[str] | None = None, *, stripes: Sequence[int] | None = None
    ) -> Iterator[dict[str, Any]]:
        """The rows of the selected stripes (default all) as dicts, decoded by ORC C++ (pyorc) as they are
        iterated, from the stripes rebuilt once as one plain file and checked first (``_checked_plain``)."""
        names, plain, keys, selected = self._checked_plain(columns, stripes)
        return self._decoded_rows(plain, keys, selected, names)

    def _checked_plain(
        self, columns: Sequence[str] | None, stripes: Sequence[int] | None
    ) -> tuple[list[str], bytes, dict[int, VariantKeys], list[int]]:
        """(column names, plain file, keys used, stripe numbers): the selected stripes (default all) rebuilt
        once as one plain file, every stripe checked against its statistics before any row is decoded for a
        caller: counts from the PRESENT streams, minimum and maximum of ranged columns through Arrow."""
        names = list(columns) if columns else self.top_level_columns
        with self._naming_the_file():
            keys = self._keys_for(self._ids(names))
            selected = [s.index for s in self.tail.stripes if stripes is None or s.index in stripes]
            self.last_read = stats = ReadStats()
            present: dict[int, dict[int, bytes]] = {}
            plain = self._rebuild_whole(keys, selected, stats, present)
            # read once for both checks below
            statistics = self.stripe_statistics(self._column_id(n) for n in names)
            ranged_names = ranged(self.tail, names)
            if ranged_names:
                self._checked_table(plain, keys, selected, ranged_names)
            others = [n for n in names if n not in ranged_names]
            for number in selected:
                if number < len(statistics):
                    check_stripe_presence(self.tail, number, others, statistics[number], present[number])
        return names, plain, keys, selected

    def _decoded_rows(
        self, plain: bytes, keys: dict[int, VariantKeys], stripes: list[int], names: list[str]
    ) -> Iterator[dict[str, Any]]:
        """pyorc's rows of ``plain``; what it cannot decode is an error naming stripe and column."""
        try:
            yield from orc_rows(plain, names)
        except DECODE_ERRORS as error:
            with self._naming_the_file():
                raise self._undecodable(keys, stripes, names, error) from error


def _corrupted(stripe: int, column: str, error: Exception) -> SecurityError:
    detail = " ".join(str(error).split())[:200]
    return SecurityError(
        f"stripe {stripe}, column {column}: the data cannot be decoded ({type(error).__name__}: {detail})",
        hint="the file is corrupted; restore it from a good copy",
    )


def _span(stripe: StripeInfo, rows: tuple[int, int] | None) -> tuple[int, int]:
    """The rows of ``stripe`` inside the file row range ``rows``, stripe-relative."""
    if rows is None:
        return 0, stripe.rows
    return max(0, rows[0] - stripe.first_row), min(stripe.rows, rows[1] - stripe.first_row)
