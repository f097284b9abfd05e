"""Label propagation in rounds until fixpoint, with Gremlin traversals.

Each round takes the vertices whose labels changed in the previous round (at first: the declared ones), fetches
their outgoing lineage in one traversal per kind (column ``flowsTo`` edges; table-level ``usedBy -> process ->
generated``; for columns also copy-like processes of their table that have no column lineage), pushes their labels
through the rules (:mod:`lineage_platform.labels.rules`) and stops at the first round that changes nothing. Labels
only grow during a run, so cycles terminate; provenance ties are broken by name, so results are deterministic.

``propagate(g)`` recomputes everything from the declarations and then brings the stored propagated labels in line
(adding new ones, withdrawing those whose source is gone). ``propagate(g, seeds=[...])`` starts from the stored
labels of some vertices (e.g. the sources of newly loaded lineage) and only adds: it touches the affected part only.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from gremlin_python.process.graph_traversal import GraphTraversal, GraphTraversalSource
from gremlin_python.process.traversal import T

from lineage_platform.graph.dsl import LineageTraversalSource, __, lineage_source
from lineage_platform.graph.vocabulary import Key, VertexLabel
from lineage_platform.labels.label import INFLUENCE_KEY, Label
from lineage_platform.labels.rules import LabelRule, RuleSet
from lineage_platform.labels.store import (
    Tagging,
    drop_edges,
    read_taggings,
    vertex_ids,
    vertex_names,
    write_taggings,
)

COPY_OPERATIONS = ("EXPORT", "IMPORT", "LOAD", "ALTER_RENAME", "INSERT_OVERWRITE_DIRECTORY")
State = dict[Any, dict[Label, Tagging]]


# what a flowsTo edge tells a hop: its process, strength, transform, and whether it masks or stops labels
FLOW_EDGE_FIELDS = ("p", "strength", "transform", "masking", "propagate")


def flow_edge_fields(projection: GraphTraversal) -> GraphTraversal:
    """Add the ``by()`` modulators of FLOW_EDGE_FIELDS to a ``project()`` over flowsTo edges."""
    return (
        projection.by(__.values(Key.PROCESS))
        .by(__.values(Key.STRENGTH))
        .by(__.values(Key.TRANSFORM))
        .by(__.coalesce(__.values(Key.MASKING), __.constant(False)))
        .by(__.coalesce(__.values(Key.PROPAGATE), __.constant(True)))
    )


@dataclass
class PropagationSummary:
    """What a propagation run did."""

    rounds: int = 0
    touched: int = 0  # vertices whose outgoing lineage was examined
    labelled: int = 0  # vertices holding at least one propagated label at the end
    added: int = 0
    withdrawn: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class Hop:
    """One outgoing lineage step from a labelled vertex (one row of the Spark path's hop table)."""

    target: Any
    process: str
    level: str  # column (a flowsTo edge) | table (usedBy -> process -> generated) | copy (copy-like process)
    target_kind: str = "table"  # column | table
    strength: str = "strong"
    transform: str = "IDENTITY"
    masking: bool = False
    propagate: bool = True


@dataclass(frozen=True)
class ProcessInfo:
    """What the rules need of a process: its filter predicates and whether propagation may pass it."""

    predicates: tuple[dict[str, Any], ...]
    propagate: bool


def propagate(
    g: GraphTraversalSource,
    rules: RuleSet | None = None,
    *,
    seeds: Iterable[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> PropagationSummary:
    """Propagate labels until fixpoint and store the result; see the module docstring for the two modes."""
    started = time.perf_counter()
    g = lineage_source(g)
    rules = rules or RuleSet()
    summary = PropagationSummary()
    incremental = seeds is not None
    if incremental:
        seed_ids = list(vertex_ids(g, seeds).values())
        state = _stored_state(g, seed_ids)
        frontier = set(seed_ids)
    else:
        state = {}
        for _, tagging in read_taggings(g, origin="declared"):
            if rules.rule(tagging.label.key).enabled:
                state.setdefault(tagging.vertex, {})[tagging.label] = tagging
        frontier = set(state)
    processes: dict[str, ProcessInfo] = {}
    kinds = _kinds(g, frontier)
    while frontier:
        summary.rounds += 1
        summary.touched += len(frontier)
        hops, names = _hops(g, frontier, kinds)
        _load_processes(g, processes, {hop.process for hop_list in hops.values() for hop in hop_list})
        if incremental:
            state.update(_stored_state(g, {h.target for hs in hops.values() for h in hs} - set(state)))
        frontier = _round(state, hops, names, processes, rules)
        kinds.update({h.target: h.target_kind for hs in hops.values() for h in hs})
        if progress:
            progress(summary.rounds, len(frontier))
    desired = [t for labels in state.values() for t in labels.values() if t.origin == "propagated"]
    summary.labelled = len({t.vertex for t in desired})
    summary.added, summary.withdrawn = store_taggings(g, desired, incremental)
    summary.seconds = time.perf_counter() - started
    return summary


def _stored_state(g: GraphTraversalSource, vertices: Iterable[Any]) -> State:
    """Stored labels of these vertices (every given vertex is in the result, labelled or not)."""
    state: State = {vertex: {} for vertex in vertices}
    if state:
        for _, tagging in read_taggings(g, vertices=list(state)):
            state[tagging.vertex][tagging.label] = tagging
    return state


def _kinds(g: GraphTraversalSource, vertices: set[Any]) -> dict[Any, str]:
    if not vertices:
        return {}
    rows = g.V(*vertices).project("id", "label").by(T.id).by(T.label).to_list()
    return {row["id"]: hop_kind(row["label"]) for row in rows}


def hop_kind(label: str) -> str:
    """A hop target's kind from its vertex label: column, or table for every dataset."""
    return "column" if label == VertexLabel.COLUMN else "table"


def _hops(g: LineageTraversalSource, frontier: set[Any], kinds: dict[Any, str]):
    """Outgoing lineage of the frontier: {vertex: [Hop]} and the frontier's names; two round trips at most."""
    hops: dict[Any, list[Hop]] = defaultdict(list)
    names: dict[Any, str] = {}
    columns = [v for v in frontier if kinds.get(v) == "column"]
    tables = [v for v in frontier if kinds.get(v) != "column"]
    table_step = __.readers().as_("p").outputs().as_("t").select("p", "t").by(__.qualified_name()).by(T.id)
    if tables:
        rows = (
            g.V(*tables)
            .project("id", "name", "out")
            .by(T.id)
            .by(__.qualified_name())
            .by(table_step.fold())
            .to_list()
        )
        for row in rows:
            names[row["id"]] = row["name"]
            hops[row["id"]] += [Hop(item["t"], item["p"], "table") for item in row["out"]]
    if columns:
        flows = flow_edge_fields(
            __.flows_out(weak=True)
            .project("t", "kind", *FLOW_EDGE_FIELDS)
            .by(__.in_v().id_())
            .by(__.in_v().label())
        ).fold()
        copies = (
            __.table_of()
            .readers()
            .with_operation(*COPY_OPERATIONS)
            .as_("p")
            .outputs()
            .as_("t")
            .select("p", "t")
            .by(__.qualified_name())
            .by(T.id)
            .fold()
        )
        rows = (
            g.V(*columns)
            .project("id", "name", "flows", "copies")
            .by(T.id)
            .by(__.qualified_name())
            .by(flows)
            .by(copies)
            .to_list()
        )
        for row in rows:
            names[row["id"]] = row["name"]
            for item in row["flows"]:
                hops[row["id"]].append(
                    Hop(
                        item["t"],
                        item["p"],
                        level="column",
                        target_kind=hop_kind(item["kind"]),
                        strength=item["strength"],
                        transform=item["transform"],
                        masking=bool(item["masking"]),
                        propagate=bool(item["propagate"]),
                    )
                )
            hops[row["id"]] += [Hop(item["t"], item["p"], "copy") for item in row["copies"]]
    return hops, names


def _load_processes(g: LineageTraversalSource, cache: dict[str, ProcessInfo], names: set[str]) -> None:
    missing = sorted(names - set(cache))
    if not missing:
        return
    rows = (
        g.processes(*missing)
        .project("name", "predicates", "propagate")
        .by(__.qualified_name())
        .by(__.coalesce(__.values(Key.PREDICATES), __.constant("[]")))
        .by(__.coalesce(__.values(Key.PROPAGATE), __.constant(True)))
        .to_list()
    )
    for row in rows:
        cache[row["name"]] = ProcessInfo(tuple(json.loads(row["predicates"])), bool(row["propagate"]))


def _round(
    state: State,
    hops: dict[Any, list[Hop]],
    names: dict[Any, str],
    processes: dict[str, ProcessInfo],
    rules: RuleSet,
) -> set[Any]:
    """Apply one round; returns the vertices whose labels grew."""
    proposals: dict[tuple[Any, Label], Tagging] = {}
    for source in sorted(hops, key=lambda v: names.get(v, "")):
        for hop in hops[source]:
            process = processes.get(hop.process, ProcessInfo((), True))
            if not (hop.propagate and process.propagate):
                continue
            for label in sorted(state.get(source, {})):
                carried = carry(label, rules.rule(label.key), hop, process, names.get(source, ""))
                if carried is None or carried in state.get(hop.target, {}):
                    continue
                tagging = Tagging(
                    hop.target,
                    carried,
                    "propagated",
                    names.get(source, ""),
                    str(label),
                    hop.process,
                    hop.transform if hop.level == "column" else hop.level,
                    state[source][label].round + 1,  # hops from the declaration: the same in both modes
                )
                key = (hop.target, carried)
                if key not in proposals or _order(tagging) < _order(proposals[key]):
                    proposals[key] = tagging
    changed = set()
    for (target, label), tagging in proposals.items():
        state.setdefault(target, {})[label] = tagging
        changed.add(target)
    return changed


def _order(tagging: Tagging) -> tuple[str, str, str]:
    return (tagging.from_name, tagging.via, tagging.from_label)


def carry(label: Label, rule: LabelRule, hop: Hop, process: ProcessInfo, source: str) -> Label | None:
    """The label the target gets through this hop from the vertex named ``source``, or None (shared by the Gremlin
    and the Spark path)."""
    if not rule.enabled:
        return None
    table = source.rsplit(".", 1)[0] if hop.level == "column" else source  # the table the hop reads
    if hop.level in ("table", "copy"):
        return _narrow(label, rule, process, table) if rule.table_level else None
    if hop.strength != "strong":
        if rule.weak == "carry":
            return _narrow(label, rule, process, table)
        return Label(INFLUENCE_KEY, str(label)) if rule.weak == "influence" else None
    if hop.masking and rule.masking == "stop":
        return None
    return _narrow(label, rule, process, table) if hop.transform in rule.carry else None


def _narrow(label: Label, rule: LabelRule, process: ProcessInfo, table: str) -> Label | None:
    """A filter on one of the rule's narrow_by columns of the table the hop reads keeps the label only if it keeps
    the label's value. A statement that reads the table several times narrows only when every read does (one
    unfiltered read keeps the label); filters on other tables never narrow (a join may or may not pass them on)."""
    if not rule.narrow_by or not label.value:
        return label
    reads: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for predicate in process.predicates:
        if predicate.get("table") == table:
            reads[predicate.get("read")].append(predicate)
    if len(reads) > 1:
        reads.pop(None, None)  # filters not tied to one read of a table read several times: not counted
    if reads and all(_excludes(read, label.value, rule.narrow_by) for read in reads.values()):
        return None
    return label


def _excludes(read: list[dict[str, Any]], value: str, narrow_by: frozenset[str]) -> bool:
    """Whether the filters of one read of a table drop every row whose narrow_by column holds ``value``."""
    if any(predicate.get("op") == "UNFILTERED" for predicate in read):
        return False
    for predicate in read:
        op, kept = predicate.get("op"), predicate.get("value")
        values = {str(v) for v in kept} if isinstance(kept, list) else {str(kept)}
        narrowing = str(predicate.get("column", "")).lower() in narrow_by
        if narrowing and (
            (op in ("=", "IN") and value not in values) or (op in ("!=", "NOT IN") and value in values)
        ):
            return True
    return False


def store_taggings(g: GraphTraversalSource, desired: list[Tagging], incremental: bool) -> tuple[int, int]:
    """Bring stored propagated taggings in line with ``desired``; returns (added, withdrawn).

    Incremental runs only add; full runs also withdraw taggings that are no longer derived.
    """
    if incremental:
        existing_keys = {
            (t.vertex, t.label)
            for _, t in read_taggings(g, origin="propagated", vertices={t.vertex for t in desired})
        }
        new = [t for t in desired if (t.vertex, t.label) not in existing_keys]
        write_taggings(g, new)
        return len(new), 0
    existing = {(t.vertex, t.label): (edge_id, t) for edge_id, t in read_taggings(g, origin="propagated")}
    wanted = {(t.vertex, t.label): t for t in desired}
    stale = [edge_id for key, (edge_id, t) in existing.items() if wanted.get(key) != t]
    new = [t for key, t in wanted.items() if key not in existing or existing[key][1] != t]
    drop_edges(g, stale)
    write_taggings(g, new)
    withdrawn = sum(1 for key in existing if key not in wanted)
    return len(new), withdrawn


def labels_of(g: GraphTraversalSource, names: Iterable[str]) -> dict[str, list[Tagging]]:
    """Current labels (declared and propagated) of some tables or columns, by name."""
    ids = vertex_ids(g, names)
    by_id: dict[Any, list[Tagging]] = defaultdict(list)
    for _, tagging in read_taggings(g, vertices=list(ids.values())) if ids else []:
        by_id[tagging.vertex].append(tagging)
    id_names = vertex_names(g, by_id)
    return {id_names[v]: sorted(ts, key=lambda t: t.label) for v, ts in by_id.items()}
