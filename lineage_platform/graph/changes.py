"""The embedded store's committed changes, for change capture: the one door into graph.embedded from outside.

Change capture tails the store's durable log (committed transactions as (SCN, op tuples)) and rebuilds the graph
as of an SCN from the latest snapshot; these are the store's own readers, exposed here so that nothing outside
``graph/`` imports the engine's modules directly.
"""

from lineage_platform.graph.embedded.memgraph import MemGraph
from lineage_platform.graph.embedded.storage import LogTail, read_since
from lineage_platform.graph.embedded.storage_format import read_snapshot

__all__ = ["LogTail", "MemGraph", "read_since", "read_snapshot"]
