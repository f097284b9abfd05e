"""`lineage` command line: a thin layer over the library. Each command group lives in its own module."""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from typing import Any

import click

from lineage_platform.config import ENV_PREFIX
from lineage_platform.errors import as_lineage_error

DEBUG_ENV = ENV_PREFIX + "DEBUG"

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
    "ui": "ui_commands",
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


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
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
    """Run the CLI as a library call; click exits become values, other failures :func:`as_lineage_error`."""
    try:
        value = cli.main(args=args, standalone_mode=False)
        return Result(True, None, value)
    except click.exceptions.Exit as exc:
        return Result(exc.exit_code == 0, None if exc.exit_code == 0 else exc)
    except click.ClickException as exc:
        return Result(False, exc)
    except Exception as exc:
        return Result(False, as_lineage_error(exc))


def one_line(text: str) -> str:
    """``text`` with its line breaks and runs of blanks collapsed, so an error is one line of output."""
    return " ".join(text.split())


def _usage_message(exc: click.UsageError) -> str:
    command = exc.ctx.command_path if exc.ctx is not None else "lineage"
    return f"Error: {one_line(exc.format_message())} (see '{command} --help')"


def main(args: list[str] | None = None) -> None:
    """Console entry point (``args`` default: the command line): every failure becomes one readable line and
    a non-zero exit code. Usage errors exit 2, platform and other errors 1, Ctrl-C 130; ``LINEAGE_DEBUG=1``
    shows the traceback of an unexpected error instead."""
    try:
        cli.main(args=args, standalone_mode=False)
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.UsageError as exc:
        click.echo(_usage_message(exc), err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        click.echo(f"Error: {one_line(exc.format_message())}", err=True)
        sys.exit(exc.exit_code)
    except Exception as exc:
        error = as_lineage_error(exc)
        if error is not exc and os.environ.get(DEBUG_ENV):
            raise
        click.secho(f"Error: {one_line(str(error))}", fg="red", err=True)
        sys.exit(1)
