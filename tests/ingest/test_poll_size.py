"""The collector sizes each poll so that applying it stays within half the max poll interval."""

from __future__ import annotations

import pytest

from lineage_platform.ingest.collector import next_poll_size


@pytest.mark.parametrize(
    ("records", "seconds", "expected"),
    [
        (500, 26.0, 48),  # SQL hook events at ~19/s: 500 a poll would outlast a 5 s interval
        (20, 0.01, 40),  # a fast stream grows at most twofold per poll
        (400, 0.1, 500),  # ... and never beyond max_records
        (3, 60.0, 1),  # one very slow event still moves on, one at a time
        (10, 0.0, 20),  # no measurable time: grow
    ],
)
def test_a_poll_fits_half_the_interval_at_the_rate_just_seen(
    records: int, seconds: float, expected: int
) -> None:
    size = next_poll_size(records, seconds, max_records=500, max_poll_interval_ms=5000)
    assert size == expected
    if seconds:
        assert (
            size == 1 or size * seconds / records <= 2.5
        )  # applying the next poll at this rate: within 2.5 s
