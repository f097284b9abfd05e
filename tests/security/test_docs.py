"""Every module of lineage_platform.security runs its doctests."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import lineage_platform.security as package

MODULES = sorted(m.name for m in pkgutil.iter_modules(package.__path__, package.__name__ + "."))


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests_pass(name: str) -> None:
    assert doctest.testmod(importlib.import_module(name)).failed == 0
