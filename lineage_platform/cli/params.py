"""Every CLI option defined once. Each option's env var is ``LINEAGE_`` + its name in upper snake case."""

from __future__ import annotations

import socket
from typing import Any

import click

from lineage_platform.config import ENV_PREFIX


def option(*decls: str, **kwargs: Any):
    """A click option whose environment variable is derived from its long name with the LINEAGE_ prefix."""
    long = next(d for d in decls if d.startswith("--"))
    kwargs.setdefault("envvar", ENV_PREFIX + long[2:].split("/")[0].replace("-", "_").upper())
    kwargs.setdefault("show_envvar", True)
    return click.option(*decls, **kwargs)


batch_size = option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=500,
    show_default=True,
    help="Elements written per commit.",
)
depth = option(
    "--depth", type=click.IntRange(min=1), default=None, help="Maximum hops to follow (default: no limit)."
)
dialect = option("--dialect", default="hive", show_default=True, help="SQL dialect (hive, spark, ...).")
default_db = option("--default-db", default=None, help="Database of unqualified table names.")


class Host(click.ParamType):
    """A host name or IP address this machine can resolve (checked when the option is read)."""

    name = "host"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        """``value`` when it resolves, else a usage error saying so."""
        try:
            socket.getaddrinfo(str(value), None)
        except (socket.gaierror, UnicodeError) as exc:
            self.fail(f"{value!r} is not a host name or IP address that resolves ({exc})", param, ctx)
        return str(value)


graph_url = option(
    "--graph",
    "graph_url",
    envvar=ENV_PREFIX + "GRAPH_URL",
    default=None,
    help="Graph to use: embedded:PATH (default ~/.lineage/graph) or ws://host:port/gremlin.",
)
output_format = option("--format", "output_format", default="text", help="Output format.")
policy_file = option(
    "--policy",
    "policy_file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Policy file (YAML): roles, grants and masking rules (perms check: default the grants in the graph).",
)
schema_file = option(
    "--schema",
    "schema_file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Table schemas: JSON or YAML {db: {table: {column: type}}}.",
)


def selects(default: bool):
    """``--selects/--no-selects``: whether plain SELECTs (read-only consumers) are followed; the default differs
    per command."""
    return option(
        "--selects/--no-selects",
        "include_selects",
        default=default,
        show_default=True,
        help="Follow plain SELECTs (reports, exports, ad-hoc queries) to their temporary results.",
    )


store = option("--store", type=click.Path(file_okay=False), default=None, help="Embedded store directory.")
udf_rules = option(
    "--udf-rules",
    "udf_rules_file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Lineage rules of your UDFs (YAML or JSON: functions: {name: {flow_args, condition_args, aggregate, "
    "masking, key_arg}}).",
)
user = option("--user", required=True, help="The user the statement runs as.")
