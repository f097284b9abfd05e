"""Synthetic NetFlow with the skew of a backbone link: heavy-hitter hosts and services, and a daily cycle.

Records come out in batches in arrival (first-switched) order, as an exporter would send them. Addresses are drawn
from a Zipf-like popularity over a host pool that sits in a few hundred /16 prefixes, destination ports from a
Zipf over well-known services plus ephemeral ports, and the per-minute record rate follows a day/night sine.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from lineage_platform.errors import IngestError
from lineage_platform.netflow.records import SCHEMA

MINUTE_MS = 60_000
SERVICE_PORTS = np.array(
    [443, 80, 53, 22, 25, 123, 993, 8080, 3389, 445, 1935, 5060, 3306, 8443, 110], np.uint16
)


@dataclass(frozen=True)
class FlowProfile:
    """The shape of the generated traffic."""

    start_ms: int = 1_767_225_600_000  # 2026-01-01 00:00 UTC
    hours: int = 24
    hosts: int = 200_000
    prefixes: int = 400
    routers: int = 8
    zipf_exponent: float = 1.1
    daily_swing: float = 0.6  # peak-to-mean amplitude of the day/night cycle


def generate(
    count: int, *, profile: FlowProfile = FlowProfile(), seed: int = 0, batch_rows: int = 1 << 20
) -> Iterator[pa.RecordBatch]:
    """``count`` records in time order, ``batch_rows`` per batch (the last one may be shorter)."""
    rng = np.random.default_rng(seed)
    hosts = _host_pool(rng, profile)
    host_cdf = _zipf_cdf(len(hosts), profile.zipf_exponent)
    port_cdf = _zipf_cdf(len(SERVICE_PORTS), 1.2)
    routers = _host_pool(rng, FlowProfile(hosts=profile.routers, prefixes=1))
    per_minute = _records_per_minute(rng, count, profile)
    minute_starts = profile.start_ms + MINUTE_MS * np.arange(len(per_minute), dtype=np.int64)
    ends = np.cumsum(per_minute)
    for begin in range(0, count, batch_rows):
        rows = min(batch_rows, count - begin)
        minute = np.searchsorted(ends, np.arange(begin, begin + rows), side="right")
        first = np.sort(minute_starts[minute] + rng.integers(0, MINUTE_MS, rows, dtype=np.int64))
        yield _batch(rng, rows, first, hosts, host_cdf, port_cdf, routers)


def _batch(
    rng: np.random.Generator,
    rows: int,
    first: np.ndarray,
    hosts: np.ndarray,
    host_cdf: np.ndarray,
    port_cdf: np.ndarray,
    routers: np.ndarray,
) -> pa.RecordBatch:
    protocol = np.select(
        [rng.random(rows) < 0.8, rng.random(rows) < 0.9], [np.uint8(6), np.uint8(17)], np.uint8(1)
    ).astype(np.uint8)
    service = SERVICE_PORTS[np.searchsorted(port_cdf, rng.random(rows))]
    ephemeral = rng.integers(32_768, 61_000, rows).astype(np.uint16)
    to_service = rng.random(rows) < 0.85
    dst_port = np.where(to_service, service, ephemeral)
    src_port = np.where(to_service, ephemeral, service)
    icmp = protocol == 1
    dst_port[icmp] = 0
    src_port[icmp] = 0
    packets = np.maximum(1, rng.lognormal(1.5, 1.4, rows)).astype(np.uint32)
    mean_size = rng.choice(np.array([64, 576, 1400], np.uint64), rows, p=[0.4, 0.25, 0.35])
    duration = np.minimum(rng.exponential(4_000, rows), 120_000).astype(np.int64) * (packets > 1)
    tcp_flags = np.where(
        protocol == 6, rng.choice(np.array([0x1B, 0x1A, 0x02, 0x12, 0x04, 0x11], np.uint8), rows), 0
    )
    columns = [
        pa.array(first, pa.timestamp("ms")),
        pa.array(first + duration, pa.timestamp("ms")),
        pa.array(hosts[np.searchsorted(host_cdf, rng.random(rows))]),
        pa.array(hosts[np.searchsorted(host_cdf, rng.random(rows))]),
        pa.array(src_port),
        pa.array(dst_port),
        pa.array(protocol),
        pa.array(packets),
        pa.array(packets.astype(np.uint64) * mean_size),
        pa.array(tcp_flags.astype(np.uint8)),
        pa.array(routers[rng.integers(0, len(routers), rows)]),
    ]
    return pa.RecordBatch.from_arrays(columns, schema=SCHEMA)


def _host_pool(rng: np.random.Generator, profile: FlowProfile) -> np.ndarray:
    """Distinct host addresses spread over ``prefixes`` random /16 networks, shuffled (rank = popularity)."""
    prefixes = rng.choice(np.arange(1 << 16, dtype=np.uint32), profile.prefixes, replace=False) << np.uint32(
        16
    )
    hosts = prefixes[rng.integers(0, profile.prefixes, profile.hosts * 2)] | rng.integers(
        1, 1 << 16, profile.hosts * 2, dtype=np.uint32
    )
    return rng.permutation(np.unique(hosts))[: profile.hosts]


def _zipf_cdf(size: int, exponent: float) -> np.ndarray:
    weights = 1.0 / np.arange(1, size + 1) ** exponent
    cdf = np.cumsum(weights) / weights.sum()
    cdf[-1] = 1.0
    return cdf


def _records_per_minute(rng: np.random.Generator, count: int, profile: FlowProfile) -> np.ndarray:
    """How many records start in each minute: a multinomial draw over a day/night sine rate."""
    minutes = profile.hours * 60
    hour_of_day = (np.arange(minutes) / 60.0) % 24
    rate = 1.0 + profile.daily_swing * np.sin(2 * np.pi * (hour_of_day - 9) / 24)
    return rng.multinomial(count, rate / rate.sum())


def write_records(path: Path, count: int, profile: FlowProfile = FlowProfile(), seed: int = 0) -> int:
    """Generate records into a Parquet (``.parquet``) or platform CSV (``.csv``) file; returns the count."""
    from lineage_platform.netflow.readers import write_csv

    batches = generate(count, profile=profile, seed=seed)
    if path.suffix.lower() == ".csv":
        return write_csv(batches, path)
    if path.suffix.lower() not in (".parquet", ".pq"):
        raise IngestError(f"cannot write records to {path}", hint="name the file .parquet or .csv")
    with pq.ParquetWriter(path, SCHEMA, compression="zstd") as writer:
        for batch in batches:
            writer.write_batch(batch)
    return count
