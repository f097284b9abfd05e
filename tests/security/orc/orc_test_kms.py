"""A tiny Hadoop KMS for tests: the REST calls ORC Java and our client make, served on 127.0.0.1.

It speaks enough of the Hadoop KMS REST API (``/kms/v1/keys/names``, ``/kms/v1/key/NAME/_metadata``,
``/kms/v1/key/NAME/_currentversion`` and ``/kms/v1/keyversion/VERSION/_eek?eek_op=decrypt``) for Spark to
write encrypted ORC through ``kms://http@127.0.0.1:PORT/kms`` and for our REST client to unwrap keys.
The decrypt math follows Hadoop's DefaultCryptoExtension: flip the IV's bits back, then AES-CTR.
"""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


class LocalHadoopKms:
    """Master keys by name (each a list of versions) behind a background HTTP server."""

    def __init__(self, keys: dict[str, list[bytes]]) -> None:
        self.keys = keys
        self.requests: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return self._server.server_address[1]

    @property
    def hadoop_uri(self) -> str:
        """What ``hadoop.security.key.provider.path`` needs."""
        return f"kms://http@127.0.0.1:{self.port}/kms"

    def start(self) -> LocalHadoopKms:
        """Serve in a daemon thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Shut the server down."""
        self._server.shutdown()
        self._server.server_close()

    def decrypt(self, version_name: str, iv: bytes, material: bytes) -> bytes:
        """Hadoop's decryptEncryptedKey: AES-CTR with the master key of the version and the bit-flipped IV."""
        name, _, version = version_name.rpartition("@")
        master = self.keys[name][int(version)]
        counter_block = bytes(b ^ 0xFF for b in iv)
        decryptor = Cipher(algorithms.AES(master), modes.CTR(counter_block)).decryptor()
        return decryptor.update(material) + decryptor.finalize()


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text.replace("+", "-").replace("/", "_") + "=" * (-len(text) % 4))


def _handler_for(kms: LocalHadoopKms) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # keep test output quiet
            pass

        def _reply(self, status: int, body: object) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_OPTIONS(self) -> None:
            self._reply(200, {})

        def do_GET(self) -> None:
            path = urlparse(self.path).path
            kms.requests.append(f"GET {path}")
            parts = [unquote(p) for p in path.split("/") if p]
            if parts[-2:] == ["keys", "names"]:
                self._reply(200, sorted(kms.keys))
                return
            if len(parts) == 5 and parts[2] == "key" and parts[3] in kms.keys:
                name, versions = parts[3], kms.keys[parts[3]]
                if parts[4] == "_metadata":
                    self._reply(200, _metadata(name, versions))
                    return
                if parts[4] == "_currentversion":
                    self._reply(200, {"name": name, "versionName": f"{name}@{len(versions) - 1}"})
                    return
            self._reply(404, {"RemoteException": {"message": f"no such key or call: {path}"}})

        def do_POST(self) -> None:
            url = urlparse(self.path)
            kms.requests.append(f"POST {url.path}")
            parts = [unquote(p) for p in url.path.split("/") if p]
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            if parts[2:3] == ["keyversion"] and parse_qs(url.query).get("eek_op") == ["decrypt"]:
                try:
                    clear = kms.decrypt(parts[3], _b64decode(body["iv"]), _b64decode(body["material"]))
                except (KeyError, IndexError, ValueError):
                    self._reply(404, {"RemoteException": {"message": f"unknown key version {parts[3]}"}})
                    return
                material = base64.urlsafe_b64encode(clear).decode().rstrip("=")
                self._reply(200, {"name": body.get("name"), "versionName": "EK", "material": material})
                return
            self._reply(400, {"RemoteException": {"message": f"unsupported call {url.path}"}})

    return Handler


def _metadata(name: str, versions: list[bytes]) -> dict[str, object]:
    return {
        "name": name,
        "cipher": "AES/CTR/NoPadding",
        "length": len(versions[-1]) * 8,
        "description": None,
        "attributes": {},
        "created": 1_700_000_000_000,  # a Long on the Java side
        "versions": len(versions),
    }
