"""Two copies of the sample warehouse for the masking attack suite: the real one and a *perturbed* one.

The perturbed copy changes everything each masking rule hides and nothing it shows: the hidden part of
``ssn`` (its last 4 characters and its shape stay), every ``email`` (hashed: the new values keep which
rows are equal but change length, domain and order) and the month and day of ``birth`` (the year stays).
``mask_hash`` of a perturbed e-mail is made equal to ``mask_hash`` of the real one, so every masked value
is identical in both copies: a query whose result differs between them learned something a mask hides.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import duckdb
import sqlglot
from sqlglot import exp

from lineage_platform.security.duckdb_masks import install_mask_functions, to_duckdb
from tools.security.sample_warehouse import SAMPLE_SCHEMA, create_sample_warehouse

WORLDS = ("real", "perturbed")
Result = tuple[str, Any]  # ("rows", rows) or ("error", exception class)


def perturbed(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A ``sales.customers`` row (id, name, ssn, email, region, birth, tags) with new ssn, email and birth."""
    n, name, ssn, _, region, birth, tags = row
    d = str(n % 2)
    email = f"p{100 - n:03d}{'q' * (n % 4)}@x{d}.org"
    return (
        n,
        name,
        f"1{d}{d}-{d}{d}-{ssn[-4:]}",
        email,
        region,
        birth.replace(month=1 + n % 12, day=1 + n % 28),
        tags,
    )


@dataclass
class Worlds:
    """Both warehouses on one engine and a runner of Hive SQL in either; ``guesses`` are customer 1's values."""

    run: Callable[[str, str], Result]
    guesses: dict[str, str]

    def differ(self, sql: str) -> bool:
        """Whether ``sql`` gives different results (or errors) in the two warehouses."""
        ordered = _ordered(sql)
        results = [_normal(self.run(world, sql), ordered) for world in WORLDS]
        return results[0] != results[1]


def duckdb_worlds() -> Worlds:
    """Both warehouses in two in-memory DuckDB databases with the mask functions."""
    connections = {world: duckdb.connect() for world in WORLDS}
    for connection in connections.values():
        create_sample_warehouse(connection)
        install_mask_functions(connection)
    customers = connections["real"].execute("SELECT * FROM sales.customers ORDER BY id").fetchall()
    changed = [perturbed(row) for row in customers]
    connections["perturbed"].executemany(
        "UPDATE sales.customers SET ssn = ?, email = ?, birth = ? WHERE id = ?",
        [(row[2], row[3], row[5], row[0]) for row in changed],
    )
    pairs = [(new[3], old[3]) for new, old in zip(changed, customers, strict=True)]
    for connection in connections.values():
        connection.execute("CREATE TABLE main.unperturbed (p VARCHAR, o VARCHAR)")
        connection.executemany("INSERT INTO main.unperturbed VALUES (?, ?)", pairs)
        connection.execute(
            "CREATE OR REPLACE MACRO mask_hash(v) AS sha256(coalesce("
            "(SELECT o FROM main.unperturbed WHERE p = CAST(v AS VARCHAR)), CAST(v AS VARCHAR)))"
        )

    def run(world: str, sql: str) -> Result:
        try:
            return "rows", connections[world].execute(to_duckdb(sql)).fetchall()
        except duckdb.Error as error:
            return "error", type(error).__name__

    return Worlds(run, _guesses(customers[0]))


def spark_worlds(spark: Any) -> Worlds:
    """Both warehouses as Spark temporary views (``real_customers``, ...) with the mask functions as UDFs."""
    connection = duckdb.connect()
    create_sample_warehouse(connection)
    customers = connection.execute("SELECT * FROM sales.customers ORDER BY id").fetchall()
    orders = connection.execute("SELECT * FROM sales.orders ORDER BY id").fetchall()
    tables = {
        "real": {"customers": customers, "orders": orders},
        "perturbed": {"customers": [perturbed(row) for row in customers], "orders": orders},
    }
    for world, by_name in tables.items():
        for name, rows in by_name.items():
            schema = ", ".join(f"{c} {t}" for c, t in SAMPLE_SCHEMA["sales"][name].items())
            spark.createDataFrame(rows, schema).createOrReplaceTempView(f"{world}_{name}")
    unperturbed = {perturbed(row)[3]: row[3] for row in customers}
    spark.udf.register(
        "mask_hash", lambda v: _sha256(unperturbed.get(str(v), str(v))) if v is not None else None
    )
    spark.udf.register("mask_show_last_n", lambda v, n: _show_last(str(v), n) if v is not None else None)
    spark.udf.register("mask_show_first_n", lambda v, n: _show_first(str(v), n) if v is not None else None)

    def run(world: str, sql: str) -> Result:
        try:
            return "rows", [tuple(row) for row in spark.sql(_in_world(sql, world)).collect()]
        except Exception as error:  # Spark raises analysis, arithmetic and cast errors as several classes
            return "error", type(error).__name__

    return Worlds(run, _guesses(customers[0]))


def _in_world(sql: str, world: str) -> str:
    """Hive ``sql`` as Spark SQL reading the ``world``'s views."""
    tree = sqlglot.parse_one(sql, read="hive")
    for table in tree.find_all(exp.Table):
        if table.db == "sales":
            table.set("this", exp.to_identifier(f"{world}_{table.name}"))
            table.set("db", None)
    return tree.sql("spark")


def _guesses(customer: tuple[Any, ...]) -> dict[str, str]:
    return {"guess_ssn": customer[2], "guess_email": customer[3]}


def _ordered(sql: str) -> bool:
    """Whether the outermost query orders its rows (then the order is part of the result)."""
    return sqlglot.parse_one(sql, read="hive").args.get("order") is not None


def _normal(result: Result, ordered: bool) -> Result:
    kind, value = result
    if kind != "rows":
        return result
    rows = [tuple(str(sorted(c) if isinstance(c, list) else c) for c in row) for row in value]
    return kind, rows if ordered else sorted(rows)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _mask(text: str) -> str:
    return re.sub("[0-9]", "n", re.sub("[a-z]", "x", re.sub("[A-Z]", "X", text)))


def _show_last(text: str, n: int) -> str:
    keep = max(len(text) - n, 0)
    return _mask(text[:keep]) + text[keep:]


def _show_first(text: str, n: int) -> str:
    return text[:n] + _mask(text[n:])
