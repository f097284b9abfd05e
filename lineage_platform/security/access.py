"""One call from SQL text and a policy file to a decision or a masked query (what the CLI commands run).

Untraceable SQL is denied with the reason; masking never falls back to the original query.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lineage_platform.errors import SecurityError
from lineage_platform.security.masking import MaskedQuery, Mode, mask_query
from lineage_platform.security.masking_rules import masking_policy
from lineage_platform.security.policy import Decision, check_access, load_policy
from lineage_platform.security.resource_blocks import extract_resource_blocks


def decide(
    sql: str,
    user: str,
    policy_file: str | Path | None,
    *,
    schema: Mapping[str, Any] | None = None,
    dialect: str = "hive",
    default_db: str | None = None,
    graph_url: str | None = None,
) -> Decision:
    """Allow or deny ``sql`` for ``user`` under the policy file (None: the grants stored in the graph).

    Untraceable SQL is denied with the reason.
    """
    if policy_file is None:
        from lineage_platform.graph import connect
        from lineage_platform.security.policy_graph import load_policy_graph

        store = load_policy_graph(connect(graph_url))
    else:
        store = load_policy(policy_file)
    try:
        request = extract_resource_blocks(sql, schema, dialect, default_db)
    except SecurityError as error:
        return Decision(user, False, reason=str(error))
    return check_access(store, user, request)


def mask_for(
    sql: str,
    user: str,
    policy_file: str | Path | None,
    mode: Mode,
    *,
    schema: Mapping[str, Any] | None = None,
    dialect: str = "hive",
    default_db: str | None = None,
    graph_url: str | None = None,
) -> MaskedQuery:
    """``sql`` rewritten for ``user`` with the policy file's masking rules; label rules read the graph."""
    if policy_file is None:
        raise SecurityError("masking needs the masking rules of a policy file", hint="pass --policy FILE")
    store = load_policy(policy_file)
    policy = masking_policy(store.masking)
    graph = None
    if policy.label_rules:
        from lineage_platform.graph import connect

        graph = connect(graph_url)
    return mask_query(
        sql,
        store.principals_of(user),
        policy,
        mode,
        schema=schema,
        dialect=dialect,
        default_db=default_db,
        graph=graph,
    )
