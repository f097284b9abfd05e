"""The partitioning scheme: time buckets x cells of a k-d tree over the clustering attributes.

Each time bucket is cut into cells by a k-d tree built from a sample: a node with room for k cells is split at the
value that puts k_left/k of its records on the left, on whichever attribute comes closest to that share. A heavy
hitter (one source address carrying an eighth of an hour's traffic) cannot be split on its own attribute, so the
node holding it is split on the next one instead; independent per-attribute quantiles cannot do that and leave cells
100x apart. How many cells, and how wide a bucket, follow from the data volume (:func:`size_for_volume`): cells of
about :data:`TARGET_CELL_RECORDS` records, so that a scan pays per-file costs on few large files, and at least
:data:`MIN_CELLS` per bucket, so that a query pinning the attributes reads a small share of a bucket.

Assigning records is vectorised: one comparison per tree level for all records of a batch.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from lineage_platform.errors import IngestError
from lineage_platform.netflow.records import CLUSTERABLE, TIME_COLUMN

HOUR_MS = 3_600_000
# A DuckDB scan pays ~0.1-0.2 ms per file it opens and ~0.06 ms per row group (measured on 1M generated records,
# 2026-11-24): cells this large keep that below the cost of reading their records.
TARGET_CELL_RECORDS = 1 << 17
MIN_CELLS = 8  # a query pinning the clustering attributes reads about 1/MIN_CELLS of a bucket or less
MAX_CELLS = 1024
SAMPLE_PER_CELL = 100
BUCKET_HOURS = (1, 2, 3, 4, 6, 8, 12, 24)  # divisors of a day: buckets stay aligned to midnight UTC
BALANCE_SLACK = 0.01  # a cut this far (share of the node's records) from a cell boundary still counts as even
HEAVY_ERROR = 0.1  # no clustering cut this close (share of a cell) to a boundary: cut a tie-breaker column
# Columns that split one heavy conversation (one source and destination) when it outweighs a cell: its flows differ
# in their ephemeral ports. Queries do not prune on them; they only keep cells even.
TIE_BREAKERS = ("src_port", "dst_port")

# A node is a cell number (leaf) or a split: (attribute, cut, left, right); records with value >= cut go right.
Node = int | tuple[str, int, "Node", "Node"]


@dataclass(frozen=True)
class PartitionLayout:
    """Time bucket width plus the k-d tree that numbers the cells of a bucket."""

    attributes: tuple[str, ...]
    tree: Node = 0
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
        cls,
        sample: pa.Table,
        attributes: tuple[str, ...],
        cells: int | None = None,
        bucket_ms: int | None = None,
    ) -> PartitionLayout:
        """A k-d tree of ``cells`` cells balanced on the sample (both sized from its volume when not given)."""
        if sample.num_rows == 0:
            raise IngestError("cannot size partitions from an empty sample", hint="ingest some records first")
        if cells is None or bucket_ms is None:
            sized_cells, sized_bucket = size_for_volume(sample, bucket_ms)
            cells, bucket_ms = cells or sized_cells, bucket_ms or sized_bucket
        spare = [name for name in TIE_BREAKERS if name not in attributes and name in sample.column_names]
        names = [*attributes, *spare]
        values = np.stack([sample.column(name).to_numpy().astype(np.int64) for name in names])
        counter = iter(range(cells))
        tree = _build(values, names, len(attributes), cells, counter) if attributes else 0
        return cls(tuple(attributes), tree, bucket_ms)

    @classmethod
    def grid(
        cls, attributes: tuple[str, ...], boundaries: dict[str, tuple[int, ...]], bucket_ms: int = HOUR_MS
    ) -> PartitionLayout:
        """Independent ranges per attribute (inner boundaries given), as a tree numbering cells in mixed radix."""
        counter = iter(range(math.prod(len(boundaries[name]) + 1 for name in attributes)))
        return cls(tuple(attributes), _grid(list(attributes), boundaries, counter), bucket_ms)

    @property
    def cells(self) -> int:
        """Partitions per time bucket."""
        return len(_leaves(self.tree))

    def assign(self, batch: pa.RecordBatch | pa.Table) -> tuple[np.ndarray, np.ndarray]:
        """(time bucket start in ms, cell number) of every record."""
        times = batch.column(TIME_COLUMN).cast(pa.int64()).to_numpy()
        buckets = times - times % self.bucket_ms
        return buckets, self._compiled.cells(batch)

    def cell_box(self, cell: int) -> dict[str, tuple[int, int]]:
        """The value range of each attribute the tree allows in a cell (inclusive; unsplit attributes omitted)."""
        box: dict[str, tuple[int, int]] = {}
        node = self.tree
        while not isinstance(node, int):
            name, cut, left, right = node
            low, high = box.get(name, (0, (1 << 63) - 1))
            if cell in _leaves(right):
                box[name], node = (max(low, cut), high), right
            else:
                box[name], node = (low, min(high, cut - 1)), left
        if node != cell:
            raise IngestError(f"no cell {cell} in this layout", hint=f"cells are 0..{self.cells - 1}")
        return box

    @property
    def _compiled(self) -> _CompiledTree:
        compiled = self.__dict__.get("_compiled_tree")
        if compiled is None:
            compiled = _CompiledTree(self.tree)
            object.__setattr__(self, "_compiled_tree", compiled)  # a cache on a frozen dataclass
        return compiled

    def to_json(self) -> str:
        """The layout as JSON (kept on the dataset vertex of the catalog)."""
        return json.dumps(
            {"attributes": list(self.attributes), "tree": self.tree, "bucket_ms": self.bucket_ms}
        )

    @classmethod
    def from_json(cls, text: str) -> PartitionLayout:
        """Inverse of :meth:`to_json`; also reads the per-attribute ranges of catalogs written before the tree."""
        data = json.loads(text)
        attributes, bucket_ms = tuple(data["attributes"]), int(data["bucket_ms"])
        if "tree" not in data:
            boundaries = {name: tuple(cuts) for name, cuts in data["boundaries"].items()}
            return cls.grid(attributes, boundaries, bucket_ms)
        return cls(attributes, _node(data["tree"]), bucket_ms)

    def describe(self) -> str:
        """One line a person can read: bucket width, attributes and cell count."""
        attributes = ", ".join(self.attributes) or "nothing"
        return f"{self.bucket_ms // 60_000} min buckets x {self.cells} cells on {attributes} per bucket"


def size_for_volume(sample: pa.Table, bucket_ms: int | None = None) -> tuple[int, int]:
    """(cells per bucket, bucket width in ms) for the record rate the sample shows.

    The rate is the sample's records over the time they span (the first records of a time-ordered stream; a shuffled
    input spans more time and so gets fewer, larger cells). Without a given width, the bucket is the shortest divisor
    of a day that holds :data:`MIN_CELLS` cells of :data:`TARGET_CELL_RECORDS` records.
    """
    times = sample.column(TIME_COLUMN).cast(pa.int64()).to_numpy()
    span = max(int(times.max() - times.min()), 1)
    per_hour = sample.num_rows * HOUR_MS / span
    if bucket_ms is None:
        wanted = MIN_CELLS * TARGET_CELL_RECORDS / per_hour
        bucket_ms = next((hours for hours in BUCKET_HOURS if hours >= wanted), BUCKET_HOURS[-1]) * HOUR_MS
    cells = max(MIN_CELLS, round(per_hour * bucket_ms / HOUR_MS / TARGET_CELL_RECORDS))
    # a burst (all records in one millisecond) must not ask for millions of cells, nor a small sample for cells it
    # cannot fill: at most MAX_CELLS, and SAMPLE_PER_CELL sample records per cell
    return max(1, min(cells, MAX_CELLS, sample.num_rows // SAMPLE_PER_CELL)), bucket_ms


def _build(
    values: np.ndarray,
    names: list[str],
    clustered: int,
    cells: int,
    counter: object,
    uses: tuple[int, ...] = (),
) -> Node:
    """Split ``values`` (one row per name; the first ``clustered`` are the clustering attributes, the rest
    :data:`TIE_BREAKERS`) into ``cells`` cells; leaves numbered left to right.

    A cut may fall at any cell boundary (j of the node's k cells to the left, j = 1 .. k-1), not only the middle one,
    so a heavy value that fills one and a half cells is cut off next to a boundary and its records are split on the
    other attribute further down. Among the cuts within :data:`BALANCE_SLACK` of the most even one, the attribute
    cut least often on the way from the root is taken, so that every attribute gets its share of the cuts (a query on
    one attribute then skips cells too). Only when no clustering attribute can cut the node within
    :data:`HEAVY_ERROR` of a cell boundary (one conversation heavier than a cell) is a tie-breaker column cut.
    """
    uses = uses or (0,) * clustered
    rows = values.shape[1]
    if cells == 1 or rows < 2:
        return next(counter)  # type: ignore[call-overload]
    unit = rows / cells
    found = _candidates(values[:clustered], cells, unit)
    if not found or min(item[0] for item in found) > HEAVY_ERROR * unit:
        tie_breaks = _candidates(values[clustered:], cells, unit)
        found += [(error, clustered + number, cut, share) for error, number, cut, share in tie_breaks]
    if not found:  # every column holds one value here: nothing can split it, one cell instead of several
        return next(counter)  # type: ignore[call-overload]
    slack = min(item[0] for item in found) + BALANCE_SLACK * rows
    _, number, cut, left_cells = min(
        (item for item in found if item[0] <= slack),
        key=lambda item: (
            uses[item[1]] if item[1] < clustered else len(names) * rows,
            abs(item[3] - cells / 2),
            item[0],
        ),
    )
    right = values[number] >= cut
    below = tuple(count + (index == number) for index, count in enumerate(uses))
    return (
        names[number],
        cut,
        _build(values[:, ~right], names, clustered, left_cells, counter, below),
        _build(values[:, right], names, clustered, cells - left_cells, counter, below),
    )


def _candidates(values: np.ndarray, cells: int, unit: float) -> list[tuple[float, int, int, int]]:
    """(distance from the nearest cell boundary, row, cut, cells to the left) of the cuts next to each boundary."""
    found = []
    for number, row in enumerate(values):
        ordered = np.sort(row)
        for boundary in range(1, cells):
            for cut, left in _cuts(ordered, boundary * unit):
                share = min(max(round(left / unit), 1), cells - 1)
                found.append((abs(left - share * unit), number, cut, share))
    return found


def _cuts(ordered: np.ndarray, wanted: float) -> list[tuple[int, int]]:
    """(cut, records left of it) for the cuts on either side of the value at the wanted position."""
    position = min(max(round(wanted), 1), len(ordered) - 1)
    value = ordered[position]
    found = []
    below = int(np.searchsorted(ordered, value, side="left"))
    if below > 0:
        found.append((int(value), below))
    above = int(np.searchsorted(ordered, value, side="right"))
    if above < len(ordered):
        found.append((int(ordered[above]), above))
    return found


def _grid(names: list[str], boundaries: dict[str, tuple[int, ...]], counter: object) -> Node:
    """Ranges of the first attribute, each holding the grid of the others (so leaves come in mixed-radix order)."""
    if not names:
        return next(counter)  # type: ignore[call-overload]
    return _ranges(names, list(boundaries[names[0]]), boundaries, counter)


def _ranges(names: list[str], cuts: list[int], boundaries: dict, counter: object) -> Node:
    if not cuts:
        return _grid(names[1:], boundaries, counter)
    middle = len(cuts) // 2
    left = _ranges(names, cuts[:middle], boundaries, counter)
    return (names[0], cuts[middle], left, _ranges(names, cuts[middle + 1 :], boundaries, counter))


def _node(data: object) -> Node:
    if isinstance(data, int):
        return data
    name, cut, left, right = data  # type: ignore[misc]
    return (str(name), int(cut), _node(left), _node(right))


def _leaves(node: Node) -> list[int]:
    if isinstance(node, int):
        return [node]
    return _leaves(node[2]) + _leaves(node[3])


class _CompiledTree:
    """The tree as arrays, walked one level per step for all records at once (leaves point to themselves)."""

    def __init__(self, tree: Node) -> None:
        attributes = _columns(tree)
        attribute, cut, left, right, cell = [], [], [], [], []

        def add(node: Node) -> int:
            index = len(cell)
            for column in (attribute, cut, left, right, cell):
                column.append(0)
            if isinstance(node, int):
                left[index] = right[index] = index
                cell[index] = node
            else:
                attribute[index], cut[index] = attributes.index(node[0]), node[1]
                left[index], right[index] = add(node[2]), add(node[3])
            return index

        add(tree)
        self.attributes = attributes
        self.attribute, self.cut = np.array(attribute, np.int64), np.array(cut, np.int64)
        self.left, self.right, self.cell = (np.array(item, np.int64) for item in (left, right, cell))
        self.depth = _depth(tree)

    def cells(self, batch: pa.RecordBatch | pa.Table) -> np.ndarray:
        """Cell number of every record."""
        rows = batch.num_rows
        node = np.zeros(rows, np.int64)
        if self.depth == 0:
            return self.cell[node]
        values = np.stack([batch.column(name).to_numpy().astype(np.int64) for name in self.attributes])
        positions = np.arange(rows)
        for _ in range(self.depth):
            taken = values[self.attribute[node], positions]
            node = np.where(taken >= self.cut[node], self.right[node], self.left[node])
        return self.cell[node]


def _columns(node: Node) -> tuple[str, ...]:
    """The columns the tree cuts, in first-use order."""
    if isinstance(node, int):
        return ()
    return tuple(dict.fromkeys((node[0], *_columns(node[2]), *_columns(node[3]))))


def _depth(node: Node) -> int:
    return 0 if isinstance(node, int) else 1 + max(_depth(node[2]), _depth(node[3]))
