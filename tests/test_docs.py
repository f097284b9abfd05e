"""docs/ and the READMEs: the CLI reference matches the code, links resolve, commands exist, feature pages carry their figures."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lineage_platform.cli_reference import check_command_line, command_lines, main, render, walk
from lineage_platform.errors import LineageError
from tests.conftest import REPO

DOCS = REPO / "docs"
PAGES = [REPO / "README.md", REPO / "notebooks" / "README.md", *sorted(DOCS.rglob("*.md"))]
FEATURE_PAGES = sorted((DOCS / "features").glob("*.md"))
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def test_cli_reference_is_up_to_date() -> None:
    assert (DOCS / "cli.md").read_text() == render(), "docs/cli.md is stale: run `make docs`"


def test_cli_reference_has_a_section_per_command_with_its_env_vars() -> None:
    page = render()
    for entry in walk():
        assert f"\n## {entry.title}\n" in page
    assert "[env var: LINEAGE_GRAPH_URL]" in page and "Usage: lineage graph serve [OPTIONS]" in page


def test_make_docs_writes_the_page(tmp_path: Path) -> None:
    target = tmp_path / "cli.md"
    main([str(target)])
    assert target.read_text() == render()


def _anchors(page: Path) -> set[str]:
    return {
        re.sub(r"[^a-z0-9 -]", "", heading.lower()).replace(" ", "-")
        for heading in re.findall(r"^#+ (.+)$", page.read_text(), flags=re.M)
    }


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(page: Path) -> None:
    for target in LINK.findall(page.read_text()):
        if target.startswith(("http://", "https://")):
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        assert resolved.exists(), f"{page.name}: broken link {target}"
        if anchor:
            assert anchor in _anchors(resolved), f"{page.name}: no heading #{anchor} in {resolved.name}"


@pytest.mark.parametrize(
    "page", [p for p in PAGES if p.name != "cli.md"], ids=lambda p: str(p.relative_to(REPO))
)
def test_commands_in_docs_exist_with_their_options(page: Path) -> None:
    for words in command_lines(page.read_text()):
        try:
            check_command_line(words)
        except LineageError as exc:
            pytest.fail(f"{page.name}: {' '.join(words)}: {exc}")


def test_pages_name_every_feature_and_the_operations_topics() -> None:
    assert {p.stem for p in FEATURE_PAGES} >= {
        "tracing", "labels-ttl", "sql-lineage", "permissions-masking", "netflow", "cdc", "ingestion", "server-console"
    }  # fmt: skip
    operations = (DOCS / "operations.md").read_text()
    for topic in (
        "Backups",
        "Scaling out to JanusGraph",
        "Upgrading the schema",
        "Key management",
        "million tables",
    ):
        assert topic in operations
    assert "```" in (DOCS / "architecture.md").read_text()


@pytest.mark.parametrize("page", FEATURE_PAGES, ids=lambda p: p.stem)
def test_feature_pages_paste_a_dated_benchmark_run_of_an_existing_script(page: Path) -> None:
    text = page.read_text()
    runs = re.findall(
        r"\$ \.venv/bin/python (benchmarks/bench_\w+\.py).*# (\d{4}-\d{2}-\d{2}), 2 vCPUs", text
    )
    assert runs, f"{page.name} has no dated benchmark run"
    for script, _date in runs:
        assert (REPO / script).is_file(), f"{page.name} cites missing {script}"
    blocks = re.findall(r"```text\n\$ [^\n]+\n(.*?)```", text, flags=re.S)
    assert all(re.search(r"\d", block) and len(block.splitlines()) >= 2 for block in blocks), (
        "empty figure block"
    )


def test_command_lines_are_found_in_spans_and_shell_lines_but_not_in_output() -> None:
    text = (
        "Run `lineage trace db.t --up` first.\n"
        "```bash\n"
        "lineage graph serve --store /data  # owns the store\n"
        "echo SQL | lineage sql lineage -\n"
        "```\n"
        "```text\n"
        "lineage events: decode+write\n"
        "```\n"
    )
    assert list(command_lines(text)) == [
        ["lineage", "trace", "db.t", "--up"],
        ["lineage", "graph", "serve", "--store", "/data"],
    ]
