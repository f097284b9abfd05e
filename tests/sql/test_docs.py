"""Each pass of lineage_platform.sql has a docstring example (tests/test_doctests.py runs them)."""

from __future__ import annotations

import pytest

from lineage_platform.sql import PASSES


@pytest.mark.parametrize("step", PASSES, ids=[p.__name__ for p in PASSES])
def test_every_pass_has_an_example(step) -> None:
    assert step.__doc__ and ">>>" in step.__doc__
