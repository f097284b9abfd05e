"""What the lineage explorer shows, as JSON-ready dicts: every answer comes from the product's own features
(:func:`~lineage_platform.trace.trace`, :func:`~lineage_platform.impact.impact`, label ``explain``, TTL ``advise``,
resource blocks); this module only reads card contents (columns, labels, runs) and shapes the results.

A lineage view is :func:`lineage_platform.render.view.lineage_view`'s model, with each card's columns and labels
read from the graph.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from typing import Any

from gremlin_python.process.graph_traversal import GraphTraversalSource
from gremlin_python.process.traversal import Order, P, T, TextP
from sqlglot import exp, parse_one, tokenize
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from lineage_platform.errors import LineageError
from lineage_platform.graph.dsl import LineageTraversalSource, __, lineage_source
from lineage_platform.graph.vocabulary import EdgeLabel, Key, LabelGroup, VertexLabel
from lineage_platform.impact import impact as run_impact
from lineage_platform.labels import explain
from lineage_platform.labels.store import read_taggings
from lineage_platform.model import LineageGraph
from lineage_platform.render.view import card_of
from lineage_platform.render.view import lineage_view as view_of
from lineage_platform.security.resource_blocks import extract_resource_blocks
from lineage_platform.trace import resolve, trace
from lineage_platform.ttl import advise

RUNS_SHOWN = 20
RUN_KEYS_SHOWN = (Key.START_TIME, Key.USER, Key.JOB, Key.HOST, Key.CLUSTER, Key.ENGINE, Key.STATUS)


def search(g: GraphTraversalSource, fragment: str, limit: int = 20) -> list[dict[str, str]]:
    """Datasets, columns, jobs and users whose name contains ``fragment`` (case-insensitive), datasets first.

    Each hit is ``{kind, name, open}``: ``open`` is the dataset or column a click shows (for a job or user, the
    newest dataset one of its runs wrote)."""
    text = fragment.strip().lower()
    if not text:
        return []
    g = lineage_source(g)
    hits: list[dict[str, str]] = []
    for labels in (
        LabelGroup.DATASET,
        (VertexLabel.COLUMN,),
    ):  # datasets first, then columns, each sorted by name
        if len(hits) >= limit:
            break
        names = (
            g.V()
            .has(Key.QUALIFIED_NAME, TextP.containing(text))
            .has_label(P.within(*labels))
            .project("kind", "name")
            .by(T.label)
            .by(__.qualified_name())
            .limit(limit - len(hits))
            .to_list()
        )
        hits += sorted(({**v, "open": v["name"]} for v in names), key=lambda h: h["name"])
    for key in (Key.JOB, Key.USER):
        if len(hits) >= limit:
            break
        rows = (
            g.V()
            .has_label(VertexLabel.RUN)
            .has(key, TextP.containing(text))
            .order()
            .by(Key.START_TIME, Order.desc)
            .project("name", "open")
            .by(__.values(key))
            .by(__.in_(EdgeLabel.HAS_RUN).outputs().qualified_name().limit(1).fold())
            .to_list()
        )
        seen: set[str] = set()
        for row in rows:
            if row["name"] not in seen and row["open"] and len(hits) < limit:
                seen.add(row["name"])
                hits.append({"kind": key, "name": row["name"], "open": row["open"][0]})
    return hits[:limit]


def lineage_view(
    g: GraphTraversalSource,
    name: str,
    *,
    direction: str = "both",
    depth: int | None = 2,
    level: str | None = None,
    fanout: int = 200,
    limit: int = 5_000,
) -> dict[str, Any]:
    """The lineage of a table or column as cards and edges (see the module doc)."""
    traced = trace(
        g,
        name,
        direction=direction,  # type: ignore[arg-type]
        depth=depth,
        level=level,  # type: ignore[arg-type]
        fanout=fanout,
        limit=limit,
    )
    return view_of(traced, _contents(g, traced))


def _contents(g: GraphTraversalSource, traced: LineageGraph) -> dict[str, dict[str, Any]]:
    """Each card's kind, labels and columns with their labels, in one round trip for the datasets and their
    columns and one for the labels."""
    names = {card_of(node) for node in traced.nodes.values()}
    rows = (
        lineage_source(g)
        .V()
        .named(*names)
        .has_label(P.within(*LabelGroup.DATASET))
        .project("id", "kind", "name", "columns")
        .by(T.id)
        .by(T.label)
        .by(__.qualified_name())
        .by(__.columns_of().project("id", "name").by(T.id).by(__.values(Key.NAME)).fold())
        .to_list()
    )
    ids = [row["id"] for row in rows] + [c["id"] for row in rows for c in row["columns"]]
    labels: dict[Any, set[str]] = defaultdict(set)
    for _, tagging in read_taggings(g, vertices=ids) if ids else []:
        labels[tagging.vertex].add(str(tagging.label))
    return {
        row["name"]: {
            "kind": row["kind"],
            "labels": sorted(labels[row["id"]]),
            "columns": [{"name": c["name"], "labels": sorted(labels[c["id"]])} for c in row["columns"]],
        }
        for row in rows
    }


def node_details(g: GraphTraversalSource, name: str, column: str | None = None) -> dict[str, Any]:
    """The side panel of a dataset, column or process: the SQL of the processes writing it (the expression of a
    column marked by character offsets: the named column's, or ``column`` in a process), their runs newest first,
    its labels with their propagation path, TTL advice (tables) and the resource block a user reading it needs."""
    g = lineage_source(g)
    vertex = _vertex(g, name)
    kind, qualified = vertex[T.label], vertex[Key.QUALIFIED_NAME]
    if kind == VertexLabel.PROCESS:
        processes = [qualified]
    elif (
        kind == VertexLabel.COLUMN
    ):  # the processes its lineage names, else (constants, count(1)) its table's writers
        processes = g.V(vertex[T.id]).flows_in(weak=True).values(Key.PROCESS).dedup().to_list() or (
            g.V(vertex[T.id]).table_of().writers().qualified_name().dedup().to_list()
        )
    else:
        processes = g.V(vertex[T.id]).writers().qualified_name().dedup().to_list()
    column = qualified.rsplit(".", 1)[1] if kind == VertexLabel.COLUMN else column
    details: dict[str, Any] = {
        "name": qualified,
        "kind": kind,
        "processes": _processes(g, processes, column),
        "labels": [],
        "ttl": None,
        "resource": None,
    }
    if kind != VertexLabel.PROCESS:
        details["labels"] = [
            {"label": str(e.label), "path": [{"name": s.name, "text": s.describe()} for s in e.steps]}
            for e in explain(g, qualified)
        ]
        details["resource"] = _resource(g, vertex, kind)
    if kind == VertexLabel.TABLE:
        details["ttl"] = advise(g, qualified).to_dict()
    return details


def _vertex(g: LineageTraversalSource, name: str) -> dict[str, Any]:
    """The element map of a dataset, column or process named ``name`` (a GraphError names close ones)."""
    found = g.processes(name).element_map().to_list()
    return found[0] if found else resolve(g, name)


def _processes(g: LineageTraversalSource, names: list[str], column: str | None) -> list[dict[str, Any]]:
    """Each process: operation, SQL, the span of ``column``'s expression in it, its runs newest first."""
    if not names:
        return []
    rows = g.processes(*names).project("p", "runs").by(__.element_map()).by(__.run_maps(RUNS_SHOWN)).to_list()
    result = []
    for row in rows:
        sql = row["p"].get(Key.QUERY_TEXT) or ""
        result.append(
            {
                "name": row["p"][Key.QUALIFIED_NAME],
                "operation": row["p"].get(Key.OPERATION),
                "sql": sql,
                "highlight": expression_span(sql, column) if column else None,
                "runs": [{k: run.get(k) for k in RUN_KEYS_SHOWN} for run in row["runs"]],
            }
        )
    return sorted(
        result, key=lambda p: max((r[Key.START_TIME] or "" for r in p["runs"]), default=""), reverse=True
    )


def expression_span(sql: str, column: str) -> dict[str, int] | None:
    """Character offsets ``{start, end}`` of the outermost SELECT's expression that produces ``column``.

    >>> sql = "INSERT INTO db.o SELECT a, sum(b) AS total FROM db.t GROUP BY a"
    >>> span = expression_span(sql, "total"); sql[span["start"]:span["end"]]
    'sum(b) AS total'
    """
    try:
        statement = parse_one(sql, dialect="hive")
        tokens = tokenize(sql, dialect="hive")
    except SqlglotError:
        return None
    select = statement if isinstance(statement, exp.Select) else statement.find(exp.Select)
    if select is None:
        return None
    names = [projection.alias_or_name.lower() for projection in select.expressions]
    if column.lower() not in names:
        return None
    spans = _projection_spans(tokens)
    index = names.index(column.lower())
    return spans[index] if index < len(spans) and len(spans) == len(names) else None


def _projection_spans(tokens: list[Any]) -> list[dict[str, int]]:
    """Offsets of each projection of the first SELECT outside parentheses, split at its top-level commas."""
    depth, spans, start, end, inside = 0, [], None, None, False
    for token in tokens:
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
        if depth == 0 and token.token_type == TokenType.SELECT and not inside:
            inside = True
            continue
        if not inside:
            continue
        if depth == 0 and token.token_type in (TokenType.FROM, TokenType.COMMA, TokenType.SEMICOLON):
            if start is not None:
                spans.append({"start": start, "end": end + 1})
            start = None
            if token.token_type != TokenType.COMMA:
                break
            continue
        if depth == 0 and token.token_type == TokenType.DISTINCT and start is None:
            continue
        start = token.start if start is None else start
        end = token.end
    else:
        if inside and start is not None:
            spans.append({"start": start, "end": end + 1})
    return spans


def _resource(g: LineageTraversalSource, vertex: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """The resource block of reading this table (all its columns) or this column, from the permission extractor."""
    if kind == VertexLabel.COLUMN:
        table, column = vertex[Key.QUALIFIED_NAME].rsplit(".", 1)
        columns = [column]
    elif kind == VertexLabel.TABLE:
        table = vertex[Key.QUALIFIED_NAME]
        columns = g.V(vertex[T.id]).columns_of().values(Key.NAME).to_list()
    else:
        return None
    if not columns:
        return None
    sql = f"SELECT {', '.join(f'`{c}`' for c in sorted(columns))} FROM {table}"
    try:
        return {"sql": sql, **extract_resource_blocks(sql).to_dict()}
    except LineageError as exc:
        return {"sql": sql, "error": str(exc)}


def impact_view(g: GraphTraversalSource, name: str, depth: int | None = None) -> dict[str, Any]:
    """Everything downstream of ``name`` grouped by layer (database, or the dataset kind), with jobs and owners."""
    report = run_impact(g, name, depth=depth).to_dict()
    layers: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry in report["impacted"]:
        layer = (
            entry["qualified_name"].split(".", 1)[0]
            if entry["kind"] in (VertexLabel.TABLE, VertexLabel.COLUMN)
            else entry["kind"]
        )
        layers[layer].append(entry)
    report["layers"] = [{"layer": layer, "datasets": entries} for layer, entries in layers.items()]
    return report


IMPACT_COLUMNS = ("hops", "kind", "qualified_name", "jobs", "users", "last_run")


def impact_csv(report: dict[str, Any]) -> str:
    """The impact report as CSV: one row per downstream dataset or column (jobs and users joined by ``;``)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["layer", *IMPACT_COLUMNS])
    for group in report["layers"]:
        for entry in group["datasets"]:
            values = [";".join(v) if isinstance(v, list) else v for v in (entry[c] for c in IMPACT_COLUMNS)]
            writer.writerow([group["layer"], *values])
    return out.getvalue()
