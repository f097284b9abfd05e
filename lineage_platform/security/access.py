"""One call from SQL text and a policy file to a decision, denying (with the reason) what cannot be traced."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lineage_platform.errors import SecurityError
from lineage_platform.security.policy import Decision, check_access, load_policy
from lineage_platform.security.resource_blocks import extract_resource_blocks


def decide(
    sql: str,
    user: str,
    policy_file: str | Path,
    *,
    schema: Mapping[str, Any] | None = None,
    dialect: str = "hive",
    default_db: str | None = None,
) -> Decision:
    """Allow or deny ``sql`` for ``user`` under the policy file; untraceable SQL is denied with the reason."""
    store = load_policy(policy_file)
    try:
        request = extract_resource_blocks(sql, schema, dialect, default_db)
    except SecurityError as error:
        return Decision(user, False, reason=str(error))
    return check_access(store, user, request)
