"""A DuckDB sample warehouse with the mask functions installed, shared by the security tests."""

from __future__ import annotations

import duckdb
import pytest

from lineage_platform.security.duckdb_masks import install_mask_functions
from tools.security.sample_warehouse import create_sample_warehouse


@pytest.fixture(scope="module")
def warehouse() -> duckdb.DuckDBPyConnection:
    """The sample warehouse (``sales.customers``, ``sales.orders``) in an in-memory DuckDB."""
    connection = duckdb.connect()
    create_sample_warehouse(connection)
    install_mask_functions(connection)
    yield connection
    connection.close()
