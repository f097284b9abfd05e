"""SQL text to lineage records (sqlglot): a pipeline of small passes over each statement.

See README.md in this package for the pass pipeline, the JSON contract and the public analysis API: other packages
import only the names in ``__all__`` (tests/security/test_imports.py holds security/ to that).
"""

from lineage_platform.sql.analysis import QueryUnit
from lineage_platform.sql.extract_predicates import COMPARISONS
from lineage_platform.sql.extractor import PASSES, extract_lineage, run_passes
from lineage_platform.sql.flow import Flow, Usage
from lineage_platform.sql.function_rules import (
    DEFAULT_FUNCTION_RULES,
    FunctionRule,
    function_arguments,
    function_name,
)
from lineage_platform.sql.parsing import StatementParseError
from lineage_platform.sql.rules_file import load_function_rules
from lineage_platform.sql.session import Catalog
from lineage_platform.sql.trace_statement import (
    StatementTraceError,
    TracedStatement,
    trace_script,
    trace_statement,
)
from lineage_platform.sql.tracer import ROW_CLAUSES, Tracer, leftmost_select, table_name

__all__ = [
    "COMPARISONS",
    "DEFAULT_FUNCTION_RULES",
    "PASSES",
    "ROW_CLAUSES",
    "Catalog",
    "Flow",
    "FunctionRule",
    "QueryUnit",
    "StatementParseError",
    "StatementTraceError",
    "TracedStatement",
    "Tracer",
    "Usage",
    "extract_lineage",
    "function_arguments",
    "function_name",
    "leftmost_select",
    "load_function_rules",
    "run_passes",
    "table_name",
    "trace_script",
    "trace_statement",
]
