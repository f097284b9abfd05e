"""Masking driven by labels in the graph: declared on a base column, propagated to a derived table."""

from __future__ import annotations

from lineage_platform.graph.writer import LineageWriter
from lineage_platform.labels import Declaration, Label, declare, propagate
from lineage_platform.security.duckdb_masks import to_duckdb
from lineage_platform.security.masking import mask_query, sensitive_columns
from lineage_platform.security.masking_rules import MaskingPolicy, MaskRule
from lineage_platform.sql import extract_lineage
from tools.security.sample_warehouse import SAMPLE_SCHEMA

CONTACTS = "CREATE TABLE sales.contacts AS SELECT id, upper(email) AS mail, region FROM sales.customers"
POLICY = MaskingPolicy(
    label_rules=(("PII", None, MaskRule("hash")), ("SENSITIVITY", "low", MaskRule("redact")))
)


def _labelled_graph(g):
    LineageWriter(g).write(extract_lineage(CONTACTS, SAMPLE_SCHEMA))
    declare(g, [Declaration("sales.customers.email", (Label("PII"),))], declared_by="tester")
    propagate(g)
    return g


def test_declared_and_propagated_labels_select_the_rule(g) -> None:
    graph = _labelled_graph(g)
    found = sensitive_columns(
        POLICY, ["sales.customers.email", "sales.contacts.mail", "sales.contacts.region"], graph
    )
    assert found == {"sales.customers.email": MaskRule("hash"), "sales.contacts.mail": MaskRule("hash")}


def test_a_propagated_label_masks_the_derived_table_on_duckdb(g, warehouse) -> None:
    graph = _labelled_graph(g)
    warehouse.execute("DROP TABLE IF EXISTS sales.contacts")
    warehouse.execute(to_duckdb(CONTACTS))
    schema = {
        "sales": {**SAMPLE_SCHEMA["sales"], "contacts": {"id": "int", "mail": "string", "region": "string"}}
    }
    emails = {row[0].upper() for row in warehouse.execute("SELECT email FROM sales.customers").fetchall()}
    for mode in ("before", "after"):
        sql = mask_query(
            "SELECT c.mail, c.region FROM sales.contacts c WHERE c.id < 10",
            {"user:ann"},
            POLICY,
            mode,
            schema=schema,
            graph=graph,
        ).sql
        rows = warehouse.execute(to_duckdb(sql)).fetchall()
        assert rows and not {mail for mail, _ in rows} & emails
        assert {region for _, region in rows} <= {"EU", "US", "APAC", "LATAM"}  # not sensitive: untouched
