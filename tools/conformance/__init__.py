"""TinkerPop's Gherkin conformance scenarios, run against the embedded engine.

``python -m tools.conformance`` runs the suite and prints a table per feature file; see
README.md in this folder. `run_suite` is the same as a library call.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from lineage_platform.errors import GraphError
from tools.conformance.gherkin import load_features
from tools.conformance.runner import DEFAULT_TIMEOUT, Outcome, Status, run_features

# <repo>/../shared/tinkerpop-features, where the project keeps TinkerPop's features and data graphs
DEFAULT_SUITE_ROOT = Path(
    os.environ.get(
        "LINEAGE_TINKERPOP_FEATURES", Path(__file__).resolve().parents[3] / "shared" / "tinkerpop-features"
    )
)

__all__ = ["DEFAULT_SUITE_ROOT", "Outcome", "Status", "run_suite"]


def run_suite(
    root: Path = DEFAULT_SUITE_ROOT,
    *,
    feature: str | None = None,
    scenario: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Run the scenarios under ``root/features`` on data graphs from ``root/data``.

    Args:
        feature: only the feature file whose path ends with this (``Has.feature``, ``filter/Has.feature``).
        scenario: only the scenario with this name.
        timeout: seconds one traversal may run before it is interrupted and fails.
        on_outcome: called after each scenario (progress output).
    """
    features_dir = root / "features"
    if not features_dir.is_dir():
        raise GraphError(
            f"no TinkerPop features at {features_dir}",
            hint="pass --suite (or set LINEAGE_TINKERPOP_FEATURES) to the folder holding features/ and data/",
        )
    features = load_features(features_dir)
    if feature is not None:
        features = [f for f in features if f.path.as_posix().endswith(feature)]
        if not features:
            raise GraphError(
                f"no feature file matches {feature!r}", hint="give a file name such as Has.feature"
            )
    return run_features(
        features, features_dir, root / "data", scenario_name=scenario, timeout=timeout, on_outcome=on_outcome
    )
