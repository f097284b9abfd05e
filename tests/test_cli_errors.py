"""Every command of the click tree, given bad arguments, fails with ONE line saying what to do: never a traceback.

The walk builds each command's arguments from its declared parameters: every path a binary file, a path under a
regular file (missing, and impossible to create even as root), a negative, zero or non-numeric number, and
every graph an unreachable ``ws://`` URL on a closed loopback port. It runs the console entry point in process.
"""

from __future__ import annotations

import os
import signal
import socket
from pathlib import Path
from types import FrameType

import click
import pytest

from lineage_platform.cli import main
from lineage_platform.cli_reference import walk

SECONDS_PER_RUN = 60
NUMBERS_THAT_MAY_BE_NEGATIVE = {"seed"}
SIZES = ("size", "batch", "every", "max", "records", "ranges", "workers", "fanout", "limit", "depth")


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


LEAVES = {entry.path[1:]: entry.command for entry in walk() if not isinstance(entry.command, click.Group)}


@pytest.fixture(scope="module")
def bad(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The hostile values: a binary file, a missing path, an unreachable graph, a closed Kafka port."""
    root = tmp_path_factory.mktemp("hostile")
    binary = root / "binary.bin"
    binary.write_bytes(bytes(range(256)) * 16 + b"\xff\xfe\x00garbage\xc3\x28")
    return {
        "binary": str(binary),
        "missing": str(binary / "missing" / "file.json"),
        "graph": f"ws://127.0.0.1:{_closed_port()}/gremlin",
        "kafka": f"127.0.0.1:{_closed_port()}",
        "work": str(root / "work"),
    }


def _is_path(param: click.Parameter) -> bool:
    return isinstance(param.type, click.Path | click.File)


def _value(param: click.Parameter, path: str, bad: dict[str, str]) -> str:
    if _is_path(param):
        return path
    if param.name == "graph_url":
        return bad["graph"]
    if param.name == "bootstrap_servers":
        return bad["kafka"]
    if isinstance(param.type, click.Choice):
        return str(param.type.choices[0])
    if isinstance(param.type, click.types.IntParamType | click.types.FloatParamType):
        return "1"
    return "x"


def _arguments(command: click.Command, path: str, bad: dict[str, str], **override: str) -> list[str]:
    """Arguments for every required parameter, every path parameter and the graph, with ``override`` by name."""
    options: list[str] = []
    positional: list[str] = []
    for param in command.params:
        wanted = param.required or _is_path(param) or param.name in ("graph_url", "bootstrap_servers")
        if param.name not in override and not wanted:
            continue
        value = override.get(param.name or "", _value(param, path, bad))
        if isinstance(param, click.Argument):
            positional.append(value)
        elif isinstance(param, click.Option) and not param.is_flag:
            options += [param.opts[0], value]
    return [*options, *positional]


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of the console entry point run on ``args``."""

    def stop(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError(f"lineage {' '.join(args)} ran longer than {SECONDS_PER_RUN} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(SECONDS_PER_RUN)
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _assert_one_line_error(args: list[str], code: int, out: str, err: str) -> None:
    """Failed, no traceback anywhere, and the error output is one line (progress may precede it on stdout)."""
    shown = f"lineage {' '.join(args)}:\n{out}{err}"
    lines = [line for line in err.splitlines() if line.strip()]
    assert code != 0, shown
    assert "Traceback" not in out + err, shown
    assert len(lines) == 1 and lines[0].startswith("Error: "), shown


KEPT_ENV = ("LINEAGE_HOME",)


@pytest.fixture(autouse=True)
def _environment(bad: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the hostile settings: no LINEAGE_* variable of the shell (an option default, a password) leaks in."""
    for name in list(os.environ):
        if name.startswith("LINEAGE_") and name not in KEPT_ENV:
            monkeypatch.delenv(name)
    monkeypatch.setenv("LINEAGE_GRAPH_URL", bad["graph"])
    monkeypatch.setenv("LINEAGE_KAFKA_BOOTSTRAP", bad["kafka"])
    monkeypatch.setenv("LINEAGE_WORK_DIR", bad["work"])


STARTS_SPARK_FIRST = {
    ("orc", "encrypt-table")
}  # its arguments are all names: it fails at the graph, after Spark


@pytest.mark.parametrize("kind", ["binary", "missing"])
@pytest.mark.parametrize(
    "path",
    [
        pytest.param(path, marks=[pytest.mark.slow] if path in STARTS_SPARK_FIRST else [])
        for path in sorted(LEAVES)
    ],
    ids=" ".join,
)
def test_bad_paths_and_an_unreachable_graph_give_one_line(
    path: tuple[str, ...], kind: str, bad: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    args = [*path, *_arguments(LEAVES[path], bad[kind], bad)]
    _assert_one_line_error(args, *_run(args, capsys))


NUMERIC = sorted(
    (path, param.name)
    for path, command in LEAVES.items()
    for param in command.params
    if isinstance(param, click.Option)
    and isinstance(param.type, click.types.IntParamType | click.types.FloatParamType)
    and param.name
)


@pytest.mark.parametrize(
    ("path", "name"), NUMERIC, ids=lambda item: " ".join(item) if isinstance(item, tuple) else item
)
def test_bad_numbers_are_usage_errors(
    path: tuple[str, ...], name: str, bad: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Not a number, and for sizes and counts a negative or zero value, are refused before anything runs."""
    values = ["abc"]
    if name not in NUMBERS_THAT_MAY_BE_NEGATIVE:
        values.append("-5")
    if any(word in name for word in SIZES):
        values.append("0")
    for value in values:
        args = [*path, *_arguments(LEAVES[path], bad["binary"], bad, **{name: value})]
        code, out, err = _run(args, capsys)
        _assert_one_line_error(args, code, out, err)
        assert code == 2, f"lineage {' '.join(args)} accepted {value}:\n{out}{err}"


def test_a_refused_login_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from lineage_platform.graph.embedded.engine import EmbeddedGraph
    from lineage_platform.graph.embedded.server import (
        BackgroundServer,
        ServerSettings,
        add_user,
        load_authenticator,
    )

    credentials = tmp_path / "users"
    add_user(credentials, "spark", "s3cret")
    settings = ServerSettings(port=0, credentials=credentials)
    graph = EmbeddedGraph(None)
    try:
        with BackgroundServer(graph, settings, load_authenticator(settings)) as server:
            monkeypatch.setenv("LINEAGE_GRAPH_USERNAME", "spark")
            monkeypatch.setenv("LINEAGE_GRAPH_PASSWORD", "guess")
            args = ["trace", "dw.t", "--graph", server.url]
            code, out, err = _run(args, capsys)
    finally:
        graph.close()
    _assert_one_line_error(args, code, out, err)
    assert "refused the login" in err and "LINEAGE_GRAPH_PASSWORD" in err
