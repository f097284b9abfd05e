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


def test_a_fixed_threshold_still_decides_by_share_when_given() -> None:
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


def test_the_read_share_model_adds_an_attribute_once_the_volume_pays_for_it() -> None:
    """Two attributes filtered by different queries: the second is chosen once its share exceeds 1/sqrt(cells) of the
    first one's (here 2 against 10 queries, a ratio of 0.2: not at 16 cells, where 1/4 is needed; yes at 36, 1/6)."""
    log = "SELECT * FROM f WHERE src_ip = '1.1.1.1';" * 10 + "SELECT * FROM f WHERE dst_ip = '2.2.2.2';" * 2
    small, large = choose_attributes(log, cells=16), choose_attributes(log, cells=36)
    assert small.chosen == ("src_ip",) and large.chosen == ("src_ip", "dst_ip")
    # the chosen set reads least: src alone at 16 cells (10/16 + 2) / 12; both at 36 cells 12 / 6 / 12
    assert small.expected_read(("src_ip",)) == pytest.approx((10 / 16 + 2) / 12)
    assert large.expected_read(("src_ip", "dst_ip")) == pytest.approx(1 / 6)
    assert small.expected_read(("src_ip",)) < small.expected_read(("src_ip", "dst_ip"))
    assert large.expected_read(("src_ip", "dst_ip")) < large.expected_read(("src_ip",))
    assert "16 cells per time bucket: clustered on src_ip" in small.explain()
    assert "adding it, a query would read 25.0% of a bucket" in small.explain()


def test_the_model_prefers_fewer_attributes_on_a_tie_and_time_only_without_filters() -> None:
    together = "SELECT * FROM f WHERE dst_ip = '1.1.1.1' AND dst_port = 53;"
    assert choose_attributes(together, cells=64).chosen == ("dst_ip",)  # pinning one pins the query's cell
    unfiltered = choose_attributes("SELECT count(*) FROM f;", cells=64)
    assert unfiltered.chosen == () and unfiltered.expected_read(()) == 1.0
    assert "clustered on time only" in unfiltered.explain()


def test_attributes_under_or_and_not_count() -> None:
    assert filtered_attributes("SELECT * FROM f WHERE NOT (src_port = 1 OR router = 2)") == {
        "src_port",
        "router",
    }
    assert filtered_attributes("SELECT src_ip FROM f") == set()


def test_an_empty_log_is_an_error() -> None:
    with pytest.raises(SqlError, match="no parsable statement"):
        choose_attributes("  ;  ")
