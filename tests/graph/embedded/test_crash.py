"""kill -9 during a write loop loses at most the unacknowledged transaction and never corrupts the store.

Each test runs a writer subprocess that prints every SCN (or sequence number) once its commit returned, kills
it with SIGKILL at random moments, reopens the store and checks what survived.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gremlin_python.process.anonymous_traversal import traversal
from gremlin_python.process.graph_traversal import __

from lineage_platform.graph.connect import EmbeddedRemoteConnection
from lineage_platform.graph.embedded.engine import EmbeddedGraph
from lineage_platform.graph.embedded.storage import DurableLog, LogTail, read_since

OPS_PER_TX = 4
KILLS = 6

# Recovers the store, then commits transaction after transaction, printing each SCN once append() returned.
# The state handed to checkpoints is the list of all transactions so far; small checkpoint_bytes make
# checkpoints (snapshot + new segment + retention of argv[2] bytes) happen during the loop too.
WRITER = f"""
import sys
from lineage_platform.graph.embedded.storage import DurableLog

store = DurableLog(sys.argv[1], checkpoint_bytes=8_192, retain_bytes=int(sys.argv[2]))
state, replay = store.recover()
history = (state or []) + list(replay)
while True:
    n = len(history) + 1
    ops = [("addV", n, "node"), ("addVP", n, f"p{{n}}", "seq", n)]
    ops += [("addE", f"e{{n}}-{{i}}", "next", n, n - 1) for i in range({OPS_PER_TX} - 2)]
    scn = store.append(ops)
    history.append(ops)
    print(scn, flush=True)
    if store.should_checkpoint():
        store.checkpoint(history)
"""

# Through the engine: each autocommitted traversal adds vertex n (with property seq = n) and an edge from n - 1.
ENGINE_WRITER = """
import sys
from gremlin_python.process.anonymous_traversal import traversal
from gremlin_python.process.traversal import T
from lineage_platform.graph.connect import EmbeddedRemoteConnection
from lineage_platform.graph.embedded.engine import EmbeddedGraph

g = traversal().with_remote(EmbeddedRemoteConnection(EmbeddedGraph(sys.argv[1])))
n = g.V().count().next()
while True:
    n += 1
    if n == 1:
        g.addV("node").property(T.id, 1).property("seq", 1).iterate()
    else:
        g.V(n - 1).as_("p").addV("node").property(T.id, n).property("seq", n).addE("next").from_("p").iterate()
    print(n, flush=True)
"""


def run_and_kill(writer_code: str, store: Path, rng: random.Random) -> list[int]:
    """Start a writer, kill -9 it at a random moment after its first commit, return the numbers it acknowledged."""
    writer = subprocess.Popen(
        [sys.executable, "-c", writer_code, str(store), "16384"], stdout=subprocess.PIPE, text=True
    )
    first = writer.stdout.readline()
    time.sleep(rng.uniform(0.0, 0.3))
    os.kill(writer.pid, signal.SIGKILL)
    acknowledged = [first, *writer.stdout]
    writer.wait()
    return [int(line) for line in acknowledged if line.endswith("\n")]


def recovered_history(store: Path) -> list[list[tuple]]:
    with DurableLog(store) as log:
        state, replay = log.recover()
        history = (state or []) + list(replay)
        assert log.last_scn == len(history)
    return history


def assert_whole_transactions(history: list[list[tuple]]) -> None:
    for position, ops in enumerate(history, start=1):
        assert len(ops) == OPS_PER_TX, f"transaction {position} is partial: {ops}"
        assert ops[0] == ("addV", position, "node"), f"transaction {position} is out of order: {ops[0]}"
        assert all(op[3] == position for op in ops[2:]), f"transaction {position} mixes ops of another"


@pytest.mark.slow
def test_kill_minus_9_loses_no_acknowledged_transaction(tmp_path: Path) -> None:
    store = tmp_path / "store"
    rng = random.Random(20261122)
    acknowledged_so_far = 0
    for _ in range(KILLS):
        acknowledged = run_and_kill(WRITER, store, rng)
        assert acknowledged == list(
            range(acknowledged_so_far + 1, acknowledged_so_far + 1 + len(acknowledged))
        )
        history = recovered_history(store)
        assert len(history) >= acknowledged[-1], "an acknowledged transaction was lost"
        assert len(history) <= acknowledged[-1] + 1, "more than the one in-flight transaction appeared"
        assert_whole_transactions(history)
        acknowledged_so_far = len(history)

    assert list(store.glob("snapshot-*.snap")), "the loop should have checkpointed at least once"
    with DurableLog(store) as log:
        log.recover()
        assert log.append([("addV", acknowledged_so_far + 1, "node")]) == acknowledged_so_far + 1


@pytest.mark.slow
def test_log_tail_follows_a_live_writer_across_checkpoints(tmp_path: Path) -> None:
    store, acks = tmp_path / "store", tmp_path / "acknowledged.txt"
    with acks.open("w") as out:
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(store), str(10**9)], stdout=out)
    tail = LogTail(store, 0)
    try:
        deadline = time.monotonic() + 60
        while not acks.read_text() and time.monotonic() < deadline:
            time.sleep(0.01)
        while len(list(store.glob("wal-*.log"))) < 3 and time.monotonic() < deadline:
            seen = tail.scn
            for scn, ops in tail.poll():
                assert scn == seen + 1
                assert ops[0] == ("addV", scn, "node")
                seen = scn
            time.sleep(0.01)
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
    assert len(list(store.glob("wal-*.log"))) >= 3, (
        "the writer should have checkpointed twice while being tailed"
    )
    acknowledged = [int(line) for line in acks.read_text().splitlines(keepends=True) if line.endswith("\n")]
    before = tail.scn
    rest = [scn for scn, _ in tail.poll()]
    assert rest == list(range(before + 1, before + 1 + len(rest)))
    assert tail.scn >= acknowledged[-1], "an acknowledged transaction never reached the tail"
    assert [scn for scn, _ in read_since(store, 0)] == list(range(1, tail.scn + 1))


def recovered_graph(store: Path) -> tuple[list[int], list[dict]]:
    """The seq values of all vertices and the (out, in) ids of all edges of the reopened engine store."""
    graph = EmbeddedGraph(store)
    try:
        g = traversal().with_remote(EmbeddedRemoteConnection(graph))
        seqs = sorted(g.V().values("seq").to_list())
        edges = g.E().project("out", "in").by(__.out_v().id_()).by(__.in_v().id_()).to_list()
        assert g.V().count().next() == len(seqs), "a vertex lost its seq property"
    finally:
        graph.close()
    return seqs, edges


@pytest.mark.slow
def test_kill_minus_9_through_the_engine_keeps_the_graph_consistent(tmp_path: Path) -> None:
    store = tmp_path / "graph"
    rng = random.Random(7)
    committed = 0
    for _ in range(KILLS):
        acknowledged = run_and_kill(ENGINE_WRITER, store, rng)
        assert acknowledged[0] == committed + 1
        seqs, edges = recovered_graph(store)
        assert acknowledged[-1] <= len(seqs) <= acknowledged[-1] + 1
        assert seqs == list(range(1, len(seqs) + 1)), "a vertex is missing or duplicated"
        assert sorted((e["out"], e["in"]) for e in edges) == [(n, n + 1) for n in range(1, len(seqs))]
        committed = len(seqs)
