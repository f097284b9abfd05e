"""Every CLI option defined once. Each option's env var is ``LINEAGE_`` + its name in upper snake case; an option
whose meaning differs between commands (``--engine``, ``--format``, ``--output``) is named per command instead:
``LINEAGE_`` + command path + name, e.g. ``LINEAGE_NETFLOW_QUERY_ENGINE``."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from typing import Any

import click

from lineage_platform.config import ENV_PREFIX


def env_var(long_name: str, command: str | None = None) -> str:
    """The env var of option ``--long-name``, namespaced by ``command`` (e.g. "netflow query") when given.

    >>> env_var("--batch-size"), env_var("--engine", "netflow query")
    ('LINEAGE_BATCH_SIZE', 'LINEAGE_NETFLOW_QUERY_ENGINE')
    """
    words = [*(command.split() if command else []), long_name[2:].split("/")[0]]
    return ENV_PREFIX + "_".join(words).replace("-", "_").upper()


def option(*decls: str, command: str | None = None, **kwargs: Any):
    """A click option whose environment variable is its long name with the LINEAGE_ prefix; ``command`` (its path
    under ``lineage``) namespaces the variable, for options whose meaning differs between commands."""
    long = next(d for d in decls if d.startswith("--"))
    kwargs.setdefault("envvar", env_var(long, command))
    kwargs.setdefault("show_envvar", True)
    return click.option(*decls, **kwargs)


as_of = option(
    "--as-of",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    default=None,
    help="Day the retention counts back from, YYYY-MM-DD (default: today, UTC).",
)
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


keep_days = option(
    "--keep-days",
    type=click.IntRange(min=0),
    default=30,
    show_default=True,
    help="Days of runs kept in full; older runs are rolled up into one vertex per process and day.",
)
keep_day_rollups = option(
    "--keep-day-rollups",
    type=click.IntRange(min=0),
    default=None,
    help="Days of day roll-ups kept (at least --keep-days); older ones, and runs of those days, are rolled up "
    "into one vertex per process and month. Default: day roll-ups are kept.",
)
graph_url = option(
    "--graph",
    "graph_url",
    envvar=ENV_PREFIX + "GRAPH_URL",
    default=None,
    help="Graph to use: embedded:PATH (default ~/.lineage/graph) or ws://host:port/gremlin.",
)


class OptionChoice(click.Choice):
    """A choice whose error spells out each accepted option, e.g. "use --format text or --format json"."""

    def __init__(self, option_name: str, choices: list[str]) -> None:
        super().__init__(choices)
        self.option_name = option_name

    def get_invalid_choice_message(self, value: Any, ctx: click.Context | None) -> str:
        spelled = [f"{self.option_name} {choice}" for choice in self.choices]
        listed = f"{', '.join(spelled[:-1])} or {spelled[-1]}" if len(spelled) > 1 else spelled[0]
        return f"{value!r} is not a {self.option_name}: use {listed}"


def output_format(command: str, choices: list[str], default: str, help: str):
    """``--format``: the choices differ per command, so its env var does too (``LINEAGE_SQL_LINEAGE_FORMAT``)."""
    return option(
        "--format",
        "output_format",
        command=command,
        type=OptionChoice("--format", choices),
        default=default,
        show_default=True,
        help=help,
    )


def one_of_flags(command: str, dest: str, flags: list[tuple[str, str, str]], default: str) -> Callable:
    """Flags that each set ``dest`` to one value (``--up``/``--down``/``--both``), all read from one env var
    named after ``dest`` (``LINEAGE_TRACE_DIRECTION=down``); ``flags`` are (flag, value, help). An env value that
    is none of the values is a usage error, not a silent default."""
    envvar = env_var(f"--{dest}", command)
    values = [value for _, value, _ in flags]

    def check(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        raw = os.environ.get(envvar)
        if raw and raw not in values:
            raise click.BadParameter(f"{envvar}={raw!r} is none of {', '.join(values)}", ctx, param)
        return value

    def decorate(function: Callable) -> Callable:
        for flag, value, text in reversed(flags):
            chosen = {"default": True} if value == default else {}
            function = option(
                flag, dest, envvar=envvar, flag_value=value, callback=check, help=text, **chosen
            )(function)
        return function

    return decorate


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
