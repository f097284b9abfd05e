"""What one client may cost the server: per-connection limits and the per-address login throttle.

:class:`ConnectionLimits` carries the settings a connection enforces (the frame size before login,
login and idle timeouts, write timeout, requests in flight). :class:`LoginThrottle` counts failed logins per
client address across connections, so a client cannot try passwords faster by reconnecting.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True)
class ConnectionLimits:
    """Per-connection limits and defaults taken from the server settings."""

    batch_size: int
    evaluation_timeout: float | None
    write_timeout: float
    max_in_flight: int
    login_frame_bytes: int = 64 * 1024
    login_timeout: float = 10.0
    idle_timeout: float = 300.0


class LoginThrottle:
    """Refuses logins from an address that failed ``max_failures`` times within the last ``window`` seconds.

    Used from the event loop thread only."""

    def __init__(self, max_failures: int, window: float) -> None:
        self.max_failures = max_failures
        self.window = window
        self._failures: dict[str, deque[float]] = {}

    def retry_after(self, address: str, now: float | None = None) -> float:
        """Seconds until ``address`` may try to log in again (0 when it may now)."""
        now = time.monotonic() if now is None else now
        failures = self._prune(address, now)
        if len(failures) < self.max_failures:
            return 0.0
        return failures[-self.max_failures] + self.window - now

    def failed(self, address: str, now: float | None = None) -> None:
        """Record a failed login from ``address``."""
        now = time.monotonic() if now is None else now
        self._failures.setdefault(address, deque()).append(now)
        self._prune(address, now)

    def _prune(self, address: str, now: float) -> deque[float]:
        """The failures of ``address`` still inside the window; quiet addresses are forgotten."""
        failures = self._failures.get(address)
        if failures is None:
            return deque()
        while failures and failures[0] <= now - self.window:
            failures.popleft()
        if not failures:
            del self._failures[address]
        return failures
