"""The command tree, walked: every command documented, every option helped, every env var prefixed."""

from __future__ import annotations

import click
from click.testing import CliRunner

from lineage_platform.cli import GROUPS, cli, invoke


def _walk(command: click.Command, path: tuple[str, ...] = ()):
    yield path, command
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            yield from _walk(command.get_command(ctx, name), (*path, name))


def test_help_lists_every_command_group() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for name in GROUPS:
        assert name in result.output


def test_every_command_has_a_docstring_and_every_option_help_and_prefixed_env_var() -> None:
    for path, command in _walk(cli):
        assert command.help, f"`lineage {' '.join(path)}` has no docstring"
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden and param.name not in ("help", "version"):
                assert param.help, f"option {param.opts} of `lineage {' '.join(path)}` has no help"
                if param.envvar:
                    assert str(param.envvar).startswith("LINEAGE_"), f"{param.opts} env var {param.envvar}"


def test_invoke_turns_failures_into_values() -> None:
    result = invoke(["no-such-command"])
    assert not result.success
    assert result.exception is not None
