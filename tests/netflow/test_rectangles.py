"""WHERE clauses as unions of boxes: exact on simple conditions, never missing a matching row."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import duckdb
import pyarrow as pa
import pytest
import sqlglot

from lineage_platform.errors import SqlError
from lineage_platform.netflow.generate import FlowProfile, generate
from lineage_platform.netflow.query import engine_sql
from lineage_platform.netflow.records import ip_to_int
from lineage_platform.netflow.rectangles import MAX_BOXES, where_boxes


def boxes(where: str) -> list[dict]:
    return where_boxes(sqlglot.parse_one(f"SELECT * FROM flows WHERE {where}", read="duckdb")).boxes


def test_simple_conditions_become_exact_intervals() -> None:
    assert boxes("src_ip = '10.0.0.1'") == [{"src_ip": (167772161, 167772161)}]
    assert boxes("in_cidr(dst_ip, '10.0.0.0/8')") == [
        {"dst_ip": (ip_to_int("10.0.0.0"), ip_to_int("10.255.255.255"))}
    ]
    assert boxes("dst_port BETWEEN 10 AND 20 AND dst_port < 15") == [{"dst_port": (10, 14)}]
    assert boxes("5 < src_port") == [{"src_port": (6, 65535)}]
    assert boxes("protocol IN (17, 6, 6)") == [{"protocol": (6, 6)}, {"protocol": (17, 17)}]
    assert boxes("first_ts >= TIMESTAMP '2026-01-01 01:00:00'")[0]["first_ts"][0] == 1_767_229_200_000


def test_not_is_pushed_down_and_or_concatenates() -> None:
    assert boxes("NOT (dst_port <> 80)") == [{"dst_port": (80, 80)}]
    assert boxes("NOT dst_port IN (0, 80)") == [{"dst_port": (1, 79)}, {"dst_port": (81, 65535)}]
    assert boxes("NOT (src_port = 1 OR src_port = 3)") == [
        {"src_port": (0, 0)},
        {"src_port": (2, 2)},
        {"src_port": (4, 65535)},
    ]
    assert boxes("(src_port = 1 OR dst_port = 2) AND protocol = 6") == [
        {"src_port": (1, 1), "protocol": (6, 6)},
        {"dst_port": (2, 2), "protocol": (6, 6)},
    ]
    assert boxes("src_port = 1 AND src_port = 2") == []
    assert boxes("dst_port = 1.5") == []


def test_conditions_it_cannot_read_keep_everything_and_are_reported() -> None:
    rectangles = where_boxes(
        sqlglot.parse_one("SELECT * FROM f WHERE bytes / packets > 100 AND src_port = 7")
    )
    assert rectangles.boxes == [{"src_port": (7, 7)}]
    assert rectangles.unused == {"bytes", "packets"}
    assert boxes("NOT (bytes > packets)") == [{}]


def test_huge_products_collapse_to_a_bounding_box() -> None:
    many = " OR ".join(f"src_port = {n}" for n in range(40))
    result = boxes(f"({many}) AND ({many.replace('src_port', 'dst_port')})")
    assert MAX_BOXES < 40 * 40 and result == [{"src_port": (0, 39), "dst_port": (0, 39)}]


def test_bad_literals_say_what_to_write() -> None:
    with pytest.raises(SqlError, match="not a timestamp"):
        boxes("first_ts > 'yesterday'")
    with pytest.raises(Exception, match="not an IPv4 address"):
        boxes("src_ip = '10.1'")


ATOMS = [
    "src_port {op} {port}",
    "dst_port IN ({port}, {port2}, 443)",
    "dst_port BETWEEN {port} AND {port2}",
    "protocol = {proto}",
    "in_cidr(src_ip, '{net}/{bits}')",
    "packets > {small}",
    "first_ts < '2026-01-01 00:{minute:02d}:00'",
    "tcp_flags & 2 = 2",
]


def random_where(rng: random.Random, depth: int = 3) -> str:
    if depth == 0 or rng.random() < 0.3:
        atom = rng.choice(ATOMS)
        return atom.format(
            op=rng.choice(["=", "<>", "<", "<=", ">", ">="]),
            port=rng.choice([53, 80, 443, 40000, 50000]),
            port2=rng.choice([80, 1000, 45000, 60000]),
            proto=rng.choice([1, 6, 17]),
            net=f"{rng.randrange(256)}.0.0.0",
            bits=rng.choice([1, 2, 4, 8]),
            small=rng.choice([1, 3, 10]),
            minute=rng.randrange(60),
        )
    joiner = rng.choice([" AND ", " OR "])
    text = f"({random_where(rng, depth - 1)}{joiner}{random_where(rng, depth - 1)})"
    return f"NOT {text}" if rng.random() < 0.25 else text


def test_every_matching_row_lies_in_some_box() -> None:
    table = pa.Table.from_batches(list(generate(2_000, profile=FlowProfile(hours=1, hosts=1_000))))
    rng = random.Random(7)
    connection = duckdb.connect()
    connection.register("records", table)
    for _ in range(100):
        sql = f"SELECT * FROM flows WHERE {random_where(rng)}"
        _, text = engine_sql(sql, "records")
        matching = connection.sql(text).to_arrow_table().to_pylist()
        found = boxes(sql.split("WHERE", 1)[1])
        for row in matching:
            assert any(
                all(_inside(row, column, interval) for column, interval in box.items()) for box in found
            ), sql


def _inside(row: dict, column: str, interval: tuple[int, int]) -> bool:
    value = row[column]
    if isinstance(value, datetime):
        value = round(value.replace(tzinfo=UTC).timestamp() * 1000)
    low, high = interval
    return low <= value <= high
