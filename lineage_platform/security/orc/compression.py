"""ORC's chunked compression: every chunk starts with a 3-byte little-endian header
``length << 1 | is_original``. Codecs: none, zlib (raw deflate), snappy, lz4 (block), zstd.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import cramjam

from lineage_platform.errors import SecurityError

CODEC_NAMES = {0: "none", 1: "zlib", 2: "snappy", 3: "lzo", 4: "lz4", 5: "zstd", 6: "brotli"}
_MAX_ORIGINAL_CHUNK = (1 << 23) - 1


def _inflate(chunk: bytes, limit: int) -> bytes:
    return zlib.decompress(chunk, -15)


def _snappy(chunk: bytes, limit: int) -> bytes:
    return bytes(cramjam.snappy.decompress_raw(chunk))


def _lz4(chunk: bytes, limit: int) -> bytes:
    out = bytearray(limit)  # a raw LZ4 block does not record its size; a chunk holds at most one block size
    return bytes(memoryview(out)[: cramjam.lz4.decompress_block_into(chunk, out)])


def _zstd(chunk: bytes, limit: int) -> bytes:
    return bytes(cramjam.zstd.decompress(chunk))


_DECOMPRESSORS: dict[int, Callable[[bytes, int], bytes]] = {1: _inflate, 2: _snappy, 4: _lz4, 5: _zstd}


def decompress(data: bytes, codec: int, block_size: int, what: str) -> bytes:
    """The plain bytes of an ORC stream stored with ``codec``; ``what`` names the stream in errors."""
    if codec == 0:
        return bytes(data)
    inflate = _DECOMPRESSORS.get(codec)
    if inflate is None:
        raise SecurityError(
            f"{what}: compression {CODEC_NAMES.get(codec, codec)} is not supported",
            hint="rewrite the file with none, zlib, snappy, lz4 or zstd",
        )
    out = bytearray()
    pos, end = 0, len(data)
    while pos < end:
        if pos + 3 > end:
            raise SecurityError(f"{what}: truncated compression chunk header", hint="the file is corrupted")
        header = data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16
        length, original = header >> 1, header & 1
        pos += 3
        chunk = data[pos : pos + length]
        if len(chunk) != length:
            raise SecurityError(
                f"{what}: truncated compression chunk", hint="the file is truncated or corrupted"
            )
        pos += length
        if original:
            out += chunk
            continue
        try:
            out += inflate(chunk, block_size)
        except Exception as error:  # every codec library has its own exception type
            raise SecurityError(
                f"{what}: cannot decompress ({error})",
                hint="the file is corrupted, or the decryption key is wrong",
            ) from error
    return bytes(out)


def store_original(plain: bytes, codec: int) -> bytes:
    """``plain`` as an ORC stream for ``codec`` without compressing: 'original' chunks (or as is for none)."""
    if codec == 0:
        return plain
    out = bytearray()
    for start in range(0, max(len(plain), 1), _MAX_ORIGINAL_CHUNK):
        chunk = plain[start : start + _MAX_ORIGINAL_CHUNK]
        header = len(chunk) << 1 | 1
        out += bytes((header & 0xFF, header >> 8 & 0xFF, header >> 16 & 0xFF)) + chunk
    return bytes(out)
