"""The partitioning scheme: time buckets x equi-depth ranges on each clustering attribute.

Boundaries come from a sample, so every range holds about the same number of records even when a few hosts or
ports carry most of the traffic. Assigning records to partitions is vectorised: one comparison per boundary (a
binary search per value when there are many boundaries).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from lineage_platform.errors import IngestError
from lineage_platform.netflow.records import CLUSTERABLE, TIME_COLUMN

HOUR_MS = 3_600_000
# Up to this many cuts, one vectorised comparison per cut beats a binary search per value (measured on 256 k values:
# 8.6x faster at 3 cuts, 3x at 15, 1.9x at 31, even at 63).
COMPARED_CUTS = 32


@dataclass(frozen=True)
class PartitionLayout:
    """Time bucket width plus, per clustering attribute, the sorted inner boundaries of its ranges."""

    attributes: tuple[str, ...]
    boundaries: dict[str, tuple[int, ...]] = field(default_factory=dict)
    bucket_ms: int = HOUR_MS

    def __post_init__(self) -> None:
        unknown = [name for name in self.attributes if name not in CLUSTERABLE]
        if unknown:
            raise IngestError(
                f"cannot cluster on {', '.join(unknown)}", hint=f"choose among {', '.join(CLUSTERABLE)}"
            )
        if self.bucket_ms <= 0:
            raise IngestError(
                "the time bucket must be positive", hint="give a bucket such as 3600000 ms (1 h)"
            )

    @classmethod
    def from_sample(
        cls, sample: pa.Table, attributes: tuple[str, ...], ranges: int = 4, bucket_ms: int = HOUR_MS
    ) -> PartitionLayout:
        """Equi-depth boundaries: the 1/ranges, 2/ranges, ... quantiles of each attribute in the sample."""
        if sample.num_rows == 0:
            raise IngestError("cannot size partitions from an empty sample", hint="ingest some records first")
        boundaries = {}
        for name in attributes:
            values = sample.column(name).to_numpy()
            cuts = np.quantile(values, np.arange(1, ranges) / ranges, method="higher")
            # heavy hitters can make quantiles repeat; a repeated cut would make an empty range
            boundaries[name] = tuple(int(cut) for cut in np.unique(cuts) if cut > values.min())
        return cls(tuple(attributes), boundaries, bucket_ms)

    @property
    def cells(self) -> int:
        """Partitions per time bucket."""
        return int(np.prod([len(self.boundaries[name]) + 1 for name in self.attributes]))

    def assign(self, batch: pa.RecordBatch | pa.Table) -> tuple[np.ndarray, np.ndarray]:
        """(time bucket start in ms, cell number) of every record."""
        times = batch.column(TIME_COLUMN).cast(pa.int64()).to_numpy()
        buckets = times - times % self.bucket_ms
        cell = np.zeros(len(times), np.int64)
        for name in self.attributes:
            cuts = self.boundaries[name]
            cell = cell * (len(cuts) + 1) + range_numbers(batch.column(name).to_numpy(), cuts)
        return buckets, cell

    def cell_ranges(self, cell: int) -> dict[str, int]:
        """The range number of each attribute in a cell (the inverse of the mixed-radix cell number)."""
        ranges = {}
        for name in reversed(self.attributes):
            radix = len(self.boundaries[name]) + 1
            cell, ranges[name] = divmod(cell, radix)
        return {name: ranges[name] for name in self.attributes}

    def to_json(self) -> str:
        """The layout as JSON (kept on the dataset vertex of the catalog)."""
        return json.dumps(
            {"attributes": list(self.attributes), "boundaries": self.boundaries, "bucket_ms": self.bucket_ms}
        )

    @classmethod
    def from_json(cls, text: str) -> PartitionLayout:
        """Inverse of :meth:`to_json`."""
        data = json.loads(text)
        return cls(
            tuple(data["attributes"]),
            {name: tuple(cuts) for name, cuts in data["boundaries"].items()},
            int(data["bucket_ms"]),
        )

    def describe(self) -> str:
        """One line a person can read: dimensions and range counts."""
        ranges = " x ".join(f"{len(self.boundaries[name]) + 1} {name}" for name in self.attributes)
        return f"{self.bucket_ms // 60_000} min buckets x {ranges} = {self.cells} partitions per bucket"


def range_numbers(values: np.ndarray, cuts: tuple[int, ...]) -> np.ndarray:
    """The range each value falls in: how many cuts are <= it (``np.searchsorted(cuts, values, side="right")``)."""
    if len(cuts) > COMPARED_CUTS:
        return np.searchsorted(np.asarray(cuts), values, side="right")
    numbers = np.zeros(len(values), np.int64)
    for cut in cuts:
        numbers += values >= cut
    return numbers
