"""Column statistics: plaintext (masked) ones from the footer/Metadata, clear ones decrypted from a variant.

Encrypted file statistics: ``FileStatistics`` compressed then encrypted with the variant's footer key, IV
``(root, FILE_STATISTICS, #stripes + 1)``. Encrypted stripe statistics: one ``ColumnarStripeStatistics``
stream per column of the variant, IV ``(column, STRIPE_STATISTICS, #stripes + 1)``, laid out in variant
order from ``OrcTail.stripe_statistics_offset``.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from lineage_platform.errors import SecurityError
from lineage_platform.security.orc.compression import decompress
from lineage_platform.security.orc.crypto import FILE_STATISTICS, STRIPE_STATISTICS, ctr_decrypt, stream_iv
from lineage_platform.security.orc.protowire import Message, decode
from lineage_platform.security.orc.tail import OrcTail, Variant

_TYPED = (2, 3, 4, 6, 7, 9)  # ColumnStatistics' typed parts: int, double, string, decimal, date, timestamp


@dataclass(frozen=True)
class ColumnStats:
    """The parts of ``ColumnStatistics`` a reader uses: counts, nulls, min and max."""

    values: int
    has_null: bool
    minimum: Any = None
    maximum: Any = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return {
            "values": self.values,
            "has_null": self.has_null,
            "min": _plain(self.minimum),
            "max": _plain(self.maximum),
        }


def _plain(value: Any) -> Any:
    return value if value is None or isinstance(value, int | float | str) else str(value)


def _optional(value: Any, convert: Callable[[Any], Any]) -> Any:
    return None if value is None else convert(value)


def _days(days: int) -> datetime.date:
    return datetime.date(1970, 1, 1) + datetime.timedelta(days=days)


def _millis(millis: int) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(millis / 1000, datetime.UTC)


def parse_column_statistics(message: Message) -> ColumnStats:
    """Decode one ``ColumnStatistics`` message (min/max of ints, doubles, strings, decimals, dates, timestamps)."""
    values, has_null = message.int(1), bool(message.int(10))
    fields = {number: value for number, _, value in message.fields}  # the last value wins, as in protobuf
    typed = next(((n, v) for n in _TYPED if isinstance(v := fields.get(n), bytes)), None)
    if typed is None:
        return ColumnStats(values, has_null)
    number, sub = typed[0], decode(typed[1])
    if number == 2:  # integers
        return ColumnStats(values, has_null, sub.sint(1), sub.sint(2))
    if number == 3:  # doubles
        return ColumnStats(values, has_null, sub.double(1), sub.double(2))
    if number == 4:  # strings
        return ColumnStats(values, has_null, sub.optional_text(1), sub.optional_text(2))
    if number == 6:  # decimals
        low, high = sub.optional_text(1), sub.optional_text(2)
        return ColumnStats(
            values, has_null, _optional(low, decimal.Decimal), _optional(high, decimal.Decimal)
        )
    if number == 7:  # dates
        return ColumnStats(values, has_null, _optional(sub.sint(1), _days), _optional(sub.sint(2), _days))
    return ColumnStats(values, has_null, _optional(sub.sint(3), _millis), _optional(sub.sint(4), _millis))


def plain_file_statistics(tail: OrcTail) -> list[ColumnStats]:
    """Footer statistics per column id (masked values for encrypted columns)."""
    return [parse_column_statistics(m) for m in tail.footer.messages(7)]


def plain_stripe_statistics(tail: OrcTail, columns: Collection[int]) -> list[dict[int, ColumnStats]]:
    """Metadata statistics per stripe: column id -> statistics of ``columns`` (masked values for encrypted
    columns); only those columns' entries are parsed."""
    out = []
    for stripe in decode(tail.metadata).messages(1):
        entries = stripe.all(1)
        out.append(
            {
                c: parse_column_statistics(decode(entries[c]))
                for c in columns
                if c < len(entries) and isinstance(entries[c], bytes)
            }
        )
    return out


def variant_file_statistics(tail: OrcTail, variant: Variant, footer_key: bytes) -> list[ColumnStats]:
    """Clear file statistics of the variant's columns (root..last); SecurityError if the key is wrong."""
    column = tail.columns[variant.root].name
    iv = stream_iv(variant.root, FILE_STATISTICS, len(tail.stripes) + 1)
    plain = ctr_decrypt(footer_key, iv, variant.file_statistics)
    try:
        stats = decode(
            decompress(plain, tail.codec, tail.block_size, f"column {column} statistics")
        ).messages(1)
        parsed = [parse_column_statistics(m) for m in stats]
    except (SecurityError, ValueError, UnicodeDecodeError) as error:
        raise SecurityError(
            f"column {column}: the key {variant.key_name}@{variant.key_version} does not decrypt its statistics",
            hint="the KMS returned a wrong key, or the file is corrupted",
        ) from error
    if len(parsed) != variant.last_id - variant.root + 1 or parsed[0].values > tail.rows:
        raise SecurityError(
            f"column {column}: the key {variant.key_name}@{variant.key_version} does not decrypt its statistics",
            hint="the KMS returned a wrong key, or the file is corrupted",
        )
    return parsed


def variant_stripe_statistics(
    tail: OrcTail, variant: Variant, footer_key: bytes, columns: Collection[int]
) -> dict[int, list[ColumnStats]]:
    """Clear stripe statistics of the variant's ``columns``: column id -> one entry per stripe (only their
    streams are read and decrypted)."""
    offset = tail.stripe_statistics_offset + sum(
        length for other in tail.variants[: variant.index] for _, length in other.stripe_statistics
    )
    out: dict[int, list[ColumnStats]] = {}
    with open(tail.path, "rb") as handle:
        for column, length in variant.stripe_statistics:
            offset += length
            if column not in columns:
                continue
            handle.seek(offset - length)
            raw = handle.read(length)
            plain = ctr_decrypt(footer_key, stream_iv(column, STRIPE_STATISTICS, len(tail.stripes) + 1), raw)
            name = tail.columns[column].name
            message = decode(
                decompress(plain, tail.codec, tail.block_size, f"column {name} stripe statistics")
            )
            out[column] = [parse_column_statistics(m) for m in message.messages(1)]
    return out
