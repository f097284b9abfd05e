"""The semantic oracle: changing cells outside the extracted resource blocks never changes a query's result."""

from __future__ import annotations

import pytest

from lineage_platform.security.resource_blocks import AccessRequest, ResourceBlock
from tools.security.oracle import OracleResult, check_query
from tools.security.sample_warehouse import SAMPLE_QUERIES as QUERIES
from tools.security.sample_warehouse import SAMPLE_SCHEMA


@pytest.fixture(scope="module")
def results(warehouse) -> dict[str, OracleResult]:
    """The oracle's verdict on every sample query, computed once."""
    return {sql: check_query(warehouse, sql, SAMPLE_SCHEMA) for sql in QUERIES}


@pytest.mark.parametrize("sql", QUERIES)
def test_cells_outside_the_blocks_do_not_change_the_result(results, sql: str) -> None:
    result = results[sql]
    assert result.preserved, f"extractor missed a dependency of: {sql}"
    assert result.block_cells <= result.column_cells <= result.table_cells


def test_blocks_are_smaller_than_table_and_column_privileges(results) -> None:
    blocks = sum(r.block_cells for r in results.values())
    columns = sum(r.column_cells for r in results.values())
    tables = sum(r.table_cells for r in results.values())
    assert blocks < columns < tables


def test_the_oracle_notices_a_missed_dependency(warehouse) -> None:
    """Sanity check of the oracle itself: a filter on a column outside every block changes the result."""
    sql = "SELECT name FROM sales.customers WHERE email LIKE 'user1%'"
    incomplete = AccessRequest(sql, ("SELECT",), (ResourceBlock("sales.customers", ("name",)),))
    assert not check_query(warehouse, sql, SAMPLE_SCHEMA, request=incomplete).preserved
