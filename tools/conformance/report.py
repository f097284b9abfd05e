"""Tables and files made from scenario outcomes: per-feature counts, totals, the core pass rate, the
expected-passes file and the failure details."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tools.conformance.runner import Outcome, Status

_COLUMNS = (Status.PASS, Status.FAIL, Status.UNSUPPORTED, Status.SKIP)


@dataclass(frozen=True)
class Totals:
    """Counts over a set of outcomes, and the pass rate on the core scenarios that ran (not skipped)."""

    counts: Counter[Status]
    core_run: int
    core_passed: int

    @property
    def core_rate(self) -> float:
        """Share of core-step scenarios (skips excluded) that pass."""
        return self.core_passed / self.core_run if self.core_run else 0.0


def totals(outcomes: Iterable[Outcome]) -> Totals:
    """Sum outcomes by status and compute the core pass rate."""
    outcomes = list(outcomes)
    core = [o for o in outcomes if o.core and o.status is not Status.SKIP]
    return Totals(
        counts=Counter(o.status for o in outcomes),
        core_run=len(core),
        core_passed=sum(o.status is Status.PASS for o in core),
    )


def summary_table(outcomes: list[Outcome]) -> str:
    """A plain-text table: one row per feature file with pass/fail/unsupported/skip, then totals."""
    by_feature: dict[str, Counter[Status]] = {}
    for outcome in outcomes:
        by_feature.setdefault(outcome.feature, Counter())[outcome.status] += 1
    width = max([len("feature"), len("total"), *(len(name) for name in by_feature)])
    header = f"{'feature':<{width}} " + " ".join(f"{s.value:>11}" for s in _COLUMNS)
    lines = [header, "-" * len(header)]
    for name in sorted(by_feature):
        lines.append(f"{name:<{width}} " + " ".join(f"{by_feature[name][s]:>11}" for s in _COLUMNS))
    overall = totals(outcomes)
    lines.append("-" * len(header))
    lines.append(f"{'total':<{width}} " + " ".join(f"{overall.counts[s]:>11}" for s in _COLUMNS))
    lines.append(
        f"core-step scenarios: {overall.core_passed}/{overall.core_run} pass ({overall.core_rate:.1%}); "
        f"all scenarios run: {overall.counts[Status.PASS]}/{len(outcomes) - overall.counts[Status.SKIP]} pass"
    )
    return "\n".join(lines)


def failure_report(outcome: Outcome) -> str:
    """A failure with its traversal, expected and actual values, for ``-v``."""
    traversal = "\n".join("      " + line.strip() for line in outcome.traversal.splitlines())
    detail = "\n".join("    " + line.strip() for line in outcome.detail.splitlines())
    return f"{outcome.status.value.upper()} {outcome.key}\n{traversal}\n{detail}"


def write_expected(outcomes: Iterable[Outcome], path: Path) -> int:
    """Record the keys of the passing scenarios, one per line, sorted; return how many."""
    keys = sorted(o.key for o in outcomes if o.status is Status.PASS)
    header = "# scenarios the embedded engine passes; regenerate with --write-expected (see README.md)\n"
    path.write_text(header + "".join(key + "\n" for key in keys), encoding="utf-8")
    return len(keys)


def read_expected(path: Path) -> set[str]:
    """The scenario keys listed in an expected-passes file (comments and blank lines ignored)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def regressions(outcomes: Iterable[Outcome], expected: set[str]) -> list[Outcome]:
    """Outcomes of expected-to-pass scenarios that did not pass."""
    return [o for o in outcomes if o.key in expected and o.status is not Status.PASS]
