"""SASL PLAIN authentication against a credentials file of scrypt password hashes.

The file holds one ``user:scrypt$N$r$p$salt$hash`` line per user (salt and hash base64); blank lines and
``#`` comments are ignored. Create and update it with :func:`add_user`
(``lineage graph serve --credentials FILE --add-user NAME``). Passwords never appear in it.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import os
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path

from lineage_platform.errors import ConfigError

_SCHEME = "scrypt"
_N, _R, _P = 2**14, 8, 1
_SALT_BYTES = 16
_KEY_BYTES = 32


def hash_password(password: str) -> str:
    """Hash a password with scrypt and a fresh salt, encoded for the credentials file."""
    salt = secrets.token_bytes(_SALT_BYTES)
    key = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=_N, r=_R, p=_P, dklen=_KEY_BYTES)
    return "$".join(
        [_SCHEME, str(_N), str(_R), str(_P), base64.b64encode(salt).decode(), base64.b64encode(key).decode()]
    )


def verify_password(password: str, encoded: str) -> bool:
    """True when ``password`` matches a hash made by :func:`hash_password` (constant-time comparison)."""
    scheme, n, r, p, salt, key = encoded.split("$")
    if scheme != _SCHEME:
        return False
    expected = base64.b64decode(key)
    actual = hashlib.scrypt(
        password.encode("utf-8"),
        salt=base64.b64decode(salt),
        n=int(n),
        r=int(r),
        p=int(p),
        dklen=len(expected),
    )
    return hmac.compare_digest(actual, expected)


@functools.cache
def _decoy_hash() -> str:
    return hash_password(secrets.token_hex(8))


def _validate_user_name(user: str) -> None:
    if not user or ":" in user or "\0" in user or user != user.strip():
        raise ConfigError(
            f"invalid user name {user!r}",
            hint="use a non-empty name without ':', NUL or surrounding spaces",
        )


def load_credentials(path: Path) -> dict[str, str]:
    """Read a credentials file into {user: encoded hash}. Raises ConfigError naming the bad line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"cannot read credentials file {path}: {exc.strerror}",
            hint="create it with `lineage graph serve --credentials FILE --add-user NAME`",
        ) from exc
    users: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        user, _, encoded = line.partition(":")
        parts = encoded.split("$")
        if len(parts) != 6 or parts[0] != _SCHEME or not all(parts):
            raise ConfigError(
                f"{path}, line {number}: expected user:scrypt$N$r$p$salt$hash",
                hint="re-create the entry with `lineage graph serve --credentials FILE --add-user NAME`",
            )
        users[user] = encoded
    return users


def add_user(path: Path, user: str, password: str) -> None:
    """Add a user to the credentials file or replace their password; the file is written 0600, atomically."""
    _validate_user_name(user)
    if not password:
        raise ConfigError("empty password", hint="choose a non-empty password")
    users = load_credentials(path) if path.exists() else {}
    users[user] = hash_password(password)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as tmp:
            tmp.write("# lineage graph serve credentials: user:scrypt$N$r$p$salt$hash\n")
            tmp.writelines(f"{name}:{encoded}\n" for name, encoded in sorted(users.items()))
        os.chmod(tmp_name, 0o600)
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def decode_sasl_plain(sasl: str | bytes) -> tuple[str, str]:
    """Split a base64 SASL PLAIN response (``authzid NUL user NUL password``) into user and password."""
    try:
        raw = base64.b64decode(sasl, validate=True)
        _authzid, user, password = raw.decode("utf-8").split("\0")
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise ValueError("the sasl argument is not a base64 SASL PLAIN response") from exc
    return user, password


@dataclass(frozen=True)
class Authenticator:
    """Checks SASL PLAIN responses against loaded credentials."""

    users: dict[str, str]

    @classmethod
    def from_file(cls, path: Path) -> Authenticator:
        """Load the credentials file; refuse an empty one."""
        users = load_credentials(path)
        if not users:
            raise ConfigError(
                f"credentials file {path} has no users",
                hint="add one with `lineage graph serve --credentials FILE --add-user NAME`",
            )
        return cls(users)

    def authenticate(self, sasl: str | bytes) -> str | None:
        """The authenticated user name, or None when the response is malformed or the password is wrong."""
        try:
            user, password = decode_sasl_plain(sasl)
        except ValueError:
            return None
        encoded = self.users.get(user)
        if encoded is None:
            verify_password(password, _decoy_hash())  # same cost as checking a real user
            return None
        return user if verify_password(password, encoded) else None
