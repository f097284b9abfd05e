"""A trace as the explorer's picture model: dataset cards with column rows, and edges between cards or rows.

The same model feeds `lineage ui` (which adds each card's columns and labels from the graph) and the offline
page of ``trace --format html`` (which has only what the trace holds).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lineage_platform.graph.vocabulary import VertexLabel

if TYPE_CHECKING:
    from lineage_platform.model import LineageGraph, Node

# what the graph adds to a card: {"kind": label, "labels": [...], "columns": [{"name": ..., "labels": [...]}]}
CardContents = Mapping[str, Any]


def card_of(node: Node) -> str:
    """The card a traced vertex is drawn in: a column's dataset (``db.table`` of ``db.table.col``), else itself."""
    return node.qualified_name.rsplit(".", 1)[0] if node.label == VertexLabel.COLUMN else node.qualified_name


def lineage_view(traced: LineageGraph, contents: Mapping[str, CardContents] | None = None) -> dict[str, Any]:
    """``{root, root_card, direction, level, cards, edges, notes}`` of a trace. A card lists ``contents``' columns
    (at column level only the traced ones), else the traced columns; its depth is its nearest vertex's hop."""
    contents = contents or {}
    cards: dict[str, dict[str, Any]] = {}
    for node in traced.nodes.values():
        name = card_of(node)
        card = cards.get(name)
        if card is None:
            found = contents.get(name, {})
            kind = found.get("kind", VertexLabel.TABLE if node.label == VertexLabel.COLUMN else node.label)
            card = cards[name] = {
                "name": name,
                "kind": kind,
                "layer": name.split(".", 1)[0] if kind == VertexLabel.TABLE else kind,
                "labels": list(found.get("labels", [])),
                "columns": [],
                "depth": node.depth,
                "more_inputs": False,
                "more_outputs": False,
                "_all": found.get("columns", []),
                "_traced": set(),
            }
        if abs(node.depth) < abs(card["depth"]):
            card["depth"] = node.depth
        card["more_inputs"] |= node.more_inputs
        card["more_outputs"] |= node.more_outputs
        if node.label == VertexLabel.COLUMN:
            card["_traced"].add(node.qualified_name.rsplit(".", 1)[1])
    for card in cards.values():
        listed, traced_columns = card.pop("_all"), card.pop("_traced")
        if traced.level == "column":
            known = {c["name"] for c in listed}
            card["columns"] = [c for c in listed if c["name"] in traced_columns] + [
                {"name": name, "labels": []} for name in sorted(traced_columns - known)
            ]
        else:
            card["columns"] = list(listed)
    root = traced.nodes[traced.root]
    return {
        "root": root.qualified_name,
        "root_card": card_of(root),
        "direction": traced.direction,
        "level": traced.level,
        "cards": sorted(cards.values(), key=lambda c: (c["depth"], c["name"])),
        "edges": _edges(traced),
        "notes": traced.notes,
    }


def _edges(traced: LineageGraph) -> list[dict[str, Any]]:
    """The trace's edges by qualified names, each (source, target, process, strength, transform) once."""
    nodes, seen, edges = traced.nodes, set(), []
    for e in traced.edges:
        key = (
            nodes[e.source].qualified_name,
            nodes[e.target].qualified_name,
            e.process,
            e.strength,
            e.transform,
        )
        if key in seen:
            continue
        seen.add(key)
        process = traced.processes.get(e.process)
        edges.append(
            {
                "source": key[0],
                "target": key[1],
                "process": e.process,
                "operation": process.operation if process else None,
                "strength": e.strength,
                "transform": e.transform,
            }
        )
    return edges


def process_details(traced: LineageGraph) -> dict[str, dict[str, Any]]:
    """Each process of the trace as the side panel shows it: operation, SQL and its latest runs (newest first)."""
    return {
        name: {
            "processes": [
                {
                    "name": name,
                    "operation": process.operation,
                    "sql": process.query_text or "",
                    "highlight": None,
                    "runs": process.runs,
                }
            ]
        }
        for name, process in traced.processes.items()
    }
