"""The fused merge step (strategy ``fuse_inject_merge``) against the general steps it replaces, on random batches.

Every batch runs twice on two graphs that start equal: as ``inject(rows...).mergeV/mergeE(...)`` (fused) and with an
``identity()`` after the inject (the general inject and merge steps). Results, errors, the transaction's redo ops
and the whole graph state must be the same, on an open graph and on one with the strict schema.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from gremlin_python.process.graph_traversal import GraphTraversal, __
from gremlin_python.process.traversal import Bytecode, CardinalityValue, Direction, Merge, T

from lineage_platform.errors import LineageError
from lineage_platform.graph.embedded.engine import EmbeddedGraph
from lineage_platform.graph.embedded.step_calls import group_steps
from lineage_platform.graph.embedded.strategies import Context, apply_strategies
from lineage_platform.graph.embedded.strict import SchemaRules
from lineage_platform.graph.schema import load_schema

NAMES = [f"db.t{n}" for n in range(6)]
KEYS = ["name", "createBy", "kind", "version", "masking"]


def _value(rng: random.Random, key: str) -> Any:
    """A value for ``key``: mostly its schema type, sometimes one the strict schema converts or refuses."""
    roll = rng.random()
    if roll < 0.03:
        return CardinalityValue.list_(f"l{rng.randrange(3)}")
    if roll < 0.05:
        return CardinalityValue.set_(f"s{rng.randrange(2)}")
    if roll < 0.07:
        return None
    if roll < 0.09:
        return rng.randrange(5) if key != "version" else f"v{rng.randrange(3)}"
    return {"version": rng.randrange(3), "masking": rng.random() < 0.5}.get(key, f"{key}{rng.randrange(3)}")


def _props(rng: random.Random, count: int) -> dict[Any, Any]:
    props: dict[Any, Any] = {key: _value(rng, key) for key in rng.sample(KEYS, count)}
    roll = rng.random()
    if roll < 0.02:
        props["~hidden"] = 1
    elif roll < 0.05:
        props[T.label] = rng.choice(
            ["table", "column"]
        )  # equal to the search's label, or an override refused
    return props


def _vertex_rows(rng: random.Random, size: int) -> list[dict[str, Any]]:
    rows = []
    for _ in range(size):
        match: dict[Any, Any] = {
            T.label: rng.choice(["table", "column"]) if rng.random() < 0.97 else "nolabel"
        }
        match["qualifiedName"] = rng.choice(NAMES)
        if rng.random() < 0.1:
            match["createBy"] = f"user{rng.randrange(3)}"
        row: dict[str, Any] = {
            "match": match,
            "create": _props(rng, rng.randrange(4)),
            "update": _props(rng, 1),
        }
        roll = rng.random()
        if roll < 0.03:
            del row["create"]  # select() finds nothing: the general resolution runs
        elif roll < 0.05:
            row["match"] = "not a map"
        rows.append(row)
    return rows


def _edge_rows(rng: random.Random, size: int, ids: list[Any]) -> list[dict[str, Any]]:
    rows = []
    for _ in range(size):
        match: dict[Any, Any] = {T.label: rng.choice(["flowsTo", "usedBy"])}
        if ids and rng.random() < 0.95:
            match[Direction.OUT] = rng.choice(ids)
        if ids and rng.random() < 0.9:
            match[Direction.IN] = rng.choice(ids) if rng.random() < 0.97 else 10**9
        if rng.random() < 0.5:
            match["process"] = f"p{rng.randrange(3)}"
        create = {"strength": rng.choice(["strong", "weak"])}
        if rng.random() < 0.05:
            create[Direction.IN] = rng.choice(ids) if ids else 0
        rows.append({"match": match, "create": create, "update": {"transform": f"x{rng.randrange(3)}"}})
    return rows


def _upsert(rows: list[dict[str, Any]], kind: str, general: bool, on_match: bool, unfold: bool) -> Bytecode:
    traversal = GraphTraversal(None, None, Bytecode())
    traversal = traversal.inject(rows).unfold() if unfold else traversal.inject(*rows)
    if general:
        traversal = traversal.identity()
    merge = traversal.merge_v if kind == "V" else traversal.merge_e
    traversal = merge(__.select("match")).option(Merge.on_create, __.select("create"))
    if on_match:
        traversal = traversal.option(Merge.on_match, __.select("update"))
    return traversal.element_map().bytecode


def _run(graph: EmbeddedGraph, bytecode: Bytecode) -> tuple[Any, list[tuple]]:
    """(results or the error's type and message, the redo ops) of running ``bytecode`` in a transaction."""
    tx = graph.begin()
    try:
        outcome: Any = [(t.object, t.bulk) for t in graph.execute(bytecode, tx)]
    except LineageError as exc:
        outcome = (type(exc).__name__, str(exc))
    ops = graph.graph.pending_ops()
    tx.commit()
    return outcome, ops


def _graphs(strict: bool) -> tuple[EmbeddedGraph, EmbeddedGraph]:
    schema = load_schema()
    rules = SchemaRules.from_schema(schema) if strict else None
    return tuple(  # type: ignore[return-value]
        EmbeddedGraph(unique=schema.unique_keys, indexed=schema.indexed_keys, rules=rules) for _ in range(2)
    )


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_fused_merges_do_what_the_general_steps_do(seed: int, strict: bool) -> None:
    rng = random.Random(seed)
    fused_graph, general_graph = _graphs(strict)
    outcomes = set()
    for _ in range(30):
        kind = rng.choice("VVE")
        ids = [v.id for v in fused_graph.graph.vertices.values()]
        size = rng.randrange(1, 8)
        rows = _vertex_rows(rng, size) if kind == "V" else _edge_rows(rng, size, ids)
        on_match, unfold = rng.random() < 0.6, rng.random() < 0.3
        fused = _upsert(rows, kind, False, on_match, unfold)
        general = _upsert(rows, kind, True, on_match, unfold)
        calls = apply_strategies(group_steps(fused.step_instructions), Context(anonymous=False))
        assert calls[0].rows is not None  # the fused shape was recognised
        for _ in range(2):  # the second time the rows meet what the first one created
            outcome = _run(fused_graph, fused)
            assert outcome == _run(general_graph, general)
            outcomes.add("error" if isinstance(outcome[0], tuple) else "rows")
    assert fused_graph.graph.export_state() == general_graph.graph.export_state()
    assert len(fused_graph.graph.vertices) > 3
    if seed < 3:  # every seed exercises both; the first few are checked for it
        assert outcomes == {"error", "rows"}
