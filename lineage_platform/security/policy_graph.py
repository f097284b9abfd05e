"""The policy store in the graph: principals (users, roles), memberships and grants.

``principal`` vertices (``user:NAME`` / ``role:NAME``) ``-memberOf->`` roles and ``-holds->`` ``grant`` vertices
(database, table, columns, rows). Grants do not need the granted table to have lineage in the graph yet.
"""

from __future__ import annotations

import hashlib
import json

from gremlin_python.process.graph_traversal import GraphTraversalSource
from gremlin_python.process.traversal import Direction, Merge, T

from lineage_platform.graph.dsl import __, lineage_source
from lineage_platform.graph.outbox import change_set, record_state
from lineage_platform.graph.vocabulary import EdgeLabel, Key, VertexLabel
from lineage_platform.security.policy import Grant, PolicyStore, parse_rows
from lineage_platform.security.resource_blocks import describe_rows


def _grant_fields(grant: Grant) -> dict[str, str]:
    return {
        Key.GRANT_DATABASE: grant.database,
        Key.GRANT_TABLE: grant.table or "",
        Key.GRANT_COLUMNS: json.dumps(sorted(grant.columns)) if grant.columns is not None else "",
        Key.GRANT_ROWS: describe_rows(grant.rows) if grant.rows else "",
    }


def save_policy(g: GraphTraversalSource, store: PolicyStore) -> int:
    """Upsert the store's principals, role memberships and grants; returns the number of grants written."""
    with change_set(g) as (source, ops):
        return _save(source, store, ops)


def _save(g: GraphTraversalSource, store: PolicyStore, ops: list[tuple] | None) -> int:
    principals = {g.principal for g in store.grants} | {f"role:{role}" for role in store.roles}
    principals |= {f"user:{member}" for members in store.roles.values() for member in members}
    ids = _upsert(
        g, VertexLabel.PRINCIPAL, {name: {Key.NAME: name.split(":", 1)[1]} for name in principals}, ops
    )
    grants = {}
    for grant in store.grants:
        fields = _grant_fields(grant)
        key = hashlib.sha1(json.dumps([grant.principal, fields], sort_keys=True).encode()).hexdigest()[:20]
        grants[f"grant:{key}"] = (grant.principal, fields)
    grant_ids = _upsert(
        g, VertexLabel.GRANT, {name: {Key.NAME: name, **fields} for name, (_, fields) in grants.items()}, ops
    )
    edges = [
        (ids[f"user:{m}"], ids[f"role:{r}"], EdgeLabel.MEMBER_OF)
        for r, members in store.roles.items()
        for m in members
    ]
    edges += [(ids[principal], grant_ids[name], EdgeLabel.HOLDS) for name, (principal, _) in grants.items()]
    if edges:
        rows = [{T.label: label, Direction.OUT: out, Direction.IN: in_} for out, in_, label in edges]
        record_state(g, ops, edges=g.inject(*rows).merge_e().id_().to_list())
    return len(grants)


def _upsert(
    g: GraphTraversalSource, label: str, vertices: dict[str, dict[str, str]], ops: list[tuple] | None
) -> dict[str, object]:
    if not vertices:
        return {}
    names = sorted(vertices)
    rows = [
        {"match": {T.label: label, Key.QUALIFIED_NAME: n}, "create": {Key.TYPE_NAME: label, **vertices[n]}}
        for n in names
    ]
    created = (
        g.inject(*rows)
        .merge_v(__.select("match"))
        .option(Merge.on_create, __.select("create"))
        .id_()
        .to_list()
    )
    record_state(g, ops, vertices=created)
    return dict(zip(names, created))


def load_policy_graph(g: GraphTraversalSource) -> PolicyStore:
    """The roles and grants stored in the graph (masking rules live in policy files only)."""
    g = lineage_source(g)
    roles: dict[str, set[str]] = {}
    memberships = (
        g.principals()
        .out_e(EdgeLabel.MEMBER_OF)
        .project("user", "role")
        .by(__.out_v().values(Key.NAME))
        .by(__.in_v().values(Key.NAME))
        .to_list()
    )
    for row in memberships:
        roles.setdefault(row["role"], set()).add(row["user"])
    held = (
        g.principals()
        .as_("p")
        .out(EdgeLabel.HOLDS)
        .project("principal", "grant")
        .by(__.select("p").qualified_name())
        .by(__.value_map(Key.GRANT_DATABASE, Key.GRANT_TABLE, Key.GRANT_COLUMNS, Key.GRANT_ROWS))
        .to_list()
    )
    grants = []
    for row in held:
        fields = {k: v[0] for k, v in row["grant"].items()}
        columns = fields.get(Key.GRANT_COLUMNS, "")
        grants.append(
            Grant(
                row["principal"],
                fields[Key.GRANT_DATABASE],
                fields.get(Key.GRANT_TABLE) or None,
                frozenset(json.loads(columns)) if columns else None,
                parse_rows(fields.get(Key.GRANT_ROWS) or None, f"grant of {row['principal']}"),
            )
        )
    for role in {g.principal.split(":", 1)[1] for g in grants if g.principal.startswith("role:")}:
        roles.setdefault(role, set())
    return PolicyStore(sorted(grants, key=repr), roles)
