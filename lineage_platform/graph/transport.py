"""The WebSocket transport for ws:// graphs: gremlinpython's aiohttp transport, driven from a thread of its own.

gremlinpython 3.7.3's ``AiohttpTransport`` runs each connect/write/read/close with ``loop.run_until_complete``
in the calling thread, which fails with "Cannot run the event loop while another loop is running" wherever the
caller already runs an asyncio loop (a Jupyter kernel, an async web app). Its own remedy,
``call_from_event_loop=True``, patches asyncio process-wide with nest_asyncio. This transport instead makes every
such call on one dedicated worker thread per connection, where no other loop runs, so the synchronous driver API
works the same inside and outside a running loop and nothing global is patched.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from gremlin_python.driver.aiohttp.transport import AiohttpTransport


class LoopThreadTransport(AiohttpTransport):
    """An ``AiohttpTransport`` whose event loop only ever runs on its own worker thread."""

    def __init__(self, **kwargs: Any) -> None:
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gremlin-transport")
        super().__init__(**kwargs)

    def _on_worker(self, method: Any, *args: Any) -> Any:
        return self._worker.submit(method, *args).result()

    def connect(self, url: str, headers: Any = None) -> None:
        """Open the WebSocket (on the worker thread); when that fails, close what was opened (the driver drops
        a connection that failed to connect without closing it, and aiohttp would warn at exit)."""
        try:
            self._on_worker(super().connect, url, headers)
        except BaseException:
            self.close()
            raise

    def write(self, message: bytes) -> None:
        """Send one request frame (on the worker thread)."""
        self._on_worker(super().write, message)

    def read(self) -> bytes:
        """Receive one response frame (on the worker thread)."""
        return self._on_worker(super().read)

    def close(self) -> None:
        """Close the WebSocket and the loop, then the worker thread; closing twice does nothing."""
        worker = getattr(self, "_worker", None)
        if worker is None or self._loop.is_closed():
            return
        try:
            self._on_worker(super().close)
        except RuntimeError:  # the interpreter is shutting down: no new threads, close here
            super().close()
        worker.shutdown(wait=False)


def transport_factory(**options: Any) -> Any:
    """A gremlinpython ``transport_factory`` making ``LoopThreadTransport``s with the given aiohttp options."""
    return lambda: LoopThreadTransport(**options)
