"""Grants stored in the graph decide exactly as the policy file they came from."""

from __future__ import annotations

from pathlib import Path

from lineage_platform.security.policy import check_access, load_policy
from lineage_platform.security.policy_graph import load_policy_graph, save_policy
from lineage_platform.security.resource_blocks import extract_resource_blocks

POLICY = """
roles:
  analyst: [alice, bob]
grants:
  - to: role:analyst
    database: sales
    table: orders
    columns: [id, amount, region]
    rows: "region = 'EU'"
  - to: user:carol
    database: sales
"""
QUERIES = [
    "SELECT id, amount FROM sales.orders WHERE region = 'EU'",
    "SELECT id, amount FROM sales.orders",
    "SELECT id, secret FROM sales.orders WHERE region = 'EU'",
    "SELECT name FROM sales.customers",
]


def test_graph_store_round_trips_and_decides_like_the_file(g, tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY)
    from_file = load_policy(path)
    assert save_policy(g, from_file) == 2
    assert save_policy(g, from_file) == 2 and g.V().has_label("grant").count().next() == 2  # upsert
    from_graph = load_policy_graph(g)
    assert from_graph.roles == {"analyst": {"alice", "bob"}}
    assert sorted(from_graph.grants, key=repr) == sorted(from_file.grants, key=repr)
    for user in ("alice", "bob", "carol", "dave"):
        for sql in QUERIES:
            request = extract_resource_blocks(sql)
            assert (
                check_access(from_graph, user, request).to_dict()
                == check_access(from_file, user, request).to_dict()
            )
    assert check_access(from_graph, "alice", extract_resource_blocks(QUERIES[0])).allowed
    assert not check_access(from_graph, "alice", extract_resource_blocks(QUERIES[1])).allowed
