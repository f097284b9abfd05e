"""The NetFlow record: its Arrow schema, the attributes queries filter on, and IPv4 <-> uint32 conversion.

A record follows NetFlow v5/v9: first/last switched time, source and destination address and port, IP protocol,
packet and byte counts, cumulative TCP flags and the exporting router. Addresses are stored as uint32 so that
ranges, CIDR blocks and the k-d cuts are plain integer intervals.
"""

from __future__ import annotations

import ipaddress
from datetime import UTC, datetime

import numpy as np
import pyarrow as pa

from lineage_platform.errors import IngestError

SCHEMA = pa.schema(
    [
        ("first_ts", pa.timestamp("ms")),
        ("last_ts", pa.timestamp("ms")),
        ("src_ip", pa.uint32()),
        ("dst_ip", pa.uint32()),
        ("src_port", pa.uint16()),
        ("dst_port", pa.uint16()),
        ("protocol", pa.uint8()),
        ("packets", pa.uint32()),
        ("bytes", pa.uint64()),
        ("tcp_flags", pa.uint8()),
        ("router", pa.uint32()),
    ]
)
COLUMNS: tuple[str, ...] = tuple(SCHEMA.names)
TIME_COLUMN = "first_ts"
IP_COLUMNS = frozenset({"src_ip", "dst_ip", "router"})
TIME_COLUMNS = frozenset({"first_ts", "last_ts"})
# Attributes a layout may cluster on (time is always the first dimension and is not listed here).
CLUSTERABLE = ("src_ip", "dst_ip", "src_port", "dst_port", "protocol", "router")
# Bytes of one record in the fixed binary form the NetFlow v5 paper counts as "raw" (48 B).
RAW_RECORD_BYTES = 48


def domain(column: str) -> tuple[int, int]:
    """The closed integer interval of every value a column can hold."""
    field_type = SCHEMA.field(column).type
    if pa.types.is_timestamp(field_type):
        return (np.iinfo(np.int64).min, np.iinfo(np.int64).max)
    info = np.iinfo(field_type.to_pandas_dtype())
    return (int(info.min), int(info.max))


def ip_to_int(text: str) -> int:
    """Dotted-quad IPv4 address -> uint32 value."""
    try:
        return int(ipaddress.IPv4Address(text.strip()))
    except ValueError as exc:
        raise IngestError(f"not an IPv4 address: {text!r}", hint="write addresses as a.b.c.d") from exc


def int_to_ip(value: int) -> str:
    """uint32 value -> dotted-quad IPv4 address."""
    return str(ipaddress.IPv4Address(int(value)))


def cidr_range(text: str) -> tuple[int, int]:
    """The first and last address (inclusive, as uint32) of a CIDR block such as ``10.1.0.0/16``."""
    try:
        network = ipaddress.IPv4Network(text.strip(), strict=False)
    except ValueError as exc:
        raise IngestError(f"not an IPv4 CIDR block: {text!r}", hint="write blocks as a.b.c.d/n") from exc
    return int(network.network_address), int(network.broadcast_address)


def ips_to_uint32(texts: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised dotted-quad parsing: (values, valid mask); invalid strings get valid=False."""
    parts = pa.compute.split_pattern(texts.cast(pa.string()), ".")
    lengths = pa.compute.list_value_length(parts).to_numpy(zero_copy_only=False)
    valid = np.nan_to_num(lengths, nan=0) == 4
    flat = pa.compute.list_flatten(
        pa.compute.if_else(pa.array(valid), parts, pa.scalar(["0", "0", "0", "0"]))
    )
    octets = _parse_unsigned(flat)
    octets_ok = (octets >= 0) & (octets <= 255)
    octets = np.where(octets_ok, octets, 0).reshape(-1, 4)
    valid &= octets_ok.reshape(-1, 4).all(axis=1)
    values = (octets[:, 0] << 24) | (octets[:, 1] << 16) | (octets[:, 2] << 8) | octets[:, 3]
    return values.astype(np.uint32), valid


def _parse_unsigned(strings: pa.Array) -> np.ndarray:
    """Decimal strings -> int64, -1 where a string is not a plain non-negative integer."""
    digits = pa.compute.match_substring_regex(strings, r"^\d{1,10}$").fill_null(False)
    safe = pa.compute.if_else(digits, strings, "-1")
    return safe.cast(pa.int64()).to_numpy(zero_copy_only=False)


def epoch_ms(text: str) -> int:
    """'YYYY-MM-DD[ HH:MM:SS[.fff]]' (UTC unless it carries an offset) -> epoch milliseconds; ValueError if not."""
    moment = datetime.fromisoformat(text.strip())
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return round(moment.timestamp() * 1000)
