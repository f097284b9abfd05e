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
from lineage_platform.graph.dsl import lineage_source
from lineage_platform.graph.outbox import change_set, record_drops, record_state
from lineage_platform.graph.vocabulary import EdgeLabel, Key, VertexLabel
from lineage_platform.graph.writer import guid
from lineage_platform.netflow.ingest import PartitionFile
from lineage_platform.netflow.layout import PartitionLayout
from lineage_platform.netflow.records import COLUMNS

VERSION_KEY = Key.CATALOG_VERSION
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
        g.merge_v({T.label: VertexLabel.TABLE, Key.QUALIFIED_NAME: dataset})
        .option(
            Merge.on_create,
            {
                Key.NAME: dataset.rsplit(".", 1)[-1],
                Key.GUID: guid(VertexLabel.TABLE, dataset),
                Key.TYPE_NAME: "netflow_dataset",
                Key.DATASET_KIND: "table",
                Key.CREATE_TIME: long(int(time.time() * 1000)),
            },
        )
        .property(Key.PARTITION_LAYOUT, layout.to_json())
        .property(VERSION_KEY, new_version())
        .property(Key.PATH, str(root))
        .id_()
        .next()
    )
    record_state(g, ops, vertices=[vertex_id])


def find_dataset(g: GraphTraversalSource, dataset: str) -> tuple[PartitionLayout, Path] | None:
    """The layout and storage directory of a dataset, or None when it was never ingested."""
    rows = catalogued(g, dataset).value_map(Key.PARTITION_LAYOUT, Key.PATH).to_list()
    if not rows:
        return None
    return PartitionLayout.from_json(rows[0][Key.PARTITION_LAYOUT][0]), Path(rows[0][Key.PATH][0])


def catalogued(g: GraphTraversalSource, dataset: str) -> GraphTraversal:
    """The dataset's vertex, if the catalog holds it (a table with a partition layout)."""
    return lineage_source(g).tables(dataset).has(Key.PARTITION_LAYOUT)


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
        _bump_version(source, lineage_source(source).tables(dataset), ops)
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
            step({T.label: VertexLabel.PARTITION, Key.QUALIFIED_NAME: name})
            .option(Merge.on_create, properties)
            .option(Merge.on_match, properties)
            .coalesce(
                __.in_e(EdgeLabel.HAS_PARTITION),
                __.add_e(EdgeLabel.HAS_PARTITION).from_(
                    __.V().has(VertexLabel.TABLE, Key.QUALIFIED_NAME, dataset)
                ),
            )
        )
    if traversal is None:
        return
    traversal.iterate()
    if ops is not None:
        links = (
            _partitions_named(g, names)
            .project("partition", "edge")
            .by(__.id_())
            .by(__.in_e(EdgeLabel.HAS_PARTITION).id_())
            .to_list()
        )
        record_state(g, ops, [row["partition"] for row in links], [row["edge"] for row in links])


def _partition_properties(name: str, item: PartitionFile) -> dict[str, object]:
    properties: dict[str, object] = {
        Key.NAME: item.path.name,
        Key.GUID: guid(VertexLabel.PARTITION, name),
        Key.TYPE_NAME: "netflow_partition",
        Key.PATH: str(item.path),
        Key.RECORD_COUNT: long(item.records),
        Key.BYTE_SIZE: long(item.bytes),
        Key.TIME_START: long(item.time_min),
        Key.TIME_END: long(item.time_max),
        Key.BUCKET_START: long(item.bucket_ms),
        Key.CREATE_TIME: long(int(time.time() * 1000)),
    }
    for attribute, (low, high) in item.bounds.items():
        low_key, high_key = bound_keys(attribute)
        properties[low_key], properties[high_key] = long(low), long(high)
    return properties


def all_partitions(g: GraphTraversalSource, dataset: str) -> list[Partition]:
    """Every partition of the dataset."""
    rows = lineage_source(g).tables(dataset).partitions().element_map().to_list()
    return sorted((_partition(row) for row in rows), key=lambda item: (item.time_start, item.qualified_name))


def drop_partitions(g: GraphTraversalSource, partitions: Iterable[Partition]) -> int:
    """Remove partition vertices (and their edges) from the catalog; returns how many."""
    names = [item.qualified_name for item in partitions]
    with change_set(g) as (source, ops):
        for start in range(0, len(names), 500):
            found = _partitions_named(source, names[start : start + 500])
            _bump_version(source, found.clone().in_(EdgeLabel.HAS_PARTITION), ops)
            if ops is not None:
                record_drops(source, ops, vertices=found.clone().id_().to_list())
            found.drop().iterate()
    return len(names)


def _partitions_named(g: GraphTraversalSource, names: list[str]) -> GraphTraversal:
    """The partition vertices with these qualifiedNames."""
    return g.V().has(VertexLabel.PARTITION, Key.QUALIFIED_NAME, P.within(names))


def _partition(row: dict) -> Partition:
    return Partition(
        qualified_name=row[Key.QUALIFIED_NAME],
        path=Path(row[Key.PATH]),
        records=int(row[Key.RECORD_COUNT]),
        bytes=int(row[Key.BYTE_SIZE]),
        time_start=int(row[Key.TIME_START]),
        time_end=int(row[Key.TIME_END]),
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
