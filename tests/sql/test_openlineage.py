"""OpenLineage columnLineage facets exported from lineage records."""

from __future__ import annotations

from lineage_platform.sql import extract_lineage
from lineage_platform.sql.openlineage import to_openlineage_facet


def test_direct_fields_and_indirect_dataset_dependencies() -> None:
    sql = (
        "INSERT INTO dw.o SELECT t.id, get_json_object(t.js, '$.a') AS a FROM ods.t t "
        "JOIN ods.u u ON t.id = u.id WHERE u.ok = 1"
    )
    facet = to_openlineage_facet(extract_lineage(sql)[0], namespace="hive://warehouse")["dw.o"]
    assert set(facet["fields"]) == {"id", "a"}
    [field] = facet["fields"]["a"]["inputFields"]
    assert (field["namespace"], field["name"], field["field"]) == ("hive://warehouse", "ods.t", "js")
    assert field["transformations"][0]["type"] == "DIRECT"
    indirect = {(f["name"], f["field"], f["transformations"][0]["subtype"]) for f in facet["dataset"]}
    assert indirect == {("ods.t", "id", "JOIN"), ("ods.u", "id", "JOIN"), ("ods.u", "ok", "FILTER")}
    assert all(f["transformations"][0]["type"] == "INDIRECT" for f in facet["dataset"])
