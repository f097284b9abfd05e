"""Callers ask the backend's facts instead of parsing graph URLs: memory:, an embedded store and a served graph."""

from __future__ import annotations

from pathlib import Path

import pytest
from gremlin_python.process.graph_traversal import GraphTraversalSource

from lineage_platform.errors import ConfigError
from lineage_platform.graph import BackendFacts, backend_facts, connect
from lineage_platform.graph.connect import IdStrategy, supports_transactions


def test_a_memory_graph_is_private_keeps_ids_and_has_no_change_feed() -> None:
    expected = BackendFacts(
        shared=False, id_strategy=IdStrategy.KEEP, change_feed=None, transactions=True, store=None
    )
    assert backend_facts("memory:") == expected
    assert backend_facts(connect("memory:")) == expected


def test_an_embedded_store_offers_its_log_and_names_its_directory(tmp_path: Path) -> None:
    url = f"embedded:{tmp_path / 'graph'}"
    facts = backend_facts(url)
    assert (facts.shared, facts.id_strategy, facts.change_feed, facts.transactions) == (
        False,
        IdStrategy.KEEP,
        "log",
        True,
    )
    assert facts.store == tmp_path / "graph"
    g = connect(url)
    g.add_v("table").property("qualifiedName", "db.t").iterate()
    assert backend_facts(g).store == (tmp_path / "graph").resolve()
    assert backend_facts(g).change_feed == "log"


def test_the_configured_url_is_asked_when_none_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINEAGE_GRAPH_URL", "memory:")
    assert backend_facts().change_feed is None
    assert backend_facts(None) == backend_facts("memory:")


@pytest.mark.parametrize("g", ["served"], indirect=True)
def test_a_served_graph_is_shared_generates_ids_and_learns_its_transactions(g: GraphTraversalSource) -> None:
    facts = backend_facts(g)
    assert (facts.shared, facts.id_strategy, facts.change_feed, facts.store) == (
        True,
        IdStrategy.GENERATE,
        "outbox",
        None,
    )
    assert facts.transactions is None  # not asked yet: a server answers on the first question
    assert supports_transactions(g) is True  # `lineage graph serve` serves the embedded engine's transactions
    assert backend_facts(g).transactions is True
    url = g.traversal_strategies.traversal_strategies[0].remote_connection.url
    assert backend_facts(url) == BackendFacts(
        shared=True, id_strategy=IdStrategy.GENERATE, change_feed="outbox", transactions=None
    )


@pytest.mark.parametrize("g", ["served"], indirect=True)
def test_a_transaction_on_a_served_graph_has_the_same_facts(g: GraphTraversalSource) -> None:
    tx = g.tx()
    gtx = tx.begin()
    try:
        assert backend_facts(gtx).shared is True
        assert backend_facts(gtx).id_strategy is IdStrategy.GENERATE
    finally:
        tx.rollback()


def test_an_unknown_url_says_which_urls_work() -> None:
    with pytest.raises(ConfigError, match="unknown graph URL 'bolt://x'") as raised:
        backend_facts("bolt://x")
    assert "embedded:PATH, memory: or ws://" in raised.value.hint
