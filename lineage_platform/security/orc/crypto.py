"""AES-CTR as ORC uses it: local-key unwrapping and stream decryption with ORC's IV layout.

Stream IV (16 bytes): column (3 B) | stream kind (2 B) | encrypt stripe id (3 B) | block counter (8 B), all
big-endian, the counter starting at 0 for every stream. Reading from byte ``offset`` of a stream adds
``offset // 16`` to the counter and drops ``offset % 16`` keystream bytes, so no stream is decrypted from
its start just to reach a later row group.
"""

from __future__ import annotations

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from lineage_platform.errors import SecurityError

ALGORITHMS = {1: ("AES_CTR_128", 16), 2: ("AES_CTR_256", 32)}
STRIPE_STATISTICS, FILE_STATISTICS = 100, 101
_LIMIT = 0xFFFFFF


def key_length(algorithm: int, column: str) -> int:
    """Bytes of key for ORC's EncryptionAlgorithm enum value; unknown algorithms are refused."""
    if algorithm not in ALGORITHMS:
        raise SecurityError(
            f"column {column}: unknown encryption algorithm {algorithm}",
            hint="this reader knows AES_CTR_128 and AES_CTR_256; the file needs a newer ORC reader",
        )
    return ALGORITHMS[algorithm][1]


def stream_iv(column: int, kind: int, stripe_id: int) -> bytes:
    """The initial counter block of one encrypted stream."""
    if column > _LIMIT or stripe_id > _LIMIT:
        raise SecurityError(f"column {column} / stripe {stripe_id} is beyond ORC's 24-bit IV fields")
    return column.to_bytes(3, "big") + kind.to_bytes(2, "big") + stripe_id.to_bytes(3, "big") + bytes(8)


def ctr_decrypt(key: bytes, iv: bytes, data: bytes, offset: int = 0) -> bytes:
    """Decrypt ``data`` that starts at byte ``offset`` of the CTR stream beginning at ``iv``."""
    block, skip = divmod(offset, 16)
    counter = ((int.from_bytes(iv, "big") + block) % (1 << 128)).to_bytes(16, "big")
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
