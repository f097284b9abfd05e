"""Graph-database-backed data lineage for Hive/Spark warehouses."""
