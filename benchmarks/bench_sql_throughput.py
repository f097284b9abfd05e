"""SQL lineage throughput: statements per second on both accuracy corpora, this project vs its peers.

Each tool's adapter runs in its own fresh process (see ``benchmarks/sql_peers/runner.py``) and analyses a
whole corpus ``--passes`` times; only the tools' own calls are timed. ``cold`` is the first pass (nothing
cached yet in that process), ``warm`` the best later pass (the extractor's statement cache is warm then;
peers get the same treatment). The ratio columns compare each tool's figures to sqlglot.lineage's.

    python benchmarks/bench_sql_throughput.py [--passes 2] [--corpus dialects]   # or LINEAGE_BENCH_PASSES=10
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.sql_corpus.corpus import HIVE_SPARK, Corpus
from benchmarks.sql_corpus_dialects.corpus import CORPUS as CROSS_DIALECT
from benchmarks.sql_peers.protocol import split_statements
from benchmarks.sql_peers.runner import TOOLS, ToolRun, run_tool

CORPORA: tuple[Corpus, ...] = (HIVE_SPARK, CROSS_DIALECT)
BASELINE = "sqlglot.lineage"


def _rates(run: ToolRun, statements: int) -> tuple[float, float | None]:
    """(cold, warm) statements per second; warm is ``None`` with a single pass."""
    seconds = run.pass_seconds or []
    cold = statements / seconds[0]
    warm = statements / min(seconds[1:]) if len(seconds) > 1 else None
    return cold, warm


def print_corpus(corpus: Corpus, passes: int) -> None:
    """Run every tool over one corpus and print statements/s with the ratio to the baseline."""
    cases = corpus.cases()
    statements = sum(len(split_statements(case.sql)) for case in cases)
    runs = [run_tool(tool, cases, passes=passes, catalog=corpus.catalog()) for tool in TOOLS]
    rates = {run.tool.name: _rates(run, statements) for run in runs if not run.failure}
    base_cold, base_warm = rates.get(BASELINE, (None, None))

    print(
        f"SQL lineage throughput ({corpus.name} corpus): {len(cases)} cases, {statements} statements, "
        f"{passes} passes\n"
    )
    header = f"{'tool':<17}{'cold stmt/s':>12}{'warm stmt/s':>13}{'cold x':>9}{'warm x':>9}  failed"
    print(header)
    print("-" * len(header))
    for run in runs:
        if run.failure:
            print(f"{run.tool.name:<17}  {run.failure}")
            continue
        cold, warm = rates[run.tool.name]
        failed = sum(1 for result in (run.results or {}).values() if result["error"])
        warm_text = f"{warm:13.1f}" if warm else f"{'-':>13}"
        cold_ratio = f"{cold / base_cold:9.2f}" if base_cold else f"{'-':>9}"
        warm_ratio = f"{warm / base_warm:9.2f}" if warm and base_warm else f"{'-':>9}"
        print(f"{run.tool.name:<17}{cold:12.1f}{warm_text}{cold_ratio}{warm_ratio}  {failed}")
    print()


def main(argv: list[str] | None = None) -> int:
    """Run every tool over the selected corpora and print statements/s with the ratio to sqlglot.lineage."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--passes",
        type=int,
        default=int(os.environ.get("LINEAGE_BENCH_PASSES", "2")),
        help="passes over the corpus per tool (first is cold); env LINEAGE_BENCH_PASSES",
    )
    parser.add_argument(
        "--corpus", choices=[c.name for c in CORPORA], help="only this corpus (default: both)"
    )
    args = parser.parse_args(argv)
    if args.passes < 1:
        parser.error("--passes must be at least 1")
    for corpus in CORPORA:
        if args.corpus in (None, corpus.name):
            print_corpus(corpus, args.passes)
    print(
        f"  x = statements/s relative to {BASELINE}; cold = first pass in a fresh process, warm = best later pass."
    )
    print("  Statements a tool fails on still count: the time spent failing is part of its pass.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
