"""A local key store for one machine and tests: master keys in a JSON file only its owner can read.

File layout: ``{"keys": {"NAME": {"versions": ["<base64 key>", ...]}}}``; version ``i`` is ``versions[i]``
(ORC's ``key_version``). Keys are read from the file on every request and never logged.
"""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path

from lineage_platform.errors import SecurityError
from lineage_platform.security.kms.base import KeyInfo, KeyManagementService
from lineage_platform.security.orc.crypto import unwrap_local_key


class LocalKeyStore(KeyManagementService):
    """Master keys kept in a JSON file (mode 0600)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def _versions(self, name: str) -> list[bytes]:
        try:
            mode = self.path.stat().st_mode
            raw = json.loads(self.path.read_text())
        except FileNotFoundError:
            raise SecurityError(
                f"key store {self.path} does not exist", hint="pass --kms with an existing file"
            ) from None
        except (OSError, ValueError) as error:
            raise SecurityError(
                f"key store {self.path} is unreadable: {error}", hint="fix or recreate it"
            ) from error
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise SecurityError(
                f"key store {self.path} is readable by other users", hint=f"chmod 600 {self.path}"
            )
        entry = raw.get("keys", {}).get(name)
        if entry is None:
            raise SecurityError(
                f"master key {name!r} is not in {self.path}", hint="ask the key owner for access"
            )
        return [base64.b64decode(v) for v in entry["versions"]]

    def key_info(self, name: str) -> KeyInfo:
        """Name, number of versions and size of the newest version."""
        versions = self._versions(name)
        return KeyInfo(name, len(versions), len(versions[-1]) * 8)

    def decrypt_local_key(self, name: str, version: int, encrypted_key: bytes) -> bytes:
        """Unwrap with ``name@version`` locally."""
        versions = self._versions(name)
        if not 0 <= version < len(versions):
            raise SecurityError(
                f"master key {name!r} has no version {version}",
                hint="the key store lacks that rolled version",
            )
        return unwrap_local_key(versions[version], encrypted_key)

    @staticmethod
    def write(path: str | Path, keys: dict[str, list[bytes]]) -> Path:
        """Create (or replace) a key store file with mode 0600."""
        target = Path(path)
        body = {"keys": {n: {"versions": [base64.b64encode(k).decode() for k in v]} for n, v in keys.items()}}
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump(body, handle)
        os.chmod(target, 0o600)
        return target
