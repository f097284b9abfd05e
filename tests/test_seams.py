"""Seams that keep packages apart, checked by walking imports: graph/ reaches nothing in cdc/ (the outbox's value
encoding lives in graph/, cdc/ decodes it), and trace.py and render/ do not import each other (both use
``model.LineageGraph``)."""

from __future__ import annotations

from pathlib import Path

import lineage_platform
from tests.import_walk import imported_names, reaches

PACKAGE = Path(lineage_platform.__file__).parent


def _package_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts if path.name == "__init__.py" else parts[:-1])


def _hits(source: str, package: str, target: str) -> list[str]:
    return [
        f"{module}:{name or '*'}"
        for module, name in imported_names(source, package)
        if reaches(module, name, target)
    ]


def imports_reaching(paths: list[Path], target: str) -> dict[str, list[str]]:
    """For each file that imports something in ``target``, those imports as ``module:name``."""
    found = {}
    for path in paths:
        if hits := _hits(path.read_text(), _package_of(path), target):
            found[str(path.relative_to(PACKAGE))] = hits
    return found


def test_the_walk_sees_plain_from_relative_and_nested_imports() -> None:
    source = (
        "import lineage_platform.cdc.values\n"
        "from lineage_platform import cdc\n"
        "from .. import cdc as c\n"
        "from ..cdc.values import to_avro\n"
        "def f():\n    from lineage_platform.cdc.avro import encode_event\n"
        "from lineage_platform.cdcx import y\n"
    )
    assert _hits(source, "lineage_platform.graph", "lineage_platform.cdc") == [
        "lineage_platform.cdc.values:*",
        "lineage_platform:cdc",
        "lineage_platform:cdc",
        "lineage_platform.cdc.values:to_avro",
        "lineage_platform.cdc.avro:encode_event",
    ]


def test_graph_imports_nothing_from_cdc() -> None:
    modules = sorted((PACKAGE / "graph").rglob("*.py"))
    assert len(modules) > 50
    assert imports_reaching(modules, "lineage_platform.cdc") == {}, (
        "graph/ must not import cdc/: put what both need under graph/ (as graph/change_values.py)"
    )


def test_trace_and_render_do_not_import_each_other() -> None:
    render = sorted((PACKAGE / "render").rglob("*.py"))
    assert len(render) >= 4
    assert imports_reaching(render, "lineage_platform.trace") == {}
    assert imports_reaching([PACKAGE / "trace.py"], "lineage_platform.render") == {}
