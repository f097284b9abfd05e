"""Folders and files only their owner may read or write (0700 / 0600): graph stores, key stores, load and relay
state, and side files of rejected input, which hold lineage, SQL text and keys.

Modes are set when a folder or file is created, whatever the umask, and tightened on folders and files made
before (an older version, another tool), so what the platform keeps never becomes readable by other users.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

DIR_MODE = 0o700
FILE_MODE = 0o600
_FLAGS = {"w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC, "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND}


def private_dir(path: str | Path) -> Path:
    """Create ``path`` and its missing parents with mode 0700 (an existing ``path`` is set to 0700); return it."""
    path = Path(path)
    missing = []
    parent = path
    while not parent.exists():
        missing.append(parent)
        parent = parent.parent
    for folder in reversed(missing):
        folder.mkdir(mode=DIR_MODE, exist_ok=True)
    os.chmod(path, DIR_MODE)
    return path


def open_private(path: str | Path, mode: str = "w", **options: Any) -> IO[Any]:
    """Open ``path`` for writing (``mode`` ``w``/``a``, plus ``b`` for bytes) as a file of mode 0600, like
    ``open(path, mode, **options)``."""
    fd = os.open(path, _FLAGS[mode.replace("b", "")], FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        return os.fdopen(fd, mode, **options)
    except BaseException:
        os.close(fd)
        raise
