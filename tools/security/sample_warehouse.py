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

SAMPLE_QUERIES: tuple[str, ...] = (
    "SELECT name FROM sales.customers WHERE region = 'EU'",
    "SELECT name, email FROM sales.customers WHERE region IN ('EU', 'US') AND id > 10",
    "SELECT count(*) FROM sales.customers WHERE birth >= '1980-01-01'",
    "SELECT region, count(*) AS n FROM sales.customers GROUP BY region",
    "SELECT c.name, sum(o.amount) AS total FROM sales.customers c JOIN sales.orders o ON c.id = o.customer_id "
    "WHERE o.status = 'paid' GROUP BY c.name",
    "SELECT c.name, o.amount FROM sales.customers c LEFT JOIN sales.orders o "
    "ON c.id = o.customer_id AND o.dt = '2024-01-03' AND c.region = 'EU'",
    "SELECT o.id, c.name FROM sales.customers c RIGHT JOIN sales.orders o ON c.id = o.customer_id AND c.region = 'US'",
    "SELECT c.id, o.id AS oid FROM sales.customers c FULL OUTER JOIN sales.orders o "
    "ON c.id = o.customer_id AND o.status = 'open'",
    "SELECT c.id FROM sales.customers c LEFT JOIN sales.orders o ON c.id = o.customer_id WHERE o.id IS NULL",
    "SELECT count(*) FROM (SELECT DISTINCT region, birth FROM sales.customers) s",
    "SELECT region FROM sales.customers WHERE id < 20 UNION SELECT status FROM sales.orders WHERE amount > 400",
    "SELECT name FROM sales.customers WHERE id < 30 EXCEPT SELECT name FROM sales.customers WHERE region = 'EU'",
    "SELECT id FROM sales.customers WHERE region = 'EU' INTERSECT SELECT customer_id FROM sales.orders "
    "WHERE status = 'paid'",
    "WITH big AS (SELECT customer_id, sum(amount) AS s FROM sales.orders GROUP BY customer_id HAVING sum(amount) > 900) "
    "SELECT c.name, big.s FROM big JOIN sales.customers c ON c.id = big.customer_id",
    "SELECT * FROM (SELECT id, region, row_number() OVER (PARTITION BY region ORDER BY birth) AS rn "
    "FROM sales.customers) t WHERE rn = 1",
    "SELECT name FROM sales.customers c WHERE EXISTS (SELECT 1 FROM sales.orders o "
    "WHERE o.customer_id = c.id AND o.status = 'refunded')",
    "SELECT name FROM sales.customers WHERE id IN (SELECT customer_id FROM sales.orders WHERE amount < 50)",
    "SELECT name, (SELECT max(amount) FROM sales.orders o WHERE o.customer_id = c.id) AS top "
    "FROM sales.customers c WHERE c.region = 'APAC'",
    "SELECT id, tag FROM sales.customers LATERAL VIEW explode(tags) t AS tag WHERE region = 'EU'",
    "SELECT count(*) FROM sales.customers LATERAL VIEW explode(tags) t AS tag",
    "SELECT id, CASE WHEN ssn LIKE '1%' THEN 'a' ELSE 'b' END AS bucket FROM sales.customers",
    "SELECT name FROM sales.customers WHERE ssn LIKE '1%' AND NOT region = 'EU'",
    "SELECT id, lag(amount) OVER (ORDER BY id) AS prev FROM sales.orders WHERE status = 'paid'",
    "SELECT dt, count(DISTINCT customer_id) AS buyers FROM sales.orders WHERE dt BETWEEN '2024-01-02' AND "
    "'2024-01-05' GROUP BY dt",
    "SELECT name FROM sales.customers ORDER BY birth DESC, id LIMIT 5",
    "SELECT o.id FROM sales.orders o LEFT SEMI JOIN sales.customers c ON o.customer_id = c.id AND c.region = 'EU'",
    "SELECT o.id FROM sales.orders o LEFT ANTI JOIN sales.customers c ON o.customer_id = c.id AND c.region = 'EU'",
    "SELECT c1.id, c2.id AS other FROM sales.customers c1 JOIN sales.customers c2 "
    "ON c1.region = c2.region AND c2.id < 5 WHERE c1.id > 50",
    "SELECT * FROM (SELECT id, region FROM sales.customers ORDER BY id LIMIT 10) s WHERE s.region = 'EU'",
    "SELECT status, count(*) AS n FROM sales.orders WHERE status != 'open' AND dt NOT IN ('2024-01-01') "
    "GROUP BY status HAVING count(*) > 2",
    "SELECT region, status, count(*) AS n FROM sales.customers c JOIN sales.orders o ON c.id = o.customer_id "
    "GROUP BY GROUPING SETS ((region), (status))",
    "SELECT count(*) FROM sales.orders WHERE status IS NULL",
    "SELECT c.id FROM sales.customers c LEFT JOIN sales.orders o ON c.id = o.customer_id WHERE o.status IS NULL",
    "SELECT name FROM sales.customers c WHERE EXISTS (SELECT 1 FROM sales.orders o "
    "WHERE o.customer_id = c.id AND c.region = 'EU')",
    "SELECT id FROM sales.orders WHERE amount BETWEEN 10 AND 20 OR status = 'open'",
    "SELECT sum(amount) OVER (PARTITION BY customer_id) AS s FROM sales.orders WHERE dt = '2024-01-02'",
    "SELECT count(*) FROM (SELECT region, name FROM sales.customers UNION SELECT status, dt FROM sales.orders) u",
    "SELECT count(*) FROM (SELECT region, name FROM sales.customers INTERSECT "
    "SELECT region, name FROM sales.customers WHERE id > 5) u",
    "WITH c AS (SELECT id, name, region FROM sales.customers) SELECT name FROM c WHERE region = 'EU'",
    "SELECT * FROM (SELECT region, count(*) AS n FROM sales.customers GROUP BY region) g WHERE g.region = 'EU'",
    "SELECT * FROM (SELECT region, count(*) AS n FROM sales.customers GROUP BY region) g WHERE g.n > 10",
    "SELECT * FROM (SELECT region, count(*) AS n FROM sales.customers GROUP BY ROLLUP (region)) g "
    "WHERE g.region IS NULL",
    "WITH c AS (SELECT id, region FROM sales.customers) "
    "SELECT a.id FROM c a JOIN c b ON a.id = b.id + 1 WHERE a.region = 'EU'",
    "SELECT * FROM (SELECT region AS k, id FROM sales.customers UNION ALL SELECT status, id FROM sales.orders) u "
    "WHERE u.k = 'EU'",
    "SELECT * FROM (SELECT c.id, o.status FROM sales.customers c LEFT JOIN sales.orders o "
    "ON c.id = o.customer_id) j WHERE j.status IS NULL",
    "SELECT c.id, d.amount FROM sales.customers c LEFT JOIN (SELECT customer_id, amount, status "
    "FROM sales.orders) d ON c.id = d.customer_id AND d.status = 'paid'",
    "SELECT * FROM (SELECT customer_id, sum(amount) OVER (PARTITION BY status) AS s FROM sales.orders) w "
    "WHERE w.customer_id = 7",
    "SELECT * FROM (SELECT customer_id, lag(amount) OVER (ORDER BY id) AS prev FROM sales.orders) w "
    "WHERE w.customer_id = 7",
)
"""Hive queries over the sample warehouse covering the constructs permission extraction must handle."""

_DUCKDB_TYPES = {
    "int": "INTEGER",
    "string": "VARCHAR",
    "date": "DATE",
    "double": "DOUBLE",
    "array<string>": "VARCHAR[]",
}
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
            rng.choice(_STATUSES) if rng.random() > 0.05 else None,  # some unknown statuses, for IS NULL
            f"2024-01-{rng.randint(1, 9):02d}",
        )
        for n in range(1, customers * 4 + 1)
    ]
    connection.executemany("INSERT INTO sales.orders VALUES (?, ?, ?, ?, ?)", orders)
