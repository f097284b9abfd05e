"""Serve the embedded graph over the Gremlin Server WebSocket protocol (``lineage graph serve``).

Modules, outermost first: ``server`` (bind, lifecycle, shutdown) → ``connection`` (one WebSocket: auth,
framing into 206/200 batches, write timeouts) → ``operations`` (what each processor/op does, on worker
threads, with timeouts) → ``sessions`` (session id → transaction); ``messages`` and ``graphbinary`` are the
envelope and the wire format, ``auth`` the credentials file. See README.md for the isolation it gives.
"""

from lineage_platform.graph.embedded.server.auth import Authenticator, add_user
from lineage_platform.graph.embedded.server.server import (
    BackgroundServer,
    GremlinServer,
    ServerSettings,
    load_authenticator,
    run_server,
)

__all__ = [
    "Authenticator",
    "BackgroundServer",
    "GremlinServer",
    "ServerSettings",
    "add_user",
    "load_authenticator",
    "run_server",
]
