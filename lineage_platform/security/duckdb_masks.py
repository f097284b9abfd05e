"""Hive's masking functions as DuckDB macros, so masked Hive SQL transpiled by sqlglot runs on DuckDB.

The macros are the ``function`` definitions of :data:`~lineage_platform.security.mask_kinds.MASK_KINDS`; their
semantics follow Hive's built-ins (``mask`` turns upper-case letters into ``X``, lower-case into ``x`` and
digits into ``n``; ``mask_show_first_n`` / ``mask_show_last_n`` keep n characters and mask the rest;
``mask_hash`` is the SHA-256 hex digest of the value's text).
"""

from __future__ import annotations

import sqlglot
from duckdb import DuckDBPyConnection

from lineage_platform.security.mask_kinds import duckdb_macros


def install_mask_functions(connection: DuckDBPyConnection) -> None:
    """Define the function of every mask kind that has one (``mask``, ``mask_hash``, ...) on a DuckDB connection.

    >>> import duckdb
    >>> con = duckdb.connect()
    >>> install_mask_functions(con)
    >>> con.execute("SELECT mask('Ab-12'), mask_show_last_n('123-45-6789', 4)").fetchone()
    ('Xx-nn', 'nnn-nn-6789')
    """
    for macro in duckdb_macros():
        connection.execute(macro)


def to_duckdb(sql: str, dialect: str = "hive") -> str:
    """Transpile one statement to DuckDB's dialect."""
    return sqlglot.transpile(sql, read=dialect, write="duckdb")[0]
