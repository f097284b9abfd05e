"""Every docstring example in the installed packages and in tools/ runs: one test per module that has examples."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import graph_schema
import lineage_platform
import tools


def _modules_with_examples() -> list[str]:
    found = []
    for package in (lineage_platform, graph_schema, tools):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            spec = importlib.util.find_spec(info.name)
            if (
                spec
                and spec.origin
                and spec.origin.endswith(".py")
                and ">>>" in Path(spec.origin).read_text()
            ):
                found.append(info.name)
    return sorted(found)


@pytest.mark.parametrize("name", _modules_with_examples())
def test_docstring_examples_run(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
