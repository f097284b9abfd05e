"""``--where`` conditions: skip stripes and row groups whose statistics rule a condition out, then filter
rows exactly.

Conditions are ANDed ``column op constant`` tests, parsed by the permission layer's ``parse_rows``.
Statistics are only used to skip; the exact filter always runs, so a stripe or row group kept by mistake
costs time, never correctness.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from lineage_platform.errors import SecurityError
from lineage_platform.model import Predicate
from lineage_platform.security.orc.statistics import ColumnStats
from lineage_platform.security.policy import parse_rows

_RANGE_OPS = {"=", "<", "<=", ">", ">=", "IN"}


def parse_where(text: str | None) -> tuple[Predicate, ...]:
    """``"id >= 10 AND city = 'Oslo'"`` as predicates (SecurityError for anything else)."""
    return parse_rows(text, where="--where")


def _like_stats(value: Any, sample: Any) -> Any:
    """``value`` converted to the type of a statistics value so they compare."""
    if isinstance(sample, datetime.datetime):
        parsed = datetime.datetime.fromisoformat(str(value))
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)
    if isinstance(sample, datetime.date):
        return datetime.date.fromisoformat(str(value))
    if isinstance(sample, decimal.Decimal):
        return decimal.Decimal(str(value))
    if isinstance(sample, int | float) and not isinstance(value, int | float):
        return float(value)
    return value


def may_match(predicate: Predicate, stats: ColumnStats | None) -> bool:
    """False only when ``stats`` prove no row satisfies ``predicate``."""
    if stats is None:
        return True
    if predicate.op == "IS NULL":
        return stats.has_null
    if stats.minimum is None or stats.maximum is None:
        return stats.values > 0 or predicate.op not in _RANGE_OPS
    if predicate.op not in _RANGE_OPS:
        return True
    try:
        low, high = stats.minimum, stats.maximum
        if isinstance(high, datetime.datetime):
            high += datetime.timedelta(milliseconds=1)  # statistics keep milliseconds: the true max is below
        values = predicate.value if predicate.op == "IN" else (predicate.value,)
        wanted = [_like_stats(v, low) for v in values]  # type: ignore[union-attr]
        if predicate.op in ("=", "IN"):
            return any(low <= v <= high for v in wanted)
        value = wanted[0]
        return {"<": low < value, "<=": low <= value, ">": high > value, ">=": high >= value}[predicate.op]
    except (TypeError, ValueError, decimal.InvalidOperation):
        return True  # not comparable: keep the stripe


def matching_groups(
    predicates: Sequence[Predicate], stats: dict[str, Sequence[ColumnStats | None]], groups: Iterable[int]
) -> list[int]:
    """The row groups among ``groups`` whose statistics (``stats``: per predicate column, one entry per row
    group of the stripe) do not rule out any predicate."""
    return [g for g in groups if all(may_match(p, stats[p.column][g]) for p in predicates)]


def row_filter(table: pa.Table, predicates: Sequence[Predicate]) -> pa.Table:
    """The rows of ``table`` satisfying every predicate (SQL semantics: null never matches a comparison)."""
    mask = None
    for predicate in predicates:
        if predicate.column not in table.column_names:
            raise SecurityError(
                f"--where names {predicate.column!r}, which is not read", hint="add it to --columns"
            )
        column = table.column(predicate.column)
        test = _test(column, predicate)
        mask = test if mask is None else pc.and_(mask, test)
    return table if mask is None else table.filter(pc.fill_null(mask, False))


def _test(column: pa.ChunkedArray, predicate: Predicate) -> pa.ChunkedArray:
    op = predicate.op
    if op == "IS NULL":
        return pc.is_null(column)
    if op == "IS NOT NULL":
        return pc.is_valid(column)
    if op in ("LIKE", "NOT LIKE"):
        matched = pc.match_like(column, str(predicate.value))
        return pc.invert(matched) if op == "NOT LIKE" else matched
    try:
        if op in ("IN", "NOT IN"):
            values = pa.array([_scalar(v, column.type).as_py() for v in predicate.value], column.type)  # type: ignore[union-attr]
            found = pc.is_in(column, value_set=values)
            return pc.invert(found) if op == "NOT IN" else found
        value = _scalar(predicate.value, column.type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, TypeError) as error:
        raise SecurityError(
            f"--where: {predicate.value!r} does not compare with column {predicate.column} ({column.type})",
            hint="write the constant in the column's type, e.g. '2024-01-31' for a date",
        ) from error
    compare = {
        "=": pc.equal,
        "!=": pc.not_equal,
        "<": pc.less,
        "<=": pc.less_equal,
        ">": pc.greater,
        ">=": pc.greater_equal,
    }
    if op not in compare:
        raise SecurityError(
            f"--where: operator {op} is not supported", hint="use =, !=, <, <=, >, >=, IN, LIKE, IS NULL"
        )
    return compare[op](column, value)


def _scalar(value: Any, target: pa.DataType) -> pa.Scalar:
    if pa.types.is_timestamp(target) and isinstance(value, str):
        return pa.scalar(datetime.datetime.fromisoformat(value), pa.timestamp("ns")).cast(target)
    if pa.types.is_decimal(target):
        return pa.scalar(decimal.Decimal(str(value))).cast(target)
    return pa.scalar(value).cast(target)
