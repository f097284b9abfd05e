"""``python -m tools.conformance``: run TinkerPop's scenarios and print the table."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from tools.conformance import DEFAULT_SUITE_ROOT, run_suite
from tools.conformance.report import (
    failure_report,
    read_expected,
    regressions,
    summary_table,
)
from tools.conformance.report import (
    write_expected as record_passes,
)
from tools.conformance.runner import DEFAULT_TIMEOUT, Outcome, Status


@click.command()
@click.option(
    "--suite",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=DEFAULT_SUITE_ROOT,
    show_default=True,
    help="Folder holding TinkerPop's features/ and data/.",
)
@click.option("--feature", default=None, help="Run only the feature file whose path ends with this.")
@click.option("--scenario", default=None, help="Run only the scenario with this name.")
@click.option(
    "--timeout", type=float, default=DEFAULT_TIMEOUT, show_default=True, help="Seconds per traversal."
)
@click.option("-v", "--verbose", is_flag=True, help="Print each failure's traversal, expected and actual.")
@click.option(
    "--write-expected",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the names of the passing scenarios to this file.",
)
@click.option(
    "--expected",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Exit 1 when a scenario listed in this file does not pass.",
)
def main(
    suite: Path,
    feature: str | None,
    scenario: str | None,
    timeout: float,
    verbose: bool,
    write_expected: Path | None,
    expected: Path | None,
) -> None:
    """Run TinkerPop's Gherkin conformance scenarios against the embedded engine."""

    def show(outcome: Outcome) -> None:
        if verbose and outcome.status in (Status.FAIL, Status.UNSUPPORTED):
            click.echo(failure_report(outcome) + "\n")

    outcomes = run_suite(suite, feature=feature, scenario=scenario, timeout=timeout, on_outcome=show)
    click.echo(summary_table(outcomes))
    if write_expected is not None:
        click.echo(f"wrote {record_passes(outcomes, write_expected)} passing scenarios to {write_expected}")
    if expected is not None:
        broken = regressions(outcomes, read_expected(expected))
        for outcome in broken:
            click.echo(
                f"REGRESSION {outcome.key}: {outcome.detail.splitlines()[0] if outcome.detail else ''}"
            )
        if broken:
            sys.exit(1)


if __name__ == "__main__":
    main()
