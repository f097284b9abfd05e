"""The graph layer: connect to a backend, the schema, and the batched idempotent lineage writer.

Outside this package nothing imports ``graph.embedded`` or a transport: product code calls :func:`connect` and works
with the gremlinpython ``GraphTraversalSource`` it returns, asking :func:`backend_facts` what the backend offers.
"""

from lineage_platform.graph.connect import BackendFacts, backend_facts, close_all, connect, disconnect

__all__ = ["BackendFacts", "backend_facts", "close_all", "connect", "disconnect"]
