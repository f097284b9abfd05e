"""SQL lineage accuracy: this project's extractor vs sqllineage, openlineage-sql and sqlglot.lineage.

Runs every tool over both hand-written corpora — the Hive / Spark corpus (``benchmarks/sql_corpus/``) and the
cross-dialect corpus (``benchmarks/sql_corpus_dialects/``), each with its own catalog, every case in its own
dialect — and scores table-level, strong-column and weak-column edges (precision / recall / F1,
micro-averaged). Per corpus it prints one side-by-side table, table F1 / column F1 per tool per dialect, and
the per-construct breakdown of this project's extractor next to the peers' column F1. ``-v`` lists its misses.

    python benchmarks/bench_sql_accuracy.py [-v] [--corpus dialects] [--dialect tsql] [--construct cte]
                                            [--case cte_001] [--tool sqllineage]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.sql_corpus.corpus import DIALECTS, HIVE_SPARK, Case, Corpus
from benchmarks.sql_corpus.scoring import CaseScore, Tally, by_construct, by_dialect, score_case, tally
from benchmarks.sql_corpus_dialects.corpus import CORPUS as CROSS_DIALECT
from benchmarks.sql_peers.runner import TOOLS, ToolRun, run_tool

CORPORA: tuple[Corpus, ...] = (HIVE_SPARK, CROSS_DIALECT)
OURS = "lineage_platform"
WEAK_CAPABLE = {OURS}
"""Tools that can express weak (filter / join / grouping) edges at all; the others print n/a there."""

FOOTNOTES = (
    "P/R/F1 are micro-averaged over all cases; `column F1` scores strong and weak edges together.",
    "weak n/a: sqllineage, openlineage-sql and sqlglot.lineage only follow value flow; their column F1 is "
    "still computed over all expected edges, so it is bounded by the share of strong edges.",
    "openlineage-sql and sqlglot.lineage name an INSERT's target column by the SELECT's output name (no "
    "positional or column-list mapping); sqllineage maps positions through the catalog.",
    "Temporary views/tables are resolved through to base columns by the scorer for every tool alike; "
    "self-edges (a dataset feeding itself) are not scored; catalogs of three-part names are dropped.",
    "Peers get each script statement by statement with the case's default database and dialect; a tool "
    "that does not track USE / CACHE TABLE / temporary tables loses those edges.",
    "`failed` counts cases where the tool raised; such a case scores as if the tool found nothing.",
)


def _prf(counts: Tally) -> str:
    return f"{counts.precision:5.3f} {counts.recall:5.3f} {counts.f1:5.3f}"


def _select(cases: list[Case], args: argparse.Namespace) -> list[Case]:
    return [
        case
        for case in cases
        if (args.construct is None or args.construct in case.constructs)
        and (args.case is None or case.id == args.case)
        and (args.dialect is None or case.dialect == args.dialect)
    ]


def _scores(run: ToolRun, cases: list[Case], corpus: Corpus) -> list[CaseScore]:
    return [score_case(case, (run.results or {}).get(case.id), corpus.catalogs) for case in cases]


def print_side_by_side(runs: list[ToolRun], scores: dict[str, list[CaseScore]], corpus: Corpus) -> None:
    """One row per tool: table, strong, weak and combined column scores."""
    header = (
        f"{'tool':<17}{'version':<10}{'failed':>7}  {'table P R F1':<18}  {'strong P R F1':<18}"
        f"  {'weak P R F1':<18}  {'column F1':>9}"
    )
    count = len(next(iter(scores.values()), []))
    print(f"SQL lineage accuracy on {count} hand-written cases ({corpus.name} corpus)\n")
    print(header)
    print("-" * len(header))
    for run in runs:
        if run.failure:
            print(f"{run.tool.name:<17}{'-':<10}{'-':>7}  {run.failure}")
            continue
        totals = tally(scores[run.tool.name])
        failed = sum(1 for s in scores[run.tool.name] if s.error)
        weak = _prf(totals["weak"]) if run.tool.name in WEAK_CAPABLE else f"{'n/a':<17}"
        print(
            f"{run.tool.name:<17}{run.version:<10}{failed:>7}  {_prf(totals['table'])}  "
            f"{_prf(totals['strong'])}  {weak}  {totals['column'].f1:9.3f}"
        )


def print_dialects(runs: list[ToolRun], scores: dict[str, list[CaseScore]]) -> None:
    """Per dialect: case count, then table F1 / column F1 of every tool."""
    names = [run.tool.name for run in runs if not run.failure]
    if not names:
        return
    print(
        f"\nPer dialect, table F1 / column F1:\n\n{'dialect':<11}{'cases':>6}"
        + "".join(f"  {n:>17}" for n in names)
    )
    per_tool = {name: by_dialect(scores[name]) for name in names}
    for dialect, (count, _) in per_tool[names[0]].items():
        cells = "".join(
            f"  {per_tool[n][dialect][1]['table'].f1:>8.3f} / {per_tool[n][dialect][1]['column'].f1:.3f}"
            for n in names
        )
        print(f"{dialect:<11}{count:>6}{cells}")


def print_constructs(runs: list[ToolRun], scores: dict[str, list[CaseScore]], corpus: Corpus) -> None:
    """Per construct: case count, this project's table / strong / weak / column F1, the peers' column F1."""
    peers = [run.tool.name for run in runs if not run.failure and run.tool.name != OURS]
    print(f"\nPer construct ({OURS}; peers: column F1):\n")
    print(
        f"{'construct':<22}{'cases':>6}  {'table':>6}{'strong':>7}{'weak':>7}{'column':>7}"
        + "".join(f"{name[:10]:>11}" for name in peers)
        + "  description"
    )
    peer_totals = {name: by_construct(scores[name]) for name in peers}
    for construct, (count, totals) in by_construct(scores[OURS]).items():
        figures = "".join(f"{totals[c].f1:>7.3f}" for c in ("strong", "weak", "column"))
        peer_figures = "".join(f"{peer_totals[n][construct][1]['column'].f1:>11.3f}" for n in peers)
        print(
            f"{construct:<22}{count:>6}  {totals['table'].f1:6.3f}{figures}{peer_figures}  "
            f"{corpus.constructs[construct]}"
        )


def print_misses(scores: list[CaseScore]) -> None:
    """Each imperfect case with its missing (-) and extra (+) edges."""
    print(f"\nMisses ({OURS}):")
    for score in scores:
        lines = []
        if score.error:
            lines.append(f"    error: {score.error}")
        for category in ("table", "strong", "weak"):
            missing, extra = score.misses(category)
            lines += [f"    - {category:<6} {' -> '.join(edge)}" for edge in sorted(missing)]
            lines += [f"    + {category:<6} {' -> '.join(edge)}" for edge in sorted(extra)]
        if lines:
            print(f"  {score.case.id} ({score.case.file}, {score.case.dialect})")
            print("\n".join(lines))


def run_corpus(corpus: Corpus, cases: list[Case], tool_names: list[str] | None, verbose: bool) -> None:
    """Run the selected tools over one corpus's cases and print its tables."""
    tools = [tool for tool in TOOLS if not tool_names or tool.name in tool_names]
    runs = [run_tool(tool, cases, catalog=corpus.catalog()) for tool in tools]
    scores = {run.tool.name: _scores(run, cases, corpus) for run in runs if not run.failure}
    print_side_by_side(runs, scores, corpus)
    print_dialects(runs, scores)
    if OURS in scores:
        print_constructs(runs, scores, corpus)
        if verbose:
            print_misses(scores[OURS])
    print()


def main(argv: list[str] | None = None) -> int:
    """Run all tools over the selected corpora and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="list our extractor's misses per case")
    parser.add_argument(
        "--corpus", choices=[c.name for c in CORPORA], help="only this corpus (default: both)"
    )
    parser.add_argument("--dialect", choices=DIALECTS, help="only cases in this dialect")
    parser.add_argument(
        "--construct", choices=sorted(CROSS_DIALECT.constructs), help="only cases tagged with this construct"
    )
    parser.add_argument("--case", help="only the case with this id")
    parser.add_argument("--tool", action="append", help="only these tools (repeatable)")
    args = parser.parse_args(argv)
    selected = [(c, _select(c.cases(), args)) for c in CORPORA if args.corpus in (None, c.name)]
    selected = [(corpus, cases) for corpus, cases in selected if cases]
    if not selected:
        parser.error("no corpus case matches the filters")
    for corpus, cases in selected:
        run_corpus(corpus, cases, args.tool, args.verbose)
    for number, note in enumerate(FOOTNOTES, 1):
        print(f"  [{number}] {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
