"""SQL text to lineage records (sqlglot): a pipeline of small passes over each statement.

See README.md in this package for the pass pipeline and the JSON contract.
"""

from lineage_platform.sql.extractor import PASSES, extract_lineage, run_passes
from lineage_platform.sql.function_rules import DEFAULT_FUNCTION_RULES, FunctionRule
from lineage_platform.sql.rules_file import load_function_rules
from lineage_platform.sql.session import Catalog

__all__ = [
    "DEFAULT_FUNCTION_RULES",
    "PASSES",
    "Catalog",
    "FunctionRule",
    "extract_lineage",
    "load_function_rules",
    "run_passes",
]
