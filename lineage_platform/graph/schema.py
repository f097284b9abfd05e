"""Apply the graph schema (graph_schema/schema.yaml) to a backend.

The embedded engine enforces the schema's unique keys and builds its indexes whenever a store is opened, so
applying it there means opening (or creating) the store. A Gremlin Server backend (JanusGraph) gets the generated
management script, submitted as a script request; the script only creates what is missing. A server without a
Groovy script engine cannot run it: the error says to apply the script at start-up or with the management API.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graph_schema import load_schema
from graph_schema.janusgraph import janusgraph_script
from lineage_platform.config import load_settings
from lineage_platform.errors import GraphError
from lineage_platform.graph.connect import backend_facts, connect, script_client


@dataclass(frozen=True)
class SchemaReport:
    """What applying the schema did."""

    url: str
    version: int
    vertex_labels: int
    edge_labels: int
    unique_constraints: int
    indexed_keys: int
    server_reply: str | None = None


def apply_schema(
    url: str | None = None, *, client_factory: Callable[[str], Any] | None = None
) -> SchemaReport:
    """Apply the schema to the graph at ``url``; a Gremlin Server gets the JanusGraph management script."""
    url = url or load_settings().graph_url
    schema = load_schema()
    reply = None
    if backend_facts(url).shared:
        reply = _submit_script(url, janusgraph_script(schema), client_factory)
    else:
        connect(url).V().limit(0).to_list()  # opens (and so creates) the store with the schema's constraints
    return SchemaReport(
        url,
        schema.version,
        len(schema.vertex_labels),
        len(schema.edge_labels),
        len(schema.unique_keys),
        len(schema.indexed_keys),
        reply,
    )


def _no_script_engine(exc: Exception) -> bool:
    """True when the server could not even read the script: it runs gremlin-lang only, no Groovy engine."""
    text = str(exc)
    return "Failed to interpret Gremlin query" in text or "script engine" in text.lower()


def _submit_script(url: str, script: str, client_factory: Callable[[str], Any] | None) -> str:
    client = (client_factory or script_client)(url)  # credentials, and a transport safe inside an event loop
    try:
        return str(client.submit(script).all().result())
    except Exception as exc:  # the server's own message is the useful part
        if _no_script_engine(exc):
            raise GraphError(
                f"{url} cannot run the schema script: the server has no Groovy script engine",
                hint="start JanusGraph with graph_schema/janusgraph/schema.groovy applied at start-up, or run that "
                "script with the JanusGraph management API (gremlin.sh); `lineage graph init --print-janusgraph` "
                "prints it",
            ) from exc
        raise GraphError(
            f"applying the schema to {url} failed: {exc}",
            hint="the server must be JanusGraph with a `graph` binding and schema.default=none allowed to change",
        ) from exc
    finally:
        client.close()
