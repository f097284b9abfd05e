"""Unwrapping the local keys of the encryption variants a caller may read, through a KMS.

Only variants whose root column is permitted are asked for; each wrapped key is sent to the KMS once.
A footer key is checked by decrypting the variant's file statistics, so a wrong key is an error naming the
column rather than garbage values.
"""

from __future__ import annotations

from dataclasses import dataclass

from lineage_platform.errors import SecurityError
from lineage_platform.security.kms.base import KeyManagementService
from lineage_platform.security.orc.crypto import key_length
from lineage_platform.security.orc.statistics import ColumnStats, variant_file_statistics
from lineage_platform.security.orc.tail import OrcTail, Variant


@dataclass(frozen=True)
class VariantKeys:
    """The clear local keys of one variant: the footer's and each stripe's."""

    variant: Variant
    footer_key: bytes
    stripe_keys: tuple[bytes, ...]  # by stripe index
    file_statistics: tuple[ColumnStats, ...]


def unlock(tail: OrcTail, kms: KeyManagementService, roots: set[int]) -> dict[int, VariantKeys]:
    """Local keys for the variants rooted at ``roots`` (column ids), keyed by root column id."""
    unlocked: dict[int, VariantKeys] = {}
    for variant in tail.variants:
        if variant.root not in roots or variant.root in unlocked:
            continue
        cache: dict[bytes, bytes] = {}
        footer_key = _unwrap(tail, kms, variant, variant.encrypted_key, cache)
        stats = variant_file_statistics(tail, variant, footer_key)
        stripe_keys = tuple(
            _unwrap(tail, kms, variant, stripe.encrypted_local_keys[variant.index], cache)
            for stripe in tail.stripes
        )
        unlocked[variant.root] = VariantKeys(variant, footer_key, stripe_keys, tuple(stats))
    return unlocked


def _unwrap(
    tail: OrcTail, kms: KeyManagementService, variant: Variant, wrapped: bytes, cache: dict[bytes, bytes]
) -> bytes:
    """One wrapped local key in clear, asking the KMS once per distinct wrapped key."""
    if wrapped in cache:
        return cache[wrapped]
    column = tail.columns[variant.root].name
    size = key_length(variant.algorithm, column)
    if len(wrapped) != size:
        raise SecurityError(
            f"column {column}: the wrapped key has {len(wrapped)} bytes, expected {size}",
            hint="the file is corrupted",
        )
    try:
        cache[wrapped] = kms.decrypt_local_key(variant.key_name, variant.key_version, wrapped)
    except SecurityError as error:
        raise type(error)(
            f"column {column}: cannot unwrap its key {variant.key_name}@{variant.key_version}: {error.message}",
            hint=error.hint,
        ) from error
    return cache[wrapped]
