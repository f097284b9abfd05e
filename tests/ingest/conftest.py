"""Shared sample logs for the ingest tests (generated once per test run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lineage_platform.ingest.sample_logs import SampleSummary, generate_sample


@pytest.fixture(scope="session")
def sample(tmp_path_factory: pytest.TempPathFactory) -> SampleSummary:
    """A small warehouse's logs: 60 tables, 1500 query records (enough for every construct and some damage)."""
    return generate_sample(tmp_path_factory.mktemp("sample") / "logs", tables=60, statements=1500, seed=7)


def files_of(sample: SampleSummary, folder: str) -> list[Path]:
    """The sample's files in one format folder, sorted."""
    return sorted((sample.out_dir / folder).iterdir())
