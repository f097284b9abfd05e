"""Shared NetFlow test data: a small generated flow set, clustered into a catalog, plus the unclustered copy."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lineage_platform.graph import connect
from lineage_platform.netflow.generate import FlowProfile, generate
from lineage_platform.netflow.layout import HOUR_MS
from lineage_platform.netflow.maintenance import LayoutRequest, ingest

DATASET = "netflow.flows"


def pytest_configure(config: pytest.Config) -> None:
    """The query module silences DuckDB's note on its one-pass copies when imported; pytest resets filters per test."""
    config.addinivalue_line("filterwarnings", "ignore:Arrow output on a DB-API result:UserWarning")


@dataclass
class Clustered:
    """A catalogued dataset and the same records as one unclustered Parquet file (the DuckDB baseline)."""

    g: object
    root: Path
    raw: Path
    records: pa.Table


def make_clustered(tmp: Path, count: int = 60_000, **request: object) -> Clustered:
    """Generate, keep an unclustered copy, and ingest into a fresh in-memory catalog."""
    records = pa.Table.from_batches(
        list(generate(count, profile=FlowProfile(hours=3, hosts=5_000), batch_rows=7_000))
    )
    raw = tmp / "raw.parquet"
    pq.write_table(records, raw)
    g = connect("memory:")
    ingest(
        g,
        DATASET,
        tmp / "clustered",
        records.to_batches(max_chunksize=7_000),
        request=LayoutRequest(**{"cells": 16, "bucket_ms": HOUR_MS, **request}),  # type: ignore[arg-type]
        block_rows=2_000,
    )
    return Clustered(g, tmp / "clustered", raw, records)


@pytest.fixture(scope="module")
def clustered(tmp_path_factory: pytest.TempPathFactory) -> Clustered:
    """One clustered dataset shared by a test module (read-only use)."""
    return make_clustered(tmp_path_factory.mktemp("netflow"))
