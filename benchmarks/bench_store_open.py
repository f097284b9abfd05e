"""Embedded store: open time vs reading the same rows raw, bytes on disk, checkpoint and append throughput.

The store holds a snapshot of N vertices (two properties each) and 3N edges, as the engine writes it
(``MemGraph.export_columns()`` of the rows ``MemGraph.export_state()`` shapes), plus N/100 logged transactions on
top. Baselines read and write the very same rows
as one plain pickle file and as CSV files. Files are read warm from the page cache on both sides. The store
reads its snapshot with the garbage collector paused, which is why it can beat a plain ``pickle.loads``;
"EmbeddedGraph open" adds what the engine does on top (building the in-memory graph and its indexes).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_store_open.py                # N = 200,000
    PYTHONPATH=. .venv/bin/python benchmarks/bench_store_open.py --vertices 1000000
    LINEAGE_BENCH_VERTICES=1000000 PYTHONPATH=. .venv/bin/python benchmarks/bench_store_open.py
"""

from __future__ import annotations

import argparse
import csv
import os
import pickle
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from lineage_platform.graph.embedded.engine import EmbeddedGraph
from lineage_platform.graph.embedded.memgraph import MemGraph
from lineage_platform.graph.embedded.storage import DurableLog

EDGES_PER_VERTEX = 3
OPS_PER_APPEND = 5
SYNCED_APPENDS = 1_000
UNSYNCED_APPENDS = 20_000
APPEND_ROUND = 100


def graph_rows(vertices: int) -> tuple:
    """A graph state as MemGraph.export_state() shapes it: (version, next_id, vertices, vprops, edges)."""
    vertex_rows = [(v, "column" if v % 10 else "table") for v in range(vertices)]
    vprop_rows = []
    for v in range(vertices):
        vprop_rows.append((v, 2 * v, "qualifiedName", f"warehouse.db{v % 97}.t{v // 20}.c{v}", None))
        vprop_rows.append((v, 2 * v + 1, "createTime", 1_760_000_000 + v, None))
    edge_rows = [
        (
            f"e{v}-{k}",
            "flowsTo",
            v,
            (v * 7 + k * 104_729 + 1) % vertices,
            {"strength": "strong"} if k == 0 else None,
        )
        for v in range(vertices)
        for k in range(EDGES_PER_VERTEX)
    ]
    return (1, 2 * vertices, vertex_rows, vprop_rows, edge_rows)


def tail_transactions(vertices: int, count: int) -> list[list[tuple]]:
    """``count`` committed transactions adding one vertex each, linked to the existing graph."""
    return [
        [
            ("addV", vertices + t, "process"),
            ("addVP", vertices + t, f"tp{t}", "name", f"job-{t}"),
            ("addE", f"tu{t}", "usedBy", t % vertices, vertices + t),
            ("addE", f"tg{t}", "generated", vertices + t, (t * 31) % vertices),
            ("setEP", f"tg{t}", "transform", "expression"),
        ]
        for t in range(count)
    ]


def seconds(action: Callable[[], Any]) -> float:
    """Wall time of one run of ``action``."""
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def best_of_interleaved(repeat: int, actions: dict[str, Callable[[], Any]]) -> dict[str, float]:
    """Fastest of ``repeat`` runs of each action, taking turns so that all see the same machine load."""
    best = dict.fromkeys(actions, float("inf"))
    for _ in range(repeat):
        for name, action in actions.items():
            best[name] = min(best[name], seconds(action))
    return best


def directory_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.iterdir() if p.is_file())


def write_store(path: Path, state: tuple, tail: list[list[tuple]]) -> None:
    """The store of ``state`` as the engine writes it (a snapshot of its columns), then ``tail`` logged."""
    graph = MemGraph()
    graph.import_state(state)
    with DurableLog(path, sync=False) as store:
        store.recover()
        store.checkpoint(graph.export_columns())
        for ops in tail:
            store.append(ops)


def open_store(path: Path) -> int:
    with DurableLog(path) as store:
        state, replay = store.recover()
        vertex_ids = state[2][0]
        return len(vertex_ids) + sum(1 for _ in replay)


def open_engine(path: Path) -> float:
    """Seconds to open the store as a real EmbeddedGraph (snapshot import + log replay); closing is not timed.

    Closing checkpoints the replayed transactions into a new snapshot, so this runs once, after the other opens.
    """
    opened: list[EmbeddedGraph] = []
    elapsed = seconds(lambda: opened.append(EmbeddedGraph(path)))
    opened[0].close()
    return elapsed


def write_pickle(path: Path, state: tuple, tail: list[list[tuple]]) -> None:
    with path.open("wb", buffering=4 * 1024 * 1024) as file:
        pickle.dump((state, tail), file, protocol=5)
        file.flush()
        os.fsync(file.fileno())


def read_pickle(path: Path) -> int:
    state, tail = pickle.loads(path.read_bytes())
    return len(state[2]) + len(tail)


def csv_tables(state: tuple, tail: list[list[tuple]]) -> dict[str, Iterable[tuple]]:
    _version, _next_id, vertex_rows, vprop_rows, edge_rows = state
    return {
        "vertices": vertex_rows,
        "vprops": vprop_rows,
        "edges": edge_rows,
        "ops": (op for ops in tail for op in ops),
    }


def write_csv(directory: Path, state: tuple, tail: list[list[tuple]]) -> None:
    directory.mkdir()
    for name, rows in csv_tables(state, tail).items():
        with (directory / f"{name}.csv").open("w", newline="") as file:
            csv.writer(file).writerows(rows)


def read_csv(directory: Path) -> int:
    tables = {}
    for path in directory.glob("*.csv"):
        with path.open(newline="") as file:
            tables[path.stem] = [tuple(row) for row in csv.reader(file)]
    return len(tables["vertices"])


def append_rates(directory: Path, *, sync: bool, count: int) -> tuple[float, float]:
    """Transactions per second as (bare appends, DurableLog appends) of the same op lists.

    A bare append pickles the op list and os.write()s it (+ fdatasync when ``sync``), without framing. The two
    take turns in rounds so that both see the same disk load from other processes.
    """
    transactions = tail_transactions(1_000, count)
    rounds = [transactions[start : start + APPEND_ROUND] for start in range(0, count, APPEND_ROUND)]
    bare_seconds = store_seconds = 0.0
    directory.mkdir()
    fd = os.open(directory / "bare.bin", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        with DurableLog(directory / "store", sync=sync) as store:
            store.recover()
            for batch in rounds:
                started = time.perf_counter()
                for ops in batch:
                    os.write(fd, pickle.dumps(ops, protocol=5))
                    if sync:
                        os.fdatasync(fd)
                bare_seconds += time.perf_counter() - started
                started = time.perf_counter()
                for ops in batch:
                    store.append(ops)
                store_seconds += time.perf_counter() - started
    finally:
        os.close(fd)
    return count / bare_seconds, count / store_seconds


Row = tuple[str, str, str, str]


def ratio_row(measure: str, baseline: float, ours: float, unit: str = "{:.2f}") -> Row:
    return (measure, unit.format(baseline), unit.format(ours), f"{ours / baseline:.2f}x")


def print_table(title: str, rows: list[Row]) -> None:
    header = ("measure", "baseline", "lineage store", "store / baseline")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(4)]
    print(f"\n{title}")
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)))


def measure_writes(work: Path, vertices: int) -> list[Row]:
    """Write the store and both raw baselines into ``work``; time the store and the pickle; compare sizes."""
    state = graph_rows(vertices)
    tail = tail_transactions(vertices, max(1, vertices // 100))
    store_seconds = seconds(lambda: write_store(work / "store", state, tail))
    pickle_seconds = seconds(lambda: write_pickle(work / "rows.pickle", state, tail))
    write_csv(work / "csv", state, tail)
    store_mb = directory_bytes(work / "store") / 1e6
    return [
        ratio_row("checkpoint + log vs pickle.dump+fsync (s)", pickle_seconds, store_seconds),
        ratio_row(
            "bytes on disk vs pickle (MB)", (work / "rows.pickle").stat().st_size / 1e6, store_mb, "{:.1f}"
        ),
        ratio_row("bytes on disk vs CSV (MB)", directory_bytes(work / "csv") / 1e6, store_mb, "{:.1f}"),
    ]


def measure_opens(work: Path, repeat: int) -> list[Row]:
    """Open the store written by :func:`measure_writes` and read the raw baselines, best of ``repeat``."""
    best = best_of_interleaved(
        repeat,
        {
            "pickle": lambda: read_pickle(work / "rows.pickle"),
            "csv": lambda: read_csv(work / "csv"),
            "store": lambda: open_store(work / "store"),
        },
    )
    engine_open = open_engine(work / "store")
    return [
        ratio_row("recover vs pickle.loads of the rows", best["pickle"], best["store"]),
        ratio_row("recover vs csv.reader of the rows", best["csv"], best["store"]),
        ratio_row("EmbeddedGraph(path) open (once) vs pickle.loads", best["pickle"], engine_open),
    ]


def measure_appends(work: Path) -> list[Row]:
    """Append throughput through DurableLog vs bare appends of the same pickled op lists."""
    rows = []
    for sync, count in ((True, SYNCED_APPENDS), (False, UNSYNCED_APPENDS)):
        raw, ours = append_rates(work / f"append-sync-{sync}", sync=sync, count=count)
        label = f"tx/s, {OPS_PER_APPEND} ops each, sync {'on' if sync else 'off'}, vs bare os.write"
        rows.append(ratio_row(label, raw, ours, "{:,.0f}"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--vertices", type=int, default=int(os.environ.get("LINEAGE_BENCH_VERTICES", 200_000))
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per open timing; the best is reported")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-store-open-"))
    try:
        write_rows = measure_writes(work, args.vertices)
        print(
            f"store: {args.vertices:,} vertices, {2 * args.vertices:,} vertex properties, "
            f"{EDGES_PER_VERTEX * args.vertices:,} edges in the snapshot + {max(1, args.vertices // 100):,} "
            "logged transactions"
        )
        print_table(f"open, seconds (best of {args.repeat})", measure_opens(work, args.repeat))
        print_table("write and size", write_rows)
        print_table("append throughput (higher is better)", measure_appends(work))
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
