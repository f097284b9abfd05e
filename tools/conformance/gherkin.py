"""A small line-based Gherkin reader, enough for TinkerPop's feature files.

It understands ``Feature:``, tags (``@Name`` lines, feature- or scenario-level), ``Scenario:``, the step
keywords ``Given``/``When``/``Then``/``And``/``But``, ``\"\"\"`` doc strings and ``| cell |`` tables. Comments
(``#``) and blank lines are ignored. Step text is kept as written; the runner gives it meaning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lineage_platform.errors import GraphError

_STEP_KEYWORDS = ("Given ", "When ", "Then ", "And ", "But ")


@dataclass
class Step:
    """One step: its text without the keyword, and an optional doc string or table (rows of cells)."""

    text: str
    line: int
    doc: str | None = None
    table: list[list[str]] = field(default_factory=list)


@dataclass
class Scenario:
    """One scenario with its own tags and the feature's tags merged in."""

    name: str
    line: int
    tags: frozenset[str]
    steps: list[Step] = field(default_factory=list)


@dataclass
class Feature:
    """A feature file: its title, the file it came from and its scenarios."""

    title: str
    path: Path
    scenarios: list[Scenario] = field(default_factory=list)


_CELL_ESCAPES = {"|": "|", "\\": "\\", "n": "\n"}


def _split_row(line: str) -> list[str]:
    """The cells of a ``| a | b |`` row, with Gherkin's escapes ``\\|``, ``\\\\`` and ``\\n`` undone."""
    cells: list[str] = []
    current: list[str] = []
    chars = iter(line.strip()[1:])
    for char in chars:
        if char == "\\":
            escaped = next(chars, "")
            current.append(_CELL_ESCAPES.get(escaped, "\\" + escaped))
        elif char == "|":
            cells.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    return cells


def parse_feature(text: str, path: Path = Path("<text>")) -> Feature:
    """Parse the text of one feature file.

    >>> f = parse_feature('@A\\nFeature: x\\n  @B\\n  Scenario: s\\n    Given the modern graph\\n')
    >>> f.scenarios[0].name, sorted(f.scenarios[0].tags), f.scenarios[0].steps[0].text
    ('s', ['@A', '@B'], 'the modern graph')
    """
    feature = Feature(title="", path=path)
    feature_tags: frozenset[str] = frozenset()
    pending_tags: list[str] = []
    scenario: Scenario | None = None
    doc_lines: list[str] | None = None
    doc_indent = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if doc_lines is not None:
            if stripped == '"""':
                step = scenario.steps[-1]  # type: ignore[union-attr]
                step.doc = "\n".join(doc_lines)
                doc_lines = None
            else:
                doc_lines.append(raw[doc_indent:] if raw[:doc_indent].isspace() else stripped)
            continue
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("@"):
            pending_tags += stripped.split()
        elif stripped.startswith("Feature:"):
            feature.title = stripped.removeprefix("Feature:").strip()
            feature_tags, pending_tags = frozenset(pending_tags), []
        elif stripped.startswith("Scenario:"):
            name = stripped.removeprefix("Scenario:").strip()
            scenario = Scenario(name=name, line=number, tags=feature_tags | frozenset(pending_tags))
            feature.scenarios.append(scenario)
            pending_tags = []
        elif scenario is None:
            continue  # free description text under the Feature line
        elif stripped.startswith(_STEP_KEYWORDS):
            _, _, rest = stripped.partition(" ")
            scenario.steps.append(Step(text=rest.strip(), line=number))
        elif stripped == '"""' and scenario.steps:
            doc_lines, doc_indent = [], len(raw) - len(raw.lstrip())
        elif stripped.startswith("|") and scenario.steps:
            scenario.steps[-1].table.append(_split_row(stripped))
        else:
            raise GraphError(
                f"{path}:{number}: cannot read Gherkin line {stripped!r}",
                hint="expected a tag, Scenario:, a step keyword, a doc string or a table row",
            )
    if doc_lines is not None:
        raise GraphError(f"{path}: doc string not closed", hint='close it with a """ line')
    return feature


def load_features(root: Path) -> list[Feature]:
    """Every ``*.feature`` under `root` (or `root` itself when it is a file), sorted by path."""
    paths = [root] if root.is_file() else sorted(root.rglob("*.feature"))
    if not paths:
        raise GraphError(
            f"no .feature files under {root}", hint="point --features at TinkerPop's features folder"
        )
    return [parse_feature(path.read_text(encoding="utf-8"), path) for path in paths]
