"""``lineage orc inspect``: schema, encryption variants, keys, masks, statistics and leak warnings of a file."""

from __future__ import annotations

from typing import Any

from lineage_platform.security.orc.crypto import ALGORITHMS
from lineage_platform.security.orc.plain import BLOOM_FILTER, BLOOM_FILTER_UTF8, read_stripe_footer
from lineage_platform.security.orc.reader import EncryptedOrcReader
from lineage_platform.security.orc.statistics import plain_file_statistics
from lineage_platform.security.orc.tail import OrcTail


def describe(reader: EncryptedOrcReader) -> dict[str, Any]:
    """A JSON-ready description; statistics are clear for the columns ``reader`` has unlocked."""
    tail = reader.tail
    stats = dict(enumerate(plain_file_statistics(tail)))
    for keys in reader.keys.values():
        stats.update({keys.variant.root + i: s for i, s in enumerate(keys.file_statistics)})
    masks = {column: mask.name for mask in tail.masks for column in mask.columns}
    columns = []
    for column in tail.columns[1:]:
        variant = tail.variant_of(column.id)
        entry: dict[str, Any] = {"id": column.id, "name": column.name, "type": column.type_text(tail.columns)}
        if variant is not None:
            entry["key"] = f"{variant.key_name}@{variant.key_version}"
            entry["mask"] = masks.get(column.id) or masks.get(variant.root, "nullify")
            entry["statistics_are"] = "clear" if variant.root in reader.keys else "masked"
        if column.id in stats:
            entry["statistics"] = stats[column.id].to_dict()
        columns.append(entry)
    return {
        "path": str(tail.path),
        "rows": tail.rows,
        "compression": tail.codec_name,
        "stripes": [
            {"index": s.index, "rows": s.rows, "offset": s.offset, "encrypt_stripe_id": s.encrypt_stripe_id}
            for s in tail.stripes
        ],
        "columns": columns,
        "variants": [
            {
                "column": tail.columns[v.root].name,
                "key": v.key_name,
                "version": v.key_version,
                "algorithm": ALGORITHMS.get(v.algorithm, ("UNKNOWN", 0))[0],
            }
            for v in tail.variants
        ],
        "masks": [
            {
                "name": m.name,
                "parameters": list(m.parameters),
                "columns": [tail.columns[c].name for c in m.columns],
            }
            for m in tail.masks
        ],
        "warnings": leak_warnings(tail),
    }


def leak_warnings(tail: OrcTail) -> list[str]:
    """Plaintext-derived bloom filters of encrypted columns stored unencrypted (ORC 2.3.0 writer defect)."""
    if not tail.variants or not tail.stripes:
        return []
    stripe = tail.stripes[0]
    with open(tail.path, "rb") as handle:
        handle.seek(stripe.offset + stripe.index_length + stripe.data_length)
        layout = read_stripe_footer(tail, stripe, handle.read(stripe.footer_length))
    leaking = sorted(
        {
            tail.columns[s.column].name
            for s in layout.streams
            if s.variant is None and s.kind in (BLOOM_FILTER, BLOOM_FILTER_UTF8) and tail.variant_of(s.column)
        }
    )
    return [
        f"column {name}: an unencrypted bloom filter of an encrypted column (may be built from the plaintext; "
        "this reader ignores it, but anyone with the file can probe it)"
        for name in leaking
    ]
