"""Developer tooling lives in tools/, outside the installed package: nothing installed imports it, the wheel's
package list leaves it out, and its commands run from the repository root."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

from setuptools import find_packages

REPO = Path(__file__).resolve().parent.parent
INSTALLED = ("lineage_platform", "graph_schema")


def tools_imports(source: str) -> list[str]:
    """The modules of ``tools`` that ``source`` imports (at any depth of the code)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        found += [name for name in names if name == "tools" or name.startswith("tools.")]
    return found


def test_the_check_sees_imports_of_tools() -> None:
    source = "import tools.conformance\ndef f():\n    from tools.security.oracle import check_query\nimport toolsmith\n"
    assert tools_imports(source) == ["tools.conformance", "tools.security.oracle"]


def test_no_installed_module_imports_tools() -> None:
    offenders = {
        str(path.relative_to(REPO)): hits
        for package in INSTALLED
        for path in sorted((REPO / package).rglob("*.py"))
        if (hits := tools_imports(path.read_text()))
    }
    assert offenders == {}


def test_the_wheel_packs_the_product_and_not_tools() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    packages = find_packages(str(REPO), include=config["include"], exclude=config.get("exclude", ()))
    assert {"lineage_platform", "lineage_platform.security", "graph_schema"} <= set(packages)
    assert [p for p in packages if p.split(".")[0] not in INSTALLED] == []


def test_tool_commands_run_from_the_repository_root() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tools.conformance", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "--expected" in result.stdout
