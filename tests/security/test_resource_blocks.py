"""Permission extraction into resource blocks, and failing closed on what cannot be traced."""

from __future__ import annotations

import pytest

from lineage_platform.errors import SecurityError
from lineage_platform.security.resource_blocks import describe_rows, extract_resource_blocks
from tools.security.sample_warehouse import SAMPLE_SCHEMA


def _blocks(sql: str) -> dict[str, list[tuple[tuple[str, ...], str]]]:
    found: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for block in extract_resource_blocks(sql, SAMPLE_SCHEMA).blocks:
        found.setdefault(block.table, []).append((block.columns, describe_rows(block.predicates)))
    return found


def test_returned_columns_are_traced_to_base_columns_and_constants_become_row_predicates() -> None:
    sql = (
        "WITH c AS (SELECT id, upper(name) AS n FROM sales.customers WHERE region IN ('EU', 'US')) "
        "SELECT c.n, o.amount FROM c JOIN sales.orders o ON c.id = o.customer_id "
        "WHERE o.dt >= '2024-01-03' AND o.status = 'paid'"
    )
    assert _blocks(sql) == {
        "sales.customers": [(("id", "name"), "region IN ('EU', 'US')")],
        "sales.orders": [(("amount", "customer_id"), "dt >= '2024-01-03' AND status = 'paid'")],
    }


def test_outer_join_conditions_restrict_only_the_side_that_loses_rows() -> None:
    sql = (
        "SELECT c.name, o.amount FROM sales.customers c LEFT JOIN sales.orders o "
        "ON c.id = o.customer_id AND o.status = 'open' AND c.region = 'EU'"
    )
    blocks = _blocks(sql)
    assert blocks["sales.customers"] == [(("id", "name", "region"), "all rows")]
    assert blocks["sales.orders"] == [(("amount", "customer_id"), "status = 'open'")]


def test_a_table_read_twice_gets_one_block_per_restriction() -> None:
    sql = "SELECT id FROM sales.orders WHERE status = 'paid' UNION ALL SELECT id FROM sales.orders WHERE amount > 10"
    assert _blocks(sql) == {"sales.orders": [(("id",), "amount > 10"), (("id",), "status = 'paid'")]}


@pytest.mark.parametrize(
    "sql, rows",
    [
        (
            "WITH c AS (SELECT id, region FROM sales.customers) SELECT id FROM c WHERE region = 'EU'",
            "region = 'EU'",
        ),
        (
            "SELECT * FROM (SELECT region, count(*) AS n FROM sales.customers GROUP BY region) g WHERE region = 'EU'",
            "region = 'EU'",
        ),
        # the filter cannot move below LIMIT, a window function, or into a CTE another reader shares
        ("SELECT * FROM (SELECT id, region FROM sales.customers LIMIT 5) s WHERE region = 'EU'", "all rows"),
        (
            "SELECT * FROM (SELECT region, row_number() OVER (ORDER BY id) AS rn FROM sales.customers) s "
            "WHERE region = 'EU'",
            "all rows",
        ),
        (
            "WITH c AS (SELECT id, region FROM sales.customers) "
            "SELECT a.id FROM c a JOIN c b ON a.id = b.id WHERE a.region = 'EU'",
            "all rows",
        ),
    ],
)
def test_filters_move_through_derived_tables_only_when_that_keeps_the_result(sql: str, rows: str) -> None:
    [(_, found)] = _blocks(sql)["sales.customers"]
    assert found == rows


def test_column_to_column_comparisons_and_expressions_are_columns_not_predicates() -> None:
    sql = "SELECT id FROM sales.orders WHERE amount > customer_id AND upper(status) = 'PAID'"
    assert _blocks(sql) == {"sales.orders": [(("amount", "customer_id", "id", "status"), "all rows")]}


def test_multi_insert_reads_become_one_block_per_insert() -> None:
    sql = (
        "FROM sales.orders o INSERT OVERWRITE TABLE sales.paid SELECT o.id WHERE o.status = 'paid' "
        "INSERT OVERWRITE TABLE sales.big SELECT o.id WHERE o.amount > 100"
    )
    request = extract_resource_blocks(sql, SAMPLE_SCHEMA)
    assert sorted(str(b.predicates[0].op) + str(b.predicates[0].value) for b in request.blocks) == [
        "=paid",
        ">100",
    ]
    assert set(request.writes) == {"sales.paid", "sales.big"}


def test_json_shape() -> None:
    request = extract_resource_blocks("SELECT name FROM sales.customers WHERE id = 3", SAMPLE_SCHEMA)
    assert request.to_dict()["blocks"] == [
        {
            "database": "sales",
            "table": "customers",
            "columns": ["name"],
            "row_predicates": [{"table": "sales.customers", "column": "id", "op": "=", "value": 3}],
            "rows": "id = 3",
        }
    ]


@pytest.mark.parametrize(
    "sql, reason",
    [
        ("SELECT name FROM sales.customers WHERE", "does not parse"),
        ("SELECT nosuch FROM sales.customers", "cannot be fully traced"),
        ("SELECT name FROM sales.customers c JOIN sales.orders o ON c.id = o.customer_id", None),
        ("DROP TABLE sales.customers", "reads no query"),
    ],
)
def test_untraceable_statements_are_denied_with_the_reason(sql: str, reason: str | None) -> None:
    if reason is None:  # traceable with the schema, not without it: `name` could come from either table
        extract_resource_blocks(sql, SAMPLE_SCHEMA)
        with pytest.raises(SecurityError, match="cannot be fully traced"):
            extract_resource_blocks(sql)
        return
    with pytest.raises(SecurityError, match=reason):
        extract_resource_blocks(sql, SAMPLE_SCHEMA)


def test_a_script_is_read_with_its_session_use_variables_and_views() -> None:
    script = """
        USE sales;
        SET hivevar:day=2024-01-03;
        CREATE TEMPORARY VIEW paid AS SELECT customer_id, amount FROM orders WHERE status = 'paid';
        INSERT OVERWRITE TABLE sales.daily
        SELECT c.name, p.amount FROM paid p JOIN customers c ON c.id = p.customer_id WHERE c.region = '${day}'
    """
    request = extract_resource_blocks(script, SAMPLE_SCHEMA)
    assert request.operations == ("CREATE_VIEW", "INSERT_OVERWRITE")
    assert request.writes == ("sales.daily",)
    assert [(b.table, b.columns, describe_rows(b.predicates)) for b in request.blocks] == [
        ("sales.customers", ("id", "name"), "region = '2024-01-03'"),
        ("sales.orders", ("amount", "customer_id"), "status = 'paid'"),
    ]


def test_a_script_with_a_statement_whose_privileges_are_not_modelled_is_denied() -> None:
    with pytest.raises(SecurityError, match=r"statement 2 \(DROP\)"):
        extract_resource_blocks("SELECT id FROM sales.orders; DROP TABLE sales.orders", SAMPLE_SCHEMA)
