"""Ingestion of job logs: sample log generator, one reader per log format, and the Spark bulk-load job.

See README.md in this package for the log formats and the flow of the bulk load.
"""
