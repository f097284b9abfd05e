"""The cross-dialect SQL lineage corpus (``benchmarks/sql_corpus_dialects/*.yaml``), written apart from the
extractor: one file per dialect over a retail / finance / events warehouse (``catalog.json``). See
``README.md`` next to this module for the conventions each expectation follows.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.sql_corpus.corpus import CONSTRUCTS as HIVE_SPARK_CONSTRUCTS
from benchmarks.sql_corpus.corpus import Corpus

CONSTRUCTS: dict[str, str] = {
    **HIVE_SPARK_CONSTRUCTS,
    "merge": "MERGE INTO (any dialect)",
    "merge_delete": "MERGE ... WHEN MATCHED THEN DELETE",
    "merge_values_subquery": "MERGE ... INSERT VALUES with a scalar subquery",
    "update_from": "UPDATE ... FROM (Postgres / Snowflake / T-SQL)",
    "update_join": "UPDATE with a JOIN (MySQL / T-SQL)",
    "update": "plain UPDATE",
    "delete_using": "DELETE ... USING / DELETE with a JOIN",
    "delete": "plain DELETE",
    "select_into": "SELECT ... INTO a new table (Postgres / T-SQL)",
    "view_columns": "CREATE VIEW with a column list",
    "view_parenthesised": "CREATE VIEW whose body is in parentheses",
    "cte_chained": "CTEs reading earlier CTEs",
    "cte_recursive": "WITH RECURSIVE",
    "cte_unused": "a CTE the query never reads",
    "subquery_scalar": "scalar subquery in the SELECT list",
    "subquery_correlated": "correlated subquery",
    "subquery_exists": "EXISTS / NOT EXISTS",
    "subquery_in": "IN / NOT IN subquery",
    "subquery_derived": "derived table in FROM",
    "join_using": "JOIN ... USING",
    "join_natural": "NATURAL JOIN",
    "join_lateral": "LATERAL subquery / CROSS APPLY / OUTER APPLY",
    "join_self": "a table joined to itself",
    "qualify": "QUALIFY",
    "pivot": "PIVOT",
    "unpivot": "UNPIVOT",
    "unnest": "UNNEST / CROSS JOIN UNNEST",
    "flatten": "Snowflake LATERAL FLATTEN",
    "complex_array": "array element access",
    "three_part_name": "catalog.schema.table names",
    "file_source": "Spark file sources (parquet.`/path`)",
    "insert_directory": "INSERT OVERWRITE DIRECTORY",
    "clone": "CREATE TABLE ... CLONE",
    "create_like": "CREATE TABLE ... LIKE",
    "exchange_partition": "ALTER TABLE ... EXCHANGE PARTITION",
    "truncate": "TRUNCATE TABLE",
    "no_lineage_ddl": "DDL that moves no data (ADD PARTITION, ADD COLUMN, CREATE INDEX, GRANT, ...)",
    "quoting": "quoted identifiers (backticks, brackets, double quotes)",
    "case_insensitive": "identifiers in another case than the catalog",
    "positional_insert": "INSERT without a column list (positional)",
    "insert_values": "INSERT ... VALUES (no source)",
    "unaliased_expr": "an unaliased expression named by the engine's own rule",
    "string_funcs": "string functions and concatenation operators",
    "date_funcs": "date / time functions",
    "null_funcs": "COALESCE / NULLIF / IFNULL / ISNULL",
    "distinct_on": "Postgres DISTINCT ON",
    "top_limit": "TOP / LIMIT / FETCH FIRST",
    "returning": "INSERT / UPDATE ... RETURNING / OUTPUT",
    "temp_table_hash": "T-SQL #temp tables",
    "variables": "session variables / parameters",
    "transaction": "BEGIN / COMMIT around statements",
    "script": "several statements in one case",
    "replace_into": "MySQL REPLACE INTO / INSERT ... ON DUPLICATE KEY UPDATE / ON CONFLICT",
    "by_name": "UNION ... BY NAME / CORRESPONDING, INSERT ... BY NAME (columns matched by name)",
    "whole_row": "a table alias used as a value (TO_JSON_STRING(t), row_to_json(t))",
    "script_transform": "Hive / Spark SELECT TRANSFORM (...) USING 'script' AS (...)",
}
"""Every construct tag of this corpus: the Hive / Spark corpus's tags plus the cross-dialect ones."""

CORPUS = Corpus(
    name="dialects",
    directory=Path(__file__).resolve().parent,
    constructs=CONSTRUCTS,
    catalogs=frozenset({"hive", "iceberg", "spark_catalog", "analytics", "warehouse", "acme"}),
)
"""The cross-dialect corpus; three-part names use the catalogs listed here."""
