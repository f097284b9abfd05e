"""AES-CTR as ORC uses it: local-key unwrapping and stream decryption with ORC's IV layout.

Stream IV (16 bytes): column (3 B) | stream kind (2 B) | encrypt stripe id (3 B) | block counter (8 B), all
big-endian, the counter starting at 0 for every stream. Reading from byte ``offset`` of a stream adds
``offset // 16`` to the counter and drops ``offset % 16`` keystream bytes, so no stream is decrypted from
its start just to reach a later row group.

A stripe has dozens of encrypted streams of a few hundred bytes, each its own keystream: ``CtrCipher`` builds
one AES context per key and deciphers many streams at once, since CTR's keystream block ``i`` of a stream is
AES(key, IV + i): the counter blocks of every stream are enciphered in one AES-ECB call and XORed in one go.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from lineage_platform.errors import SecurityError

ALGORITHMS = {1: ("AES_CTR_128", 16), 2: ("AES_CTR_256", 32)}
STRIPE_STATISTICS, FILE_STATISTICS = 100, 101
_LIMIT = 0xFFFFFF
_LOW, _ALL = (1 << 64) - 1, (1 << 128) - 1


def key_length(algorithm: int, column: str) -> int:
    """Bytes of key for ORC's EncryptionAlgorithm enum value; unknown algorithms are refused."""
    if algorithm not in ALGORITHMS:
        raise SecurityError(
            f"column {column}: unknown encryption algorithm {algorithm}",
            hint="this reader knows AES_CTR_128 and AES_CTR_256; the file needs a newer ORC reader",
        )
    return ALGORITHMS[algorithm][1]


def stream_counter(column: int, kind: int, stripe_id: int) -> int:
    """The initial counter block of one encrypted stream, as a 128-bit integer."""
    if column > _LIMIT or stripe_id > _LIMIT:
        raise SecurityError(f"column {column} / stripe {stripe_id} is beyond ORC's 24-bit IV fields")
    return column << 104 | kind << 88 | stripe_id << 64


def stream_iv(column: int, kind: int, stripe_id: int) -> bytes:
    """The initial counter block of one encrypted stream."""
    return stream_counter(column, kind, stripe_id).to_bytes(16, "big")


class CtrCipher:
    """AES-CTR under one key, for any number of streams: one AES context, built once."""

    def __init__(self, key: bytes) -> None:
        self._blocks = Cipher(algorithms.AES(key), modes.ECB()).encryptor()  # only ever fed counter blocks

    def decrypt(self, data: bytes, pieces: Sequence[tuple[int, int, int]]) -> bytes:
        """``data`` in clear: consecutive pieces ``(counter, offset, length)``, each ``length`` bytes from
        byte ``offset`` of the CTR stream whose first counter block is ``counter``. One AES call and one XOR
        for all of them."""
        skips = [offset & 15 for _, offset, _ in pieces]
        blocks = [(skip + length + 15) >> 4 for skip, (_, _, length) in zip(skips, pieces, strict=True)]
        keystream = self._keystream([(c + (offset >> 4)) & _ALL for c, offset, _ in pieces], blocks)
        mask = []
        at = 0
        for skip, (_, _, length), count in zip(skips, pieces, blocks, strict=True):
            mask.append(keystream[at + skip : at + skip + length])
            at += count * 16
        return (np.frombuffer(data, np.uint8) ^ np.frombuffer(b"".join(mask), np.uint8)).tobytes()

    def _keystream(self, first: list[int], blocks: list[int]) -> bytes:
        """AES of ``blocks[i]`` consecutive counter blocks from ``first[i]``, for every i (the 128-bit
        counters wrap as in CTR)."""
        repeat = np.array(blocks, dtype=np.int64)
        step = np.arange(int(repeat.sum()), dtype=np.uint64) - np.repeat(
            (np.cumsum(repeat) - repeat).astype(np.uint64), repeat
        )
        first_low = np.repeat(np.array([c & _LOW for c in first], dtype=np.uint64), repeat)
        counters = np.empty((len(step), 2), dtype=">u8")
        counters[:, 1] = low = first_low + step  # uint64 arithmetic wraps
        high = np.repeat(np.array([c >> 64 for c in first], dtype=np.uint64), repeat)
        counters[:, 0] = high + (low < first_low)  # the carry
        return self._blocks.update(counters.tobytes())


def ctr_decrypt(key: bytes, iv: bytes, data: bytes, offset: int = 0) -> bytes:
    """Decrypt ``data`` that starts at byte ``offset`` of the CTR stream beginning at ``iv`` (one stream, a
    context of its own: for many streams under one key, ``CtrCipher``)."""
    block, skip = divmod(offset, 16)
    counter = ((int.from_bytes(iv, "big") + block) & _ALL).to_bytes(16, "big")
    decryptor = Cipher(algorithms.AES(key), modes.CTR(counter)).decryptor()
    if skip:
        decryptor.update(bytes(skip))
    return decryptor.update(data) + decryptor.finalize()


def unwrap_local_key(master: bytes, encrypted_key: bytes) -> bytes:
    """ORC's local key from its wrapped form: AES-CTR with the master key and IV = encrypted_key[0:16]."""
    if len(encrypted_key) < 16:
        raise SecurityError(
            "the wrapped local key is shorter than one AES block", hint="the file is corrupted"
        )
    return ctr_decrypt(master, encrypted_key[:16], encrypted_key)
