"""SQL lineage accuracy: this project's extractor vs sqllineage, openlineage-sql and sqlglot.lineage.

Runs every tool over the hand-written corpus (``benchmarks/sql_corpus/*.yaml``), scores table-level,
strong-column and weak-column edges (precision / recall / F1, micro-averaged over all cases) and prints one
side-by-side table, then the per-construct breakdown of this project's extractor. ``-v`` lists its misses.

    python benchmarks/bench_sql_accuracy.py [-v] [--construct cte] [--case cte_001]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.sql_corpus.corpus import CONSTRUCTS, Case, load_corpus
from benchmarks.sql_corpus.scoring import CaseScore, Tally, by_construct, score_case, tally
from benchmarks.sql_peers.runner import TOOLS, ToolRun, run_tool

WEAK_CAPABLE = {"lineage_platform"}
"""Tools that can express weak (filter / join / grouping) edges at all; the others print n/a there."""

FOOTNOTES = (
    "P/R/F1 are micro-averaged over all cases; `column F1` scores strong and weak edges together.",
    "weak n/a: sqllineage, openlineage-sql and sqlglot.lineage only follow value flow; their column F1 is "
    "still computed over all expected edges, so it is bounded by the share of strong edges.",
    "openlineage-sql and sqlglot.lineage name an INSERT's target column by the SELECT's output name (no "
    "positional or column-list mapping); sqllineage maps positions through the catalog.",
    "Temporary views/tables are resolved through to base columns by the scorer for every tool alike; "
    "self-edges (a dataset feeding itself) are not scored.",
    "Peers get each script statement by statement with the case's default database; a tool that does "
    "not track USE / CACHE TABLE / temporary tables loses those edges (their hops are not invented for it).",
    "`failed` counts cases where the tool raised; such a case scores as if the tool found nothing.",
)


def _prf(counts: Tally) -> str:
    return f"{counts.precision:5.3f} {counts.recall:5.3f} {counts.f1:5.3f}"


def _select(cases: list[Case], construct: str | None, case_id: str | None) -> list[Case]:
    return [
        case
        for case in cases
        if (construct is None or construct in case.constructs) and (case_id is None or case.id == case_id)
    ]


def _scores(run: ToolRun, cases: list[Case]) -> list[CaseScore]:
    return [score_case(case, (run.results or {}).get(case.id)) for case in cases]


def print_side_by_side(runs: list[ToolRun], cases: list[Case]) -> None:
    """One row per tool: table, strong, weak and combined column scores."""
    header = (
        f"{'tool':<17}{'version':<10}{'failed':>7}  {'table P R F1':<18}  {'strong P R F1':<18}"
        f"  {'weak P R F1':<18}  {'column F1':>9}"
    )
    print(f"SQL lineage accuracy on {len(cases)} hand-written cases\n")
    print(header)
    print("-" * len(header))
    for run in runs:
        if run.failure:
            print(f"{run.tool.name:<17}{'-':<10}{'-':>7}  {run.failure}")
            continue
        scores = _scores(run, cases)
        totals = tally(scores)
        failed = sum(1 for s in scores if s.error)
        weak = _prf(totals["weak"]) if run.tool.name in WEAK_CAPABLE else f"{'n/a':<17}"
        print(
            f"{run.tool.name:<17}{run.version:<10}{failed:>7}  {_prf(totals['table'])}  "
            f"{_prf(totals['strong'])}  {weak}  {totals['column'].f1:9.3f}"
        )
    print()
    for number, note in enumerate(FOOTNOTES, 1):
        print(f"  [{number}] {note}")


def print_constructs(run: ToolRun, cases: list[Case]) -> None:
    """Per construct: case count and the tool's table / strong / weak / column F1."""
    print(f"\nPer construct ({run.tool.name}):\n")
    print(f"{'construct':<20}{'cases':>6}  {'table':>6}{'strong':>7}{'weak':>7}{'column':>7}  description")
    for construct, (count, totals) in by_construct(_scores(run, cases)).items():
        figures = "".join(f"{totals[c].f1:>7.3f}" for c in ("strong", "weak", "column"))
        print(f"{construct:<20}{count:>6}  {totals['table'].f1:6.3f}{figures}  {CONSTRUCTS[construct]}")


def print_misses(run: ToolRun, cases: list[Case]) -> None:
    """Each imperfect case with its missing (-) and extra (+) edges."""
    print(f"\nMisses ({run.tool.name}):")
    for score in _scores(run, cases):
        lines = []
        if score.error:
            lines.append(f"    error: {score.error}")
        for category in ("table", "strong", "weak"):
            missing, extra = score.misses(category)
            lines += [f"    - {category:<6} {' -> '.join(edge)}" for edge in sorted(missing)]
            lines += [f"    + {category:<6} {' -> '.join(edge)}" for edge in sorted(extra)]
        if lines:
            print(f"  {score.case.id} ({score.case.file})")
            print("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    """Run all tools over the corpus and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="list our extractor's misses per case")
    parser.add_argument(
        "--construct", choices=sorted(CONSTRUCTS), help="only cases tagged with this construct"
    )
    parser.add_argument("--case", help="only the case with this id")
    parser.add_argument("--tool", action="append", help="only these tools (repeatable)")
    args = parser.parse_args(argv)
    cases = _select(load_corpus(), args.construct, args.case)
    if not cases:
        parser.error("no corpus case matches the filters")
    tools = [tool for tool in TOOLS if not args.tool or tool.name in args.tool]
    runs = [run_tool(tool, cases) for tool in tools]
    print_side_by_side(runs, cases)
    ours = next((run for run in runs if run.tool.name == "lineage_platform" and not run.failure), None)
    if ours:
        print_constructs(ours, cases)
        if args.verbose:
            print_misses(ours, cases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
