"""Grants to users and roles on databases, tables, columns and row blocks; checking a request against them.

Policy file (YAML)::

    roles:
      analyst: [alice, bob]             # role -> members
    grants:
      - to: role:analyst                # or user:alice
        database: sales                 # required
        table: orders                   # optional: every table of the database
        columns: [id, amount, region]   # optional: every column
        rows: "region = 'EU'"           # optional: every row; ANDed simple conditions
    masking:                            # read by lineage_platform.security.masking_rules
      ...

A resource block is covered when, for each of its columns (predicate columns included), one grant of the
user or one of their roles names the table (or its whole database) and that column (or all columns), with
a row restriction the block's predicates imply. Anything else is denied, naming what to request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from lineage_platform.errors import SecurityError
from lineage_platform.model import Predicate
from lineage_platform.security.predicates import implies_all
from lineage_platform.security.resource_blocks import (
    AccessRequest,
    ResourceBlock,
    describe_rows,
    extract_resource_blocks,
)

_POLICY_HINT = "see `lineage perms --help` for the policy file format"


@dataclass(frozen=True)
class Grant:
    """SELECT on a database, a table, some columns and optionally only rows matching ``rows`` (ANDed)."""

    principal: str  # user:NAME or role:NAME
    database: str
    table: str | None = None
    columns: frozenset[str] | None = None
    rows: tuple[Predicate, ...] = ()

    def covers(self, block: ResourceBlock, column: str | None) -> bool:
        """Whether this grant lets its holder read ``column`` (None: any column) of the rows of ``block``."""
        database, _, table = block.table.rpartition(".")
        return (
            self.database == database
            and self.table in (None, table)
            and (column is None or self.columns is None or column in self.columns)
            and implies_all(block.predicates, self.rows)
        )


@dataclass(frozen=True)
class MissingGrant:
    """Columns of one block no grant covers, and the grant to request."""

    table: str
    columns: tuple[str, ...]
    rows: str

    @property
    def request(self) -> str:
        """What to ask the data owner for, in words."""
        where = "" if self.rows == "all rows" else f" WHERE {self.rows}"
        columns = f" ({', '.join(self.columns)})" if self.columns else ""
        return f"SELECT{columns} ON {self.table}{where}"

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "table": self.table,
            "columns": list(self.columns),
            "rows": self.rows,
            "request": self.request,
        }


@dataclass(frozen=True)
class Decision:
    """The outcome of a check: allowed, or denied with the reason and the missing grants."""

    user: str
    allowed: bool
    missing: tuple[MissingGrant, ...] = ()
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "user": self.user,
            "decision": "allow" if self.allowed else "deny",
            "reason": self.reason,
            "missing": [m.to_dict() for m in self.missing],
        }


@dataclass
class PolicyStore:
    """Roles and grants, loaded from a policy file or built in code."""

    grants: list[Grant] = field(default_factory=list)
    roles: dict[str, set[str]] = field(default_factory=dict)
    masking: dict[str, Any] = field(default_factory=dict)

    def principals_of(self, user: str) -> set[str]:
        """``user:NAME`` plus ``role:R`` for every role the user belongs to."""
        return {f"user:{user}"} | {f"role:{role}" for role, members in self.roles.items() if user in members}

    def grants_of(self, user: str) -> list[Grant]:
        """Grants held by the user directly or through roles."""
        principals = self.principals_of(user)
        return [g for g in self.grants if g.principal in principals]


def check_access(store: PolicyStore, user: str, request: AccessRequest) -> Decision:
    """Allow when every column of every block is covered by a grant of ``user``; else name what is missing.

    >>> from lineage_platform.security.resource_blocks import extract_resource_blocks
    >>> store = PolicyStore([Grant("user:ann", "db", "t", frozenset({"a", "r"}), ())])
    >>> check_access(store, "ann", extract_resource_blocks("SELECT a FROM db.t WHERE r = 1")).allowed
    True
    >>> check_access(store, "ann", extract_resource_blocks("SELECT a, b FROM db.t")).missing[0].request
    'SELECT (b) ON db.t'
    """
    grants = store.grants_of(user)
    missing: list[MissingGrant] = []
    for block in request.blocks:
        # a block without columns (``count(*)``) needs some grant on those rows of the table
        needed: tuple[str | None, ...] = block.covered_columns or (None,)
        uncovered = [c for c in needed if not any(g.covers(block, c) for g in grants)]
        if uncovered:
            columns = tuple(c for c in uncovered if c is not None)
            missing.append(MissingGrant(block.table, columns, describe_rows(block.predicates)))
    if not missing:
        return Decision(user, True, reason="every resource block is covered by a grant")
    return Decision(user, False, tuple(missing), reason=f"{len(missing)} resource block(s) not covered")


def load_policy(path: str | Path) -> PolicyStore:
    """Read a policy file; a malformed one raises :class:`SecurityError` naming the entry."""
    try:
        raw = yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError) as error:
        raise SecurityError(f"cannot read policy file {path}: {error}", hint=_POLICY_HINT) from error
    if not isinstance(raw, dict):
        raise SecurityError(
            f"policy file {path} must be a mapping with roles/grants/masking", hint=_POLICY_HINT
        )
    roles = {str(role): {str(m) for m in members or []} for role, members in (raw.get("roles") or {}).items()}
    grants = [_grant(entry, f"{path}: grants[{n}]") for n, entry in enumerate(raw.get("grants") or [])]
    return PolicyStore(grants, roles, raw.get("masking") or {})


def _grant(entry: Any, where: str) -> Grant:
    if not isinstance(entry, dict) or "to" not in entry or "database" not in entry:
        raise SecurityError(f"{where}: a grant needs `to` and `database`", hint=_POLICY_HINT)
    principal = str(entry["to"])
    if not principal.startswith(("user:", "role:")):
        raise SecurityError(f"{where}: `to: {principal}` must start with user: or role:", hint=_POLICY_HINT)
    columns = entry.get("columns")
    return Grant(
        principal,
        str(entry["database"]).lower(),
        str(entry["table"]).lower() if entry.get("table") else None,
        frozenset(str(c).lower() for c in columns) if columns is not None else None,
        parse_rows(entry.get("rows"), where),
    )


def parse_rows(text: str | None, where: str = "rows") -> tuple[Predicate, ...]:
    """``"region = 'EU' AND age >= 18"`` as predicates; anything but ANDed ``column op constant`` is refused."""
    if not text:
        return ()
    try:
        request = extract_resource_blocks(f"SELECT 1 FROM grant_db.grant_table WHERE {text}")
    except SecurityError as error:
        raise SecurityError(f"{where}: bad row condition {text!r}: {error}", hint=_POLICY_HINT) from error
    [block] = request.blocks
    if block.columns:
        raise SecurityError(
            f"{where}: row condition {text!r} must be ANDed `column op constant` tests",
            hint="use =, !=, <, <=, >, >=, IN (...), BETWEEN, LIKE, IS [NOT] NULL with constants",
        )
    return tuple(Predicate("", p.column, p.op, p.value) for p in block.predicates)
