"""Column statistics: plaintext (masked) ones from the footer/Metadata, clear ones decrypted from a variant.

Encrypted file statistics: ``FileStatistics`` compressed then encrypted with the variant's footer key, IV
``(root, FILE_STATISTICS, #stripes + 1)``. Encrypted stripe statistics: one ``ColumnarStripeStatistics``
stream per column of the variant, IV ``(column, STRIPE_STATISTICS, #stripes + 1)``, laid out in variant
order from ``OrcTail.stripe_statistics_offset``.
"""

from __future__ import annotations

import datetime
import decimal
from dataclasses import dataclass
from typing import Any

from lineage_platform.errors import SecurityError
from lineage_platform.security.orc.compression import decompress
from lineage_platform.security.orc.crypto import FILE_STATISTICS, STRIPE_STATISTICS, ctr_decrypt, stream_iv
from lineage_platform.security.orc.protowire import Message, decode, zigzag
from lineage_platform.security.orc.tail import OrcTail, Variant


@dataclass(frozen=True)
class ColumnStats:
    """The parts of ``ColumnStatistics`` a reader uses: counts, nulls, min and max."""

    values: int
    has_null: bool
    minimum: Any = None
    maximum: Any = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return {"values": self.values, "has_null": self.has_null, "min": _plain(self.minimum), "max": _plain(self.maximum)}


def _plain(value: Any) -> Any:
    return value if value is None or isinstance(value, int | float | str) else str(value)


def parse_column_statistics(message: Message) -> ColumnStats:
    """Decode one ``ColumnStatistics`` message."""
    values, has_null = message.int(1), bool(message.int(10))
    if (ints := message.message(2)) is not None:
        low, high = ints.get(1), ints.get(2)
        return ColumnStats(values, has_null, None if low is None else zigzag(low), None if high is None else zigzag(high))  # type: ignore[arg-type]
    if (doubles := message.message(3)) is not None:
        return ColumnStats(values, has_null, doubles.double(1), doubles.double(2))
    if (strings := message.message(4)) is not None:
        low, high = strings.get(1), strings.get(2)
        return ColumnStats(values, has_null, None if low is None else strings.text(1), None if high is None else strings.text(2))
    if (decimals := message.message(6)) is not None:
        low, high = decimals.get(1), decimals.get(2)
        return ColumnStats(
            values, has_null,
            None if low is None else decimal.Decimal(decimals.text(1)),
            None if high is None else decimal.Decimal(decimals.text(2)),
        )  # fmt: skip
    if (dates := message.message(7)) is not None:
        epoch = datetime.date(1970, 1, 1)
        low, high = dates.get(1), dates.get(2)
        return ColumnStats(
            values, has_null,
            None if low is None else epoch + datetime.timedelta(days=zigzag(low)),  # type: ignore[arg-type]
            None if high is None else epoch + datetime.timedelta(days=zigzag(high)),  # type: ignore[arg-type]
        )  # fmt: skip
    if (stamps := message.message(9)) is not None:
        low, high = stamps.get(3), stamps.get(4)
        as_time = lambda ms: datetime.datetime.fromtimestamp(zigzag(ms) / 1000, datetime.UTC)  # noqa: E731
        return ColumnStats(values, has_null, None if low is None else as_time(low), None if high is None else as_time(high))
    return ColumnStats(values, has_null)


def plain_file_statistics(tail: OrcTail) -> list[ColumnStats]:
    """Footer statistics per column id (masked values for encrypted columns)."""
    return [parse_column_statistics(m) for m in tail.footer.messages(7)]


def plain_stripe_statistics(tail: OrcTail) -> list[list[ColumnStats]]:
    """Metadata statistics per stripe, per column id (masked values for encrypted columns)."""
    metadata = decode(tail.metadata)
    return [[parse_column_statistics(c) for c in stripe.messages(1)] for stripe in metadata.messages(1)]


def variant_file_statistics(tail: OrcTail, variant: Variant, footer_key: bytes) -> list[ColumnStats]:
    """Clear file statistics of the variant's columns (root..last); SecurityError if the key is wrong."""
    column = tail.columns[variant.root].name
    iv = stream_iv(variant.root, FILE_STATISTICS, len(tail.stripes) + 1)
    plain = ctr_decrypt(footer_key, iv, variant.file_statistics)
    try:
        stats = decode(decompress(plain, tail.codec, tail.block_size, f"column {column} statistics")).messages(1)
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


def variant_stripe_statistics(tail: OrcTail, variant: Variant, footer_key: bytes) -> dict[int, list[ColumnStats]]:
    """Clear stripe statistics of the variant's columns: column id -> one entry per stripe."""
    offset = tail.stripe_statistics_offset + sum(
        length for other in tail.variants[: variant.index] for _, length in other.stripe_statistics
    )
    out: dict[int, list[ColumnStats]] = {}
    with open(tail.path, "rb") as handle:
        for column, length in variant.stripe_statistics:
            handle.seek(offset)
            raw = handle.read(length)
            offset += length
            plain = ctr_decrypt(footer_key, stream_iv(column, STRIPE_STATISTICS, len(tail.stripes) + 1), raw)
            name = tail.columns[column].name
            message = decode(decompress(plain, tail.codec, tail.block_size, f"column {name} stripe statistics"))
            out[column] = [parse_column_statistics(m) for m in message.messages(1)]
    return out
