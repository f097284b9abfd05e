"""The partition catalog in the lineage graph.

    table(qualifiedName=<dataset>, partitionLayout=<json>) -hasPartition-> partition(one per partition file)

A partition vertex carries the file's path, record count and size, its time range (``timeStart``/``timeEnd``, epoch
ms of the first-switched time) and, for each clustering attribute, the range of values it holds (``srcIpLo`` /
``srcIpHi`` ...). The dataset vertex's ``catalogVersion`` is a fresh token after every write (register, add, drop),
so a reader can cache the catalog and see in one lookup whether it changed (snapshot.py). Everything goes through
gremlinpython, so the same code runs on the embedded engine and on JanusGraph.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from gremlin_python.process.graph_traversal import GraphTraversal, GraphTraversalSource, __
from gremlin_python.process.traversal import Merge, P, T
from gremlin_python.statics import long

from lineage_platform.errors import LineageError
from lineage_platform.graph.outbox import change_set, record_drops, record_state
from lineage_platform.graph.writer import guid
from lineage_platform.netflow.ingest import PartitionFile
from lineage_platform.netflow.layout import PartitionLayout
from lineage_platform.netflow.records import COLUMNS

VERSION_KEY = "catalogVersion"
PARTITIONS_PER_TRAVERSAL = 50


class CatalogError(LineageError):
    """The NetFlow dataset is missing from the catalog, or the catalog disagrees with the files."""


def bound_keys(attribute: str) -> tuple[str, str]:
    """Property keys of an attribute's range on a partition vertex: ``src_ip`` -> ``srcIpLo``, ``srcIpHi``."""
    head, *rest = attribute.split("_")
    stem = head + "".join(part.title() for part in rest)
    return f"{stem}Lo", f"{stem}Hi"


@dataclass(frozen=True)
class Partition:
    """A partition vertex as the query planner sees it."""

    qualified_name: str
    path: Path
    records: int
    bytes: int
    time_start: int
    time_end: int
    # clustering attribute -> the range of values the partition holds
    bounds: dict[str, tuple[int, int]] = field(default_factory=dict, hash=False)


def register_dataset(g: GraphTraversalSource, dataset: str, layout: PartitionLayout, root: Path) -> None:
    """Create the NetFlow dataset vertex, or update its layout and storage directory."""
    with change_set(g) as (source, ops):
        _register(source, dataset, layout, root, ops)


def _register(
    g: GraphTraversalSource, dataset: str, layout: PartitionLayout, root: Path, ops: list[tuple] | None
) -> None:
    vertex_id = (
        g.merge_v({T.label: "table", "qualifiedName": dataset})
        .option(
            Merge.on_create,
            {
                "name": dataset.rsplit(".", 1)[-1],
                "guid": guid("table", dataset),
                "typeName": "netflow_dataset",
                "datasetKind": "table",
                "createTime": long(int(time.time() * 1000)),
            },
        )
        .property("partitionLayout", layout.to_json())
        .property(VERSION_KEY, new_version())
        .property("path", str(root))
        .id_()
        .next()
    )
    record_state(g, ops, vertices=[vertex_id])


def find_dataset(g: GraphTraversalSource, dataset: str) -> tuple[PartitionLayout, Path] | None:
    """The layout and storage directory of a dataset, or None when it was never ingested."""
    found = (
        g.V()
        .has("table", "qualifiedName", dataset)
        .has("partitionLayout")
        .value_map("partitionLayout", "path")
    )
    rows = found.to_list()
    if not rows:
        return None
    return PartitionLayout.from_json(rows[0]["partitionLayout"][0]), Path(rows[0]["path"][0])


def load_layout(g: GraphTraversalSource, dataset: str) -> PartitionLayout:
    """The layout the dataset was partitioned with."""
    found = find_dataset(g, dataset)
    if found is None:
        raise missing_dataset(dataset)
    return found[0]


def missing_dataset(dataset: str) -> CatalogError:
    """The error for a dataset that was never ingested."""
    return CatalogError(
        f"no NetFlow dataset {dataset!r} in the catalog",
        hint="ingest records first with `lineage netflow ingest`",
    )


def new_version() -> str:
    """A fresh catalog version token."""
    return uuid.uuid4().hex


def add_partitions(g: GraphTraversalSource, dataset: str, root: Path, files: Iterable[PartitionFile]) -> int:
    """Upsert one partition vertex per file and link it to the dataset; returns how many were written.

    Up to :data:`PARTITIONS_PER_TRAVERSAL` upserts travel in one traversal (one round trip to a remote server).
    The link is looked for from the partition's side (its one incoming edge), so the cost of an upsert does not
    grow with the number of partitions the dataset already has.
    """
    items = list(files)
    with change_set(g) as (source, ops):
        for start in range(0, len(items), PARTITIONS_PER_TRAVERSAL):
            _upsert_partitions(source, dataset, root, items[start : start + PARTITIONS_PER_TRAVERSAL], ops)
        _bump_version(source, source.V().has("table", "qualifiedName", dataset), ops)
    return len(items)


def _bump_version(g: GraphTraversalSource, datasets: GraphTraversal, ops: list[tuple] | None) -> None:
    """Give the dataset vertices the traversal finds a fresh catalog version."""
    changed = datasets.dedup().property(VERSION_KEY, new_version()).id_().to_list()
    record_state(g, ops, vertices=changed)


def _upsert_partitions(
    g: GraphTraversalSource, dataset: str, root: Path, items: list[PartitionFile], ops: list[tuple] | None
) -> None:
    traversal: GraphTraversal | None = None
    names = []
    for item in items:
        name = f"{dataset}/{item.path.relative_to(root).as_posix()}"
        names.append(name)
        properties = _partition_properties(name, item)
        step = traversal.merge_v if traversal is not None else g.merge_v
        traversal = (
            step({T.label: "partition", "qualifiedName": name})
            .option(Merge.on_create, properties)
            .option(Merge.on_match, properties)
            .coalesce(
                __.in_e("hasPartition"),
                __.add_e("hasPartition").from_(__.V().has("table", "qualifiedName", dataset)),
            )
        )
    if traversal is None:
        return
    traversal.iterate()
    if ops is not None:
        links = (
            g.V()
            .has("partition", "qualifiedName", P.within(names))
            .project("partition", "edge")
            .by(__.id_())
            .by(__.in_e("hasPartition").id_())
            .to_list()
        )
        record_state(g, ops, [row["partition"] for row in links], [row["edge"] for row in links])


def _partition_properties(name: str, item: PartitionFile) -> dict[str, object]:
    properties: dict[str, object] = {
        "name": item.path.name,
        "guid": guid("partition", name),
        "typeName": "netflow_partition",
        "path": str(item.path),
        "recordCount": long(item.records),
        "byteSize": long(item.bytes),
        "timeStart": long(item.time_min),
        "timeEnd": long(item.time_max),
        "bucketStart": long(item.bucket_ms),
        "createTime": long(int(time.time() * 1000)),
    }
    for attribute, (low, high) in item.bounds.items():
        low_key, high_key = bound_keys(attribute)
        properties[low_key], properties[high_key] = long(low), long(high)
    return properties


def all_partitions(g: GraphTraversalSource, dataset: str) -> list[Partition]:
    """Every partition of the dataset."""
    rows = g.V().has("table", "qualifiedName", dataset).out("hasPartition").element_map().to_list()
    return sorted((_partition(row) for row in rows), key=lambda item: (item.time_start, item.qualified_name))


def drop_partitions(g: GraphTraversalSource, partitions: Iterable[Partition]) -> int:
    """Remove partition vertices (and their edges) from the catalog; returns how many."""
    names = [item.qualified_name for item in partitions]
    with change_set(g) as (source, ops):
        for start in range(0, len(names), 500):
            found = source.V().has("partition", "qualifiedName", P.within(names[start : start + 500]))
            _bump_version(source, found.clone().in_("hasPartition"), ops)
            if ops is not None:
                record_drops(source, ops, vertices=found.clone().id_().to_list())
            found.drop().iterate()
    return len(names)


def _partition(row: dict) -> Partition:
    return Partition(
        qualified_name=row["qualifiedName"],
        path=Path(row["path"]),
        records=int(row["recordCount"]),
        bytes=int(row["byteSize"]),
        time_start=int(row["timeStart"]),
        time_end=int(row["timeEnd"]),
        bounds={
            name: (int(row[low]), int(row[high]))
            for name, (low, high) in ((name, bound_keys(name)) for name in COLUMNS)
            if low in row and high in row
        },
    )


def format_partitions(g: GraphTraversalSource, dataset: str) -> str:
    """The dataset's layout and one line per partition (time range, records, bytes, path)."""
    layout = load_layout(g, dataset)
    items = all_partitions(g, dataset)
    lines = [f"{dataset}: {layout.describe()}; {len(items)} partition files"]
    for item in items:
        start = datetime.fromtimestamp(item.time_start / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")
        end = datetime.fromtimestamp(item.time_end / 1000, tz=UTC).strftime("%H:%M:%S")
        lines.append(f"  {start}..{end}  {item.records:>9} records  {item.bytes:>10} B  {item.path}")
    return "\n".join(lines)
