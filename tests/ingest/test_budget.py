"""The parse budget: statements too large or too slow to parse are rejected with the reason, not the load."""

from __future__ import annotations

import contextlib
import time

import pytest

from lineage_platform.ingest.budget import ParseBudget, ParseBudgetExceeded
from lineage_platform.ingest.bulk_load import parse_statement
from lineage_platform.ingest.catalog_index import CatalogIndex
from lineage_platform.ingest.statements import prepare_query


def _wide(columns: int) -> str:
    return f"INSERT INTO t SELECT {', '.join(f'c{i}' for i in range(columns))} FROM s"


def test_a_statement_over_the_size_budget_is_rejected_unparsed() -> None:
    """A 4k-column SELECT takes seconds to trace; over the size budget it is rejected at once."""
    (statement,) = prepare_query(_wide(4000)).statements
    started = time.perf_counter()
    parsed = parse_statement(statement, (), CatalogIndex(None), budget=ParseBudget(max_bytes=1000))
    assert time.perf_counter() - started < 0.5
    assert parsed.lineage == () and "over the parse budget of 1000 bytes" in (parsed.error or "")


def test_a_statement_over_the_time_budget_is_stopped_and_rejected() -> None:
    """A 4k-column SELECT takes seconds to trace; the budget stops it at 0.3 s."""
    (statement,) = prepare_query(_wide(4000)).statements
    started = time.perf_counter()
    parsed = parse_statement(statement, (), CatalogIndex(None), budget=ParseBudget(max_seconds=0.3))
    assert time.perf_counter() - started < 1.5
    assert parsed.lineage == () and "longer than the parse budget of 0.3 s" in (parsed.error or "")


def test_statements_within_the_budget_parse() -> None:
    (statement,) = prepare_query(_wide(50)).statements
    parsed = parse_statement(
        statement, (), CatalogIndex(None), budget=ParseBudget(max_bytes=2000, max_seconds=5)
    )
    assert parsed.error is None and len(parsed.lineage) == 1


def test_the_timer_raises_even_when_the_body_swallows_its_exception() -> None:
    with pytest.raises(ParseBudgetExceeded), ParseBudget(max_seconds=0.05).timer():
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:
            with contextlib.suppress(ParseBudgetExceeded):
                time.sleep(0.01)
