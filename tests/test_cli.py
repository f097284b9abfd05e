"""The command tree, walked: every command documented, every option helped and set by a prefixed env var."""

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


ACTIONS = {"version", "print_janusgraph", "add_user"}
"""Options that make a command do something else and exit (print the version, the JanusGraph script, add a
server user): set from the environment they would silently replace the command's work, so they have no env var."""


def test_every_option_has_an_env_var_shown_in_the_help() -> None:
    without = [
        f"lineage {' '.join(path)} {param.opts[0]}"
        for path, command in _walk(cli)
        for param in command.params
        if isinstance(param, click.Option)
        and param.name not in ACTIONS
        and not (param.envvar and param.show_envvar)
    ]
    assert without == []
    actions = {
        p.name for _, c in _walk(cli) for p in c.params if isinstance(p, click.Option) and not p.envvar
    }
    assert actions == ACTIONS  # an action renamed or removed leaves this list


def test_invoke_turns_failures_into_values() -> None:
    result = invoke(["no-such-command"])
    assert not result.success
    assert result.exception is not None
