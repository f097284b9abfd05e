"""`lineage mask`: rewrite a query so that a user sees sensitive columns only masked."""

from __future__ import annotations

import click

from lineage_platform.cli import params as p


@click.command()
@click.argument("sql")
@p.user
@p.policy_file
@p.option(
    "--mode",
    envvar="LINEAGE_MASK_MODE",
    type=click.Choice(["before", "after"]),
    default="after",
    show_default=True,
    help="before: mask at the scan (nothing computes on plaintext); after: mask only outputs fed by "
    "sensitive columns, at the outermost projection.",
)
@p.schema_file
@p.dialect
@p.default_db
@p.graph_url
def mask(
    sql: str,
    user: str,
    policy_file: str,
    mode: str,
    schema_file: str | None,
    dialect: str,
    default_db: str | None,
    graph_url: str | None,
) -> None:
    """Print SQL rewritten with the masking rules of --policy for --user (labels come from the graph)."""
    from lineage_platform.security.masking import mask_query
    from lineage_platform.security.masking_rules import masking_policy
    from lineage_platform.security.policy import load_policy
    from lineage_platform.sql.schema_file import load_schema

    store = load_policy(policy_file)
    policy = masking_policy(store.masking)
    graph = None
    if policy.label_rules:
        from lineage_platform.graph import connect

        graph = connect(graph_url)
    schema = load_schema(schema_file) if schema_file else None
    masked = mask_query(
        sql, user, store.principals_of(user), policy, mode, schema=schema, dialect=dialect,
        default_db=default_db, graph=graph,
    )  # fmt: skip
    click.echo(masked.sql)
