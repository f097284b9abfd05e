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
    from lineage_platform.security.access import mask_for
    from lineage_platform.sql.schema_file import load_schema

    schema = load_schema(schema_file) if schema_file else None
    masked = mask_for(
        sql,
        user,
        policy_file,
        mode,
        schema=schema,
        dialect=dialect,
        default_db=default_db,
        graph_url=graph_url,
    )
    click.echo(masked.sql)
