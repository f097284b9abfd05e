"""Client for the Hadoop KMS REST API (served by Hadoop KMS and Ranger KMS).

Calls used: ``GET /v1/key/NAME/_metadata`` and ``POST /v1/keyversion/NAME@VERSION/_eek?eek_op=decrypt``.
The KMS unwraps local keys itself; master keys never leave it. Simple (pseudo) authentication passes
``user.name``; Kerberos/SPNEGO is not implemented.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from lineage_platform.errors import SecurityError
from lineage_platform.security.kms.base import KeyInfo, KeyManagementService


class KmsUnavailableError(SecurityError):
    """The KMS could not be reached or failed; a retry may help."""

    transient = True


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text.replace("+", "-").replace("/", "_") + "=" * (-len(text) % 4))


def base_url(url: str) -> str:
    """``kms://http@host:port/kms`` (Hadoop's provider URI) or ``http://host:port/kms`` -> ``http://host:port/kms``."""
    if url.startswith("kms://"):
        scheme, _, rest = url.removeprefix("kms://").partition("@")
        if scheme not in ("http", "https") or not rest:
            raise SecurityError(f"bad KMS URI {url!r}", hint="use kms://http@HOST:PORT/kms")
        hosts, _, path = rest.partition("/")
        names, colon, port = hosts.rpartition(":")
        first = (names if colon else hosts).split(";")[0]  # Hadoop lists fail-over hosts as a;b:PORT
        url = f"{scheme}://{first}{colon}{port if colon else ''}/{path}"
    return url.rstrip("/")


class HadoopKms(KeyManagementService):
    """A Hadoop/Ranger KMS reached over HTTP(S)."""

    def __init__(self, url: str, *, user: str | None = None, timeout: float = 10.0) -> None:
        self.url = base_url(url)
        self.user = user
        self.timeout = timeout

    def _call(self, method: str, path: str, query: dict[str, str], body: dict[str, Any] | None) -> Any:
        if self.user:
            query = {**query, "user.name": self.user}
        target = f"{self.url}/v1/{path}" + (f"?{urllib.parse.urlencode(query)}" if query else "")
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(target, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            message = _remote_message(error)
            if error.code in (401, 403, 404):
                raise SecurityError(
                    f"KMS {self.url} refused {path}: {message}", hint="check the key name and your KMS ACLs"
                ) from None
            raise KmsUnavailableError(
                f"KMS {self.url} failed on {path}: HTTP {error.code} {message}"
            ) from None
        except (urllib.error.URLError, OSError) as error:
            raise KmsUnavailableError(
                f"KMS {self.url} is unreachable: {getattr(error, 'reason', error)}",
                hint="check the KMS URL and that the KMS is running",
            ) from None
        except ValueError as error:
            raise KmsUnavailableError(f"KMS {self.url} sent a non-JSON answer for {path}") from error

    def key_info(self, name: str) -> KeyInfo:
        """``GET /v1/key/NAME/_metadata``."""
        meta = self._call("GET", f"key/{urllib.parse.quote(name, safe='')}/_metadata", {}, None)
        if not isinstance(meta, dict) or "versions" not in meta:
            raise SecurityError(f"KMS {self.url} has no master key {name!r}", hint="check the key name")
        return KeyInfo(name, int(meta["versions"]), int(meta.get("length") or 0), meta.get("cipher") or "")

    def decrypt_local_key(self, name: str, version: int, encrypted_key: bytes) -> bytes:
        """``POST /v1/keyversion/NAME@VERSION/_eek?eek_op=decrypt``; the IV is sent bit-flipped as Hadoop expects."""
        iv = bytes(b ^ 0xFF for b in encrypted_key[:16])
        body = {
            "name": name,
            "iv": base64.b64encode(iv).decode(),
            "material": base64.b64encode(encrypted_key).decode(),
        }
        path = f"keyversion/{urllib.parse.quote(f'{name}@{version}', safe='')}/_eek"
        answer = self._call("POST", path, {"eek_op": "decrypt"}, body)
        try:
            key = _b64decode(answer["material"])
        except (KeyError, TypeError, ValueError) as error:
            raise SecurityError(f"KMS {self.url} answered decrypt without key material") from error
        if len(key) != len(encrypted_key):
            raise SecurityError(
                f"KMS {self.url} returned a {len(key)}-byte key for a {len(encrypted_key)}-byte one"
            )
        return key


def _remote_message(error: urllib.error.HTTPError) -> str:
    try:
        return json.loads(error.read())["RemoteException"]["message"]
    except (ValueError, KeyError, TypeError):
        return error.reason or ""
