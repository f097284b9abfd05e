"""Looking up the part of a catalog a statement needs."""

from __future__ import annotations

from lineage_platform.ingest.catalog_index import CatalogIndex

CATALOG = {
    "ods": {"users": {"id": "bigint", "phone": "string"}, "orders": {"id": "bigint"}},
    "dwd": {"users": {"id": "bigint"}, "Events": {"name": "string"}},
}


def test_subset_holds_every_table_named_in_any_database() -> None:
    subset = CatalogIndex(CATALOG).subset(
        "insert overwrite table dwd.users select id from ods.users where id > 0"
    )
    assert subset == {"ods": {"users": CATALOG["ods"]["users"]}, "dwd": {"users": CATALOG["dwd"]["users"]}}


def test_subset_matches_whole_words_case_insensitively() -> None:
    index = CatalogIndex(CATALOG)
    assert index.subset("select * from `dwd`.`EVENTS`") == {"dwd": {"Events": {"name": "string"}}}
    assert index.subset("select * from ods.orders_bak") is None
    assert CatalogIndex(None).subset("select * from ods.users") is None
