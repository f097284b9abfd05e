"""What one read cost: bytes decrypted and the stripes, row groups and rows handed to the decoder."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ReadStats:
    """Counters of one ``EncryptedOrcReader.read`` (row indexes and stripe streams; not file statistics)."""

    bytes_decrypted: int = 0
    stripes: int = 0
    row_groups: int = 0
    rows_decoded: int = 0
