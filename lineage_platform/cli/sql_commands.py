"""`lineage sql …`: SQL lineage extraction from Hive/Spark SQL scripts."""

from __future__ import annotations

import json
from typing import TextIO

import click

from lineage_platform.cli import params as p
from lineage_platform.errors import SqlError


@click.group()
def sql() -> None:
    """Extract lineage from SQL text."""


@sql.command()
@click.argument("file", type=click.File("r", encoding="utf-8"), default="-")
@p.dialect
@p.schema_file
@p.output_format("sql lineage", ["text", "json"], "text", "Output: readable text or JSON records.")
@p.default_db
@p.udf_rules
@p.option(
    "--var",
    "variables",
    multiple=True,
    metavar="NAME=VALUE",
    help="Value of a ${NAME} variable, also of {{ NAME }} and, in Hive / Spark, of $NAME and #{NAME} (repeatable).",
)
def lineage(
    file: TextIO,
    dialect: str,
    schema_file: str | None,
    output_format: str,
    default_db: str | None,
    udf_rules_file: str | None,
    variables: tuple[str, ...],
) -> list:
    """Print the lineage records of every statement in FILE (default: standard input)."""
    from lineage_platform.sql import extract_lineage, load_function_rules
    from lineage_platform.sql.schema_file import load_schema
    from lineage_platform.sql.text_report import format_text

    schema = load_schema(schema_file) if schema_file else None
    rules = load_function_rules(udf_rules_file) if udf_rules_file else None
    records = extract_lineage(
        file.read(), schema, dialect, default_db, _parse_variables(variables), function_rules=rules
    )
    if output_format == "json":
        click.echo(json.dumps([r.to_dict() for r in records], indent=2))
    else:
        click.echo(format_text(records))
    return records


def _parse_variables(pairs: tuple[str, ...]) -> dict[str, str]:
    variables = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise SqlError(f"--var {pair!r} is not NAME=VALUE", hint="write e.g. --var bizdate=2024-01-01")
        variables[name] = value
    return variables
