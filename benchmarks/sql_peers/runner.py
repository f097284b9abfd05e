"""Run each lineage tool's adapter in its own interpreter and collect its answers.

The project's extractor and sqlglot run in the main venv; sqllineage and openlineage-sql run in the
separate peers venv (``make peers-venv``) so their pinned dependencies never meet ours.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.sql_corpus.corpus import HIVE_SPARK, Case

REPO_ROOT = Path(__file__).resolve().parents[2]
PEERS_PYTHON = REPO_ROOT / ".venv-peers" / "bin" / "python"


@dataclass(frozen=True)
class Tool:
    """A lineage tool: its display name, adapter module and the interpreter that runs it."""

    name: str
    module: str
    python: Path

    def available(self) -> bool:
        """Whether the tool's interpreter exists."""
        return self.python.exists()


TOOLS: tuple[Tool, ...] = (
    Tool("lineage_platform", "benchmarks.sql_peers.lineage_platform_adapter", Path(sys.executable)),
    Tool("sqllineage", "benchmarks.sql_peers.sqllineage_adapter", PEERS_PYTHON),
    Tool("openlineage-sql", "benchmarks.sql_peers.openlineage_adapter", PEERS_PYTHON),
    Tool("sqlglot.lineage", "benchmarks.sql_peers.sqlglot_adapter", Path(sys.executable)),
)


@dataclass
class ToolRun:
    """A tool's answer on the corpus, or why there is none."""

    tool: Tool
    version: str = ""
    results: dict[str, dict[str, Any]] | None = None
    pass_seconds: list[float] | None = None
    failure: str | None = None


def run_tool(
    tool: Tool,
    cases: list[Case],
    passes: int = 1,
    timeout: float = 600.0,
    catalog: dict[str, Any] | None = None,
) -> ToolRun:
    """Run ``tool``'s adapter over ``cases`` ``passes`` times in a fresh process, with ``catalog``
    (default: the Hive / Spark corpus's)."""
    if not tool.available():
        return ToolRun(tool, failure=f"not installed ({tool.python} missing; run `make peers-venv`)")
    request = {
        "catalog": HIVE_SPARK.catalog() if catalog is None else catalog,
        "passes": passes,
        "cases": [case.request() for case in cases],
    }
    try:
        completed = subprocess.run(
            [str(tool.python), "-m", tool.module],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            cwd=REPO_ROOT,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return ToolRun(tool, failure=f"timed out after {timeout:.0f} s")
    if completed.returncode != 0:
        last_line = (completed.stderr.strip().splitlines() or ["no output"])[-1]
        return ToolRun(tool, failure=f"adapter failed: {last_line[:200]}")
    answer = json.loads(completed.stdout)
    return ToolRun(tool, answer["version"], answer["results"], answer["pass_seconds"])
