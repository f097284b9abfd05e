"""Choosing clustering attributes from a query log."""

from __future__ import annotations

import pytest

from lineage_platform.errors import SqlError
from lineage_platform.netflow.records import CLUSTERABLE
from lineage_platform.netflow.workload import choose_attributes, filtered_attributes

LOG = """
SELECT * FROM flows WHERE src_ip = '1.2.3.4' AND dst_ip = '5.6.7.8';
select *   from flows where src_ip = '1.2.3.4' and dst_ip = '5.6.7.8';
SELECT count(*) FROM flows WHERE dst_ip = '5.6.7.8' OR NOT dst_port = 80;
SELECT sum(bytes) FROM flows WHERE dst_ip = '9.9.9.9' GROUP BY protocol;
SELECT * FROM flows WHERE protocol = 17;
SELECT FROM WHERE;
"""


def test_matrix_is_weighted_by_frequency_and_shares_decide() -> None:
    choice = choose_attributes(LOG, threshold=0.3, maximum=3)
    assert choice.skipped == 1
    assert sorted(choice.weights) == [1, 1, 1, 2]  # the two spellings of the first query are one query
    assert len(choice.matrix) == 4 and all(len(row) == len(CLUSTERABLE) for row in choice.matrix)
    assert choice.shares["dst_ip"] == pytest.approx(4 / 5)
    assert choice.shares["src_ip"] == pytest.approx(2 / 5)
    assert choice.shares["dst_port"] == pytest.approx(1 / 5)
    assert choice.chosen == ("dst_ip", "src_ip")
    assert "dst_port" in choice.explain() and "below the threshold" in choice.explain()


def test_maximum_keeps_the_most_used() -> None:
    choice = choose_attributes(LOG, threshold=0.1, maximum=1)
    assert choice.chosen == ("dst_ip",)
    assert "only the 1 most used are kept" in choice.explain()


def test_attributes_under_or_and_not_count() -> None:
    assert filtered_attributes("SELECT * FROM f WHERE NOT (src_port = 1 OR router = 2)") == {
        "src_port",
        "router",
    }
    assert filtered_attributes("SELECT src_ip FROM f") == set()


def test_an_empty_log_is_an_error() -> None:
    with pytest.raises(SqlError, match="no parsable statement"):
        choose_attributes("  ;  ")
