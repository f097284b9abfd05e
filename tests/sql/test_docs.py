"""Every module of lineage_platform.sql (and model.py) runs its doctests; each pass has at least one."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import lineage_platform.sql as package
from lineage_platform.sql import PASSES

MODULES = sorted(m.name for m in pkgutil.iter_modules(package.__path__, package.__name__ + "."))


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests_pass(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0


@pytest.mark.parametrize("step", PASSES, ids=[p.__name__ for p in PASSES])
def test_every_pass_has_an_example(step) -> None:
    assert step.__doc__ and ">>>" in step.__doc__
