"""Lineage out of the graph in formats other catalogs read. See README.md in this package."""

from lineage_platform.export.openlineage import ExportSummary, export_openlineage, run_events

__all__ = ["ExportSummary", "export_openlineage", "run_events"]
