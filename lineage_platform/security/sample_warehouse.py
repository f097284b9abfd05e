"""A small deterministic Hive-style warehouse in DuckDB (database = DuckDB schema) for the oracle and demos.

``sales.customers`` holds PII (``ssn``, ``email``, ``birth``); ``sales.orders`` references customers.
"""

from __future__ import annotations

import datetime
import random

from duckdb import DuckDBPyConnection

SAMPLE_SCHEMA: dict[str, dict[str, dict[str, str]]] = {
    "sales": {
        "customers": {
            "id": "int",
            "name": "string",
            "ssn": "string",
            "email": "string",
            "region": "string",
            "birth": "date",
            "tags": "array<string>",
        },
        "orders": {"id": "int", "customer_id": "int", "amount": "double", "status": "string", "dt": "string"},
    }
}
"""The catalog ``{db: {table: {column: hive type}}}`` of the sample warehouse."""

_DUCKDB_TYPES = {"int": "INTEGER", "string": "VARCHAR", "date": "DATE", "double": "DOUBLE", "array<string>": "VARCHAR[]"}
_REGIONS = ("EU", "US", "APAC", "LATAM")
_STATUSES = ("paid", "shipped", "refunded", "open")
_TAGS = ("vip", "new", "churn", "b2b")


def create_sample_warehouse(connection: DuckDBPyConnection, customers: int = 60, seed: int = 7) -> None:
    """Create and fill the sample tables (``customers`` rows and about four orders per customer)."""
    rng = random.Random(seed)
    for database, tables in SAMPLE_SCHEMA.items():
        connection.execute(f"CREATE SCHEMA IF NOT EXISTS {database}")
        for table, columns in tables.items():
            spec = ", ".join(f"{name} {_DUCKDB_TYPES[kind]}" for name, kind in columns.items())
            connection.execute(f"CREATE OR REPLACE TABLE {database}.{table} ({spec})")
    people = [
        (
            n,
            f"name{n:03d}",
            f"{rng.randint(100, 999)}-{rng.randint(10, 99)}-{rng.randint(1000, 9999)}",
            f"user{n}@example.com",
            rng.choice(_REGIONS),
            datetime.date(1950, 1, 1) + datetime.timedelta(days=rng.randint(0, 20000)),
            rng.sample(_TAGS, rng.randint(0, 3)),
        )
        for n in range(1, customers + 1)
    ]
    connection.executemany("INSERT INTO sales.customers VALUES (?, ?, ?, ?, ?, ?, ?)", people)
    orders = [
        (
            n,
            rng.randint(1, customers + 3),  # a few orders of unknown customers, for outer joins
            round(rng.uniform(1, 500), 2),
            rng.choice(_STATUSES),
            f"2024-01-{rng.randint(1, 9):02d}",
        )
        for n in range(1, customers * 4 + 1)
    ]
    connection.executemany("INSERT INTO sales.orders VALUES (?, ?, ?, ?, ?)", orders)
