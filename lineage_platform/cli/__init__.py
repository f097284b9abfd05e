"""`lineage` command line: a thin layer over the library. Each command group lives in its own module."""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from typing import Any

import click

from lineage_platform.errors import LineageError

# command name -> module under lineage_platform.cli that defines a click object named like the command
GROUPS: dict[str, str] = {
    "cdc": "cdc_commands",
    "collect": "collect_commands",
    "export": "export_commands",
    "demo": "demo_commands",
    "graph": "graph_commands",
    "ingest": "ingest_commands",
    "gremlin": "gremlin_commands",
    "sql": "sql_commands",
    "impact": "trace_commands",
    "labels": "labels_commands",
    "trace": "trace_commands",
    "ttl": "ttl_commands",
    "netflow": "netflow_commands",
    "perms": "perms_commands",
    "mask": "mask_commands",
    "orc": "orc_commands",
}


class LazyGroup(click.Group):
    """Loads command modules on demand so `lineage --help` stays fast."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(GROUPS))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in GROUPS:
            module = importlib.import_module(f"lineage_platform.cli.{GROUPS[name]}")
            return getattr(module, name.replace("-", "_"))
        return super().get_command(ctx, name)


@click.group(cls=LazyGroup)
@click.version_option(package_name="lineage-platform")
def cli() -> None:
    """Data lineage for Hive/Spark warehouses, kept in a property graph."""


@dataclass
class Result:
    """What `invoke` returns: success, the exception if any, and the command's return value."""

    success: bool
    exception: BaseException | None = None
    result: Any = None


def invoke(args: list[str]) -> Result:
    """Run the CLI as a library call; click exits become values."""
    try:
        value = cli.main(args=args, standalone_mode=False)
        return Result(True, None, value)
    except click.exceptions.Exit as exc:
        return Result(exc.exit_code == 0, None if exc.exit_code == 0 else exc)
    except (click.ClickException, LineageError) as exc:
        return Result(False, exc)


def main() -> None:
    """Console entry point: platform errors become one readable line and exit code 1."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except LineageError as exc:
        click.secho(f"Error: {exc}", fg="red", err=True)
        sys.exit(1)
