"""The partition catalog of a dataset, cached in process for the query planner.

A query used to cost three Gremlin traversals (layout, candidate partitions, partition count) and one sidecar read
per candidate file before DuckDB started. The snapshot holds the layout, every partition's time range and attribute
bounds, and (loaded on first use) each file's block index; a query then costs one small traversal that reads the
dataset's catalog version and partition count. Every catalog write sets a fresh version (catalog.py), so a changed
catalog is reloaded on the next query; a catalog without a version (written by an older release) is never cached.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gremlin_python.process.graph_traversal import GraphTraversalSource

from lineage_platform.graph.dsl import __
from lineage_platform.netflow.blocks import BlockIndex, load_index
from lineage_platform.netflow.catalog import (
    VERSION_KEY,
    Partition,
    all_partitions,
    catalogued,
    find_dataset,
    missing_dataset,
)
from lineage_platform.netflow.layout import PartitionLayout
from lineage_platform.netflow.records import TIME_COLUMN
from lineage_platform.netflow.rectangles import Box

CACHED_DATASETS = 16  # snapshots kept per process (least recently used dropped first)


@dataclass
class CatalogSnapshot:
    """A dataset's layout and partitions as of one catalog version."""

    layout: PartitionLayout
    partitions: list[Partition]
    _indexes: dict[Path, BlockIndex] = field(default_factory=dict, repr=False)

    def candidates(self, boxes: Sequence[Box]) -> list[Partition]:
        """Partitions whose time range and attribute bounds meet some box (all of them for an unbounded box)."""
        return [item for item in self.partitions if any(_meets(item, box, self.layout) for box in boxes)]

    def index(self, path: Path) -> BlockIndex:
        """The block index of one of the dataset's files (read once per snapshot)."""
        found = self._indexes.get(path)
        if found is None:
            found = self._indexes[path] = load_index(path)
        return found


_CACHE: OrderedDict[tuple[str, str, int], CatalogSnapshot] = OrderedDict()
_LOCK = threading.Lock()


def catalog_snapshot(g: GraphTraversalSource, dataset: str) -> CatalogSnapshot:
    """The dataset's catalog: the cached snapshot when its version and partition count still match the graph's."""
    version, count = _stamp(g, dataset)
    key = (dataset, version, count)
    if version:
        with _LOCK:
            cached = _CACHE.get(key)
            if cached is not None:
                _CACHE.move_to_end(key)
                return cached
    found = find_dataset(g, dataset)
    if found is None:
        raise missing_dataset(dataset)
    snapshot = CatalogSnapshot(found[0], all_partitions(g, dataset))
    if version and len(snapshot.partitions) == count:  # not changed while it was read
        with _LOCK:
            _CACHE[key] = snapshot
            while len(_CACHE) > CACHED_DATASETS:
                _CACHE.popitem(last=False)
    return snapshot


def _stamp(g: GraphTraversalSource, dataset: str) -> tuple[str, int]:
    """The dataset's catalog version ('' when it has none) and partition count, in one traversal."""
    rows = (
        catalogued(g, dataset)
        .project("version", "partitions")
        .by(__.coalesce(__.values(VERSION_KEY), __.constant("")))
        .by(__.partitions().count())
        .to_list()
    )
    if not rows:
        raise missing_dataset(dataset)
    return str(rows[0]["version"]), int(rows[0]["partitions"])


def _meets(partition: Partition, box: Box, layout: PartitionLayout) -> bool:
    """Whether a box can hold a record of the partition (dimensions outside the catalog do not constrain)."""
    for name, (low, high) in box.items():
        if name == TIME_COLUMN:
            bounds = (partition.time_start, partition.time_end)
        elif name in layout.attributes:
            bounds = partition.bounds.get(name)
            if bounds is None:  # a partition catalogued without this attribute's range: keep it
                continue
        else:
            continue
        if bounds[1] < low or bounds[0] > high:
            return False
    return True
