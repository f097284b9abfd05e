"""The subscriber's retention checks (Tansu cannot delete records, so the broker tests cannot trim a topic)."""

from __future__ import annotations

import pytest

from lineage_platform.cdc.errors import BootstrapRequired
from lineage_platform.cdc.subscriber import Position, require_nothing_trimmed, require_resumable


def test_a_subscriber_whose_next_offset_was_deleted_must_bootstrap() -> None:
    require_resumable("t", 0, Position(next_offset=5, scn=9, seq=0), first_offset=5)
    require_resumable("t", 0, None, first_offset=100)
    with pytest.raises(
        BootstrapRequired, match=r"t\[2\] now starts at offset 6.*stopped at offset 5"
    ) as raised:
        require_resumable("t", 2, Position(next_offset=5, scn=9, seq=0), first_offset=6)
    assert "--rebootstrap" in raised.value.hint


@pytest.mark.parametrize(
    ("offset", "scn", "lost"),
    [(0, 50, False), (7, 10, False), (7, 11, True)],
    ids=["untrimmed", "trimmed-before-snapshot", "trimmed-after-snapshot"],
)
def test_a_new_subscribers_first_record_must_not_follow_a_gap(offset: int, scn: int, lost: bool) -> None:
    if lost:
        with pytest.raises(BootstrapRequired, match="SCN 11"):
            require_nothing_trimmed("t", 0, offset, scn, snapshot_scn=10)
    else:
        require_nothing_trimmed("t", 0, offset, scn, snapshot_scn=10)
