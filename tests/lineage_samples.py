"""A small lineage statement the graph tests load: a profile table built from a users table, with a masked
column, an identity copy and a weak (filter) dependency."""

from lineage_platform.model import ColumnEdge, Dataset, StatementLineage

NAME = "qualifiedName"
PROFILE = StatementLineage(
    index=0,
    operation="INSERT_OVERWRITE",
    sql="INSERT OVERWRITE TABLE dws.profile SELECT id, name, sha2(ssn, 256) FROM ods.users WHERE active",
    inputs=(Dataset("ods.users"),),
    outputs=(Dataset("dws.profile"),),
    column_edges=(
        ColumnEdge("ods.users.id", "dws.profile.id"),
        ColumnEdge("ods.users.name", "dws.profile.name"),
        ColumnEdge("ods.users.ssn", "dws.profile.ssn_hash", transform="EXPRESSION", masking=True),
        ColumnEdge("ods.users.active", "dws.profile", strength="weak", transform="FILTER"),
    ),
)
