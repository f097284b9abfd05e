"""Hive's masking functions as DuckDB macros, so masked Hive SQL transpiled by sqlglot runs on DuckDB.

Semantics follow Hive's built-ins: ``mask`` turns upper-case letters into ``X``, lower-case into ``x`` and
digits into ``n``; ``mask_show_first_n`` / ``mask_show_last_n`` keep n characters and mask the rest;
``mask_hash`` is the SHA-256 hex digest of the value's text.
"""

from __future__ import annotations

import sqlglot
from duckdb import DuckDBPyConnection

MACROS = (
    "CREATE OR REPLACE MACRO mask(v) AS regexp_replace(regexp_replace(regexp_replace("
    "CAST(v AS VARCHAR), '[A-Z]', 'X', 'g'), '[a-z]', 'x', 'g'), '[0-9]', 'n', 'g')",
    "CREATE OR REPLACE MACRO mask_hash(v) AS sha256(CAST(v AS VARCHAR))",
    "CREATE OR REPLACE MACRO mask_show_first_n(v, n) AS "
    "left(CAST(v AS VARCHAR), n) || mask(substr(CAST(v AS VARCHAR), n + 1))",
    "CREATE OR REPLACE MACRO mask_show_last_n(v, n) AS "
    "mask(left(CAST(v AS VARCHAR), greatest(length(CAST(v AS VARCHAR)) - n, 0))) || right(CAST(v AS VARCHAR), n)",
)


def install_mask_functions(connection: DuckDBPyConnection) -> None:
    """Define ``mask``, ``mask_hash``, ``mask_show_first_n`` and ``mask_show_last_n`` on a DuckDB connection.

    >>> import duckdb
    >>> con = duckdb.connect()
    >>> install_mask_functions(con)
    >>> con.execute("SELECT mask('Ab-12'), mask_show_last_n('123-45-6789', 4)").fetchone()
    ('Xx-nn', 'nnn-nn-6789')
    """
    for macro in MACROS:
        connection.execute(macro)


def to_duckdb(sql: str, dialect: str = "hive") -> str:
    """Transpile one statement to DuckDB's dialect."""
    return sqlglot.transpile(sql, read=dialect, write="duckdb")[0]
