"""The Gremlin console: evaluate Gremlin text against the lineage graph and show the results.

``session`` evaluates text on a graph (bytecode for the embedded engine, script text for a Gremlin
Server), ``tabular`` lays results out as tables, ``display`` prints them, ``repl`` is the interactive
loop and the script runner behind ``lineage gremlin``. The notebook magic reuses ``session`` and ``tabular``.
"""

from lineage_platform.console.repl import run_console, run_script
from lineage_platform.console.session import GremlinSession, StatementResult

__all__ = ["GremlinSession", "StatementResult", "run_console", "run_script"]
