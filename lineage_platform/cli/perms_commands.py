"""`lineage perms …`: the resource blocks a statement reads, and checking them against a policy file."""

from __future__ import annotations

import json

import click

from lineage_platform.cli import params as p
from lineage_platform.errors import SecurityError


@click.group()
def perms() -> None:
    """Fine-grained permissions: resource blocks (columns x row predicates) per base table.

    A policy file looks like:

    \b
      roles:
        analyst: [alice, bob]
      grants:
        - to: role:analyst
          database: sales
          table: orders            # optional: the whole database
          columns: [id, amount]    # optional: every column
          rows: "region = 'EU'"    # optional: every row
    """


@perms.command()
@click.argument("sql")
@p.schema_file
@p.dialect
@p.default_db
def extract(sql: str, schema_file: str | None, dialect: str, default_db: str | None) -> None:
    """Print the resource blocks SQL reads as JSON; untraceable SQL is an error (fail closed)."""
    from lineage_platform.security.resource_blocks import extract_resource_blocks
    from lineage_platform.sql.schema_file import load_schema

    schema = load_schema(schema_file) if schema_file else None
    request = extract_resource_blocks(sql, schema, dialect, default_db)
    click.echo(json.dumps(request.to_dict(), indent=2))


@perms.command()
@click.argument("sql")
@p.user
@p.policy_file
@p.schema_file
@p.dialect
@p.default_db
@p.graph_url
def check(
    sql: str,
    user: str,
    policy_file: str | None,
    schema_file: str | None,
    dialect: str,
    default_db: str | None,
    graph_url: str | None,
) -> None:
    """Allow or deny SQL for --user (grants: --policy FILE, else the graph); exit code 1 when denied."""
    from lineage_platform.security.access import decide
    from lineage_platform.sql.schema_file import load_schema

    schema = load_schema(schema_file) if schema_file else None
    decision = decide(
        sql, user, policy_file, schema=schema, dialect=dialect, default_db=default_db, graph_url=graph_url
    )
    click.echo(json.dumps(decision.to_dict(), indent=2))
    if not decision.allowed:
        hint = "request the grants listed above" if decision.missing else None
        raise SecurityError(f"{user} may not run this statement: {decision.reason}", hint=hint)


@perms.command("import-policy")
@click.argument("policy", type=click.Path(exists=True, dir_okay=False))
@p.graph_url
def import_policy(policy: str, graph_url: str | None) -> None:
    """Store a policy file's roles and grants in the graph (upserts: importing twice changes nothing)."""
    from lineage_platform.graph import connect
    from lineage_platform.security.policy import load_policy
    from lineage_platform.security.policy_graph import save_policy

    store = load_policy(policy)
    written = save_policy(connect(graph_url), store)
    click.echo(f"stored {written} grants and {len(store.roles)} roles in the graph")
