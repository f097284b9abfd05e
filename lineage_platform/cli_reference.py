"""The CLI reference (docs/cli.md), generated from the click command tree so it cannot drift from the code.

python -m lineage_platform.cli_reference docs/cli.md     # rewrite the page (`make docs`)
python -m lineage_platform.cli_reference                 # print it
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click

from lineage_platform.cli import cli
from lineage_platform.errors import LineageError

HELP_WIDTH = 100
HEADER = (
    "# CLI reference\n\n"
    "<!-- Generated from the click commands by `make docs` (python -m lineage_platform.cli_reference docs/cli.md).\n"
    "     Do not edit by hand: tests/test_docs.py fails when this page and the code disagree. -->\n\n"
    "Every option can also be set through the environment variable shown next to it (`LINEAGE_*`); an explicit\n"
    "option wins over the variable, the variable over the default. An option whose meaning differs between commands\n"
    "has one variable per command, named after the command path (`LINEAGE_NETFLOW_QUERY_ENGINE`,\n"
    "`LINEAGE_SQL_LINEAGE_FORMAT`, `LINEAGE_ORC_READ_OUTPUT`), so setting it for one command leaves the others alone.\n\n"
    "Results go to stdout, progress bars and logs to stderr, so `lineage … > file` or `| jq` gets the results only;\n"
    "piped or redirected, tables are printed at their full width (not cut at 80 columns; `COLUMNS` still wins).\n"
    "`-h` is `--help` on every command. A `ws://` graph server that cannot be reached is one error line naming the URL.\n\n"
    "A command that fails prints one line on stderr, `Error: what went wrong (what to do)`, and exits non-zero:\n"
    "2 for a bad option or argument, 1 for anything else, 130 on Ctrl-C. `LINEAGE_DEBUG=1` shows the traceback of\n"
    "an unexpected error instead (report those: they are bugs).\n"
)


@dataclass(frozen=True)
class CommandEntry:
    """One command of the tree with the context click would build for it."""

    path: tuple[str, ...]
    command: click.Command
    context: click.Context

    @property
    def title(self) -> str:
        """The command line that runs it, e.g. ``lineage graph serve``."""
        return " ".join(self.path)


def _context(command: click.Command, name: str, parent: click.Context | None) -> click.Context:
    settings = {**command.context_settings, "terminal_width": HELP_WIDTH, "max_content_width": HELP_WIDTH}
    return click.Context(
        command, info_name=name, parent=parent, **settings
    )  # as the CLI makes it (-h, --help)


def walk(command: click.Command = cli, name: str = "lineage") -> Iterator[CommandEntry]:
    """Every visible command under ``command``, depth first, groups before their subcommands, names sorted."""

    def visit(entry: CommandEntry) -> Iterator[CommandEntry]:
        yield entry
        if isinstance(entry.command, click.Group):
            for sub_name in entry.command.list_commands(entry.context):
                sub = entry.command.get_command(entry.context, sub_name)
                if sub is not None and not sub.hidden:
                    yield from visit(
                        CommandEntry((*entry.path, sub_name), sub, _context(sub, sub_name, entry.context))
                    )

    yield from visit(CommandEntry((name,), command, _context(command, name, None)))


ELLIPSES = frozenset({"…", "..."})


def find_command(words: list[str]) -> tuple[CommandEntry, list[str]]:
    """The deepest command named by the leading words of a ``lineage ...`` command line, and the words left over.

    Raises LineageError when the line does not start with ``lineage`` or names a subcommand that does not exist.
    """
    if not words or words[0] != "lineage":
        raise LineageError(
            f"not a lineage command line: {' '.join(words)!r}", hint="Start it with 'lineage'."
        )
    entries = {entry.path: entry for entry in walk()}
    path: tuple[str, ...] = ("lineage",)
    rest = words[1:]
    while (
        rest
        and not rest[0].startswith("-")
        and rest[0] not in ELLIPSES
        and isinstance(entries[path].command, click.Group)
    ):
        if (*path, rest[0]) not in entries:
            raise LineageError(
                f"'{' '.join(path)}' has no command {rest[0]!r}",
                hint=f"Run '{' '.join(path)} --help' to see its commands.",
            )
        path = (*path, rest[0])
        rest = rest[1:]
    return entries[path], rest


def check_command_line(words: list[str]) -> CommandEntry:
    """The command a ``lineage ...`` command line runs; LineageError when it or one of its options does not exist."""
    entry, rest = find_command(words)
    if isinstance(entry.command, click.Group) and rest[:1] and rest[0] in ELLIPSES:
        return entry  # `lineage graph …` names the group's commands as a whole
    if isinstance(entry.command, click.Group):
        raise LineageError(f"'{entry.title}' is a group, not a command", hint=f"Run '{entry.title} --help'.")
    known = {opt for param in entry.command.params for opt in (*param.opts, *param.secondary_opts)}
    unknown = sorted({word.split("=")[0] for word in rest if word.startswith("--")} - known)
    if unknown:
        raise LineageError(
            f"'{entry.title}' has no option {', '.join(unknown)}", hint=f"Run '{entry.title} --help'."
        )
    return entry


def command_lines(text: str) -> Iterator[list[str]]:
    """The ``lineage ...`` command lines written in documentation text, as words.

    Found in `backtick spans` and on lines (commented or not) that start with ``lineage``; a shell comment,
    pipe, ``&&`` or line continuation ends a command. Fenced ```text blocks hold program output and are skipped.
    """
    in_output = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_output = line.strip() == "```text" and not in_output
            continue
        if in_output:
            continue
        yield from (shlex.split(span) for span in re.findall(r"`(lineage [^`]+)`", line))
        shell = line.strip().lstrip("#").strip()
        if shell.startswith("lineage ") and "`" not in shell:
            yield shlex.split(re.split(r"\s(?:#|&&|\||;)\s|\s\\$", shell)[0])


def render() -> str:
    """The whole reference page as Markdown: a contents list, then each command's ``--help`` text."""
    entries = list(walk())
    contents = [f"- [`{e.title}`](#{e.title.replace(' ', '-')})" for e in entries[1:]]
    sections = [f"## {e.title}\n\n```text\n{e.command.get_help(e.context).rstrip()}\n```\n" for e in entries]
    return HEADER + "\n" + "\n".join(contents) + "\n\n" + "\n".join(sections)


def main(argv: list[str] | None = None) -> None:
    """Write the page to the path given as the only argument, or print it."""
    args = sys.argv[1:] if argv is None else argv
    page = render()
    if args:
        Path(args[0]).write_text(page, encoding="utf-8")
    else:
        sys.stdout.write(page)


if __name__ == "__main__":
    main()
