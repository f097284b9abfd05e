"""The KMS client interface: what a reader of encrypted files asks a key management service."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from lineage_platform.errors import SecurityError


@dataclass(frozen=True)
class KeyInfo:
    """Public facts about a master key; never its material."""

    name: str
    versions: int
    bits: int
    cipher: str = "AES/CTR/NoPadding"


class KeyManagementService(ABC):
    """Unwraps file-local keys with master keys it holds. Master key material never leaves a remote KMS."""

    @abstractmethod
    def key_info(self, name: str) -> KeyInfo:
        """Metadata of master key ``name``; SecurityError if the KMS does not know it."""

    @abstractmethod
    def decrypt_local_key(self, name: str, version: int, encrypted_key: bytes) -> bytes:
        """The clear local key that ``name@version`` wrapped into ``encrypted_key`` (ORC's EEK layout)."""


def kms_from_url(url: str, *, user: str | None = None, timeout: float = 10.0) -> KeyManagementService:
    """A client for ``url``: ``kms://http@host:port/kms`` / ``http(s)://host:port/kms`` (Hadoop or Ranger
    KMS) or ``local:PATH`` / a plain path (a local key store file)."""
    from lineage_platform.security.kms.hadoop import HadoopKms
    from lineage_platform.security.kms.local import LocalKeyStore

    if url.startswith(("kms://", "http://", "https://")):
        return HadoopKms(url, user=user, timeout=timeout)
    if url.startswith("local:"):
        return LocalKeyStore(url.removeprefix("local:"))
    if "://" in url:
        raise SecurityError(f"unknown KMS URL {url!r}", hint="use kms://http@HOST:PORT/kms or local:PATH")
    return LocalKeyStore(url)
