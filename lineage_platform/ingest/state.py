"""The state folder that makes a bulk load resumable.

One folder per input fingerprint (the input files' paths, sizes and modification times plus the load
options that change the result). Each finished batch leaves a small JSON marker, written to a temporary
name and renamed into place, so a marker exists only for a batch whose writes all returned. A run that
is killed and started again skips the marked batches and redoes the rest; the writer's upserts make
redoing a half-written batch harmless. The folder also holds the side file of rejected input and the
graph's element counts from before the load's first run, from which the summary counts what it added.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from lineage_platform.errors import IngestError
from lineage_platform.private_files import private_dir

REJECTED_FILE = "rejected.jsonl"
BASELINE_FILE = "baseline.json"


def list_inputs(paths: Iterable[str | Path]) -> list[Path]:
    """The log files named by ``paths``: files as given, directories searched recursively; sorted, no hidden files."""
    files: set[Path] = set()
    for given in paths:
        path = Path(given).expanduser().resolve()
        if path.is_file():
            files.add(path)
        elif path.is_dir():
            files.update(
                found
                for found in path.rglob("*")
                if found.is_file() and not any(part.startswith(".") for part in found.relative_to(path).parts)
            )
        else:
            raise IngestError(
                f"no such file or directory: {given}", hint="check the log paths given to the load"
            )
    if not files:
        raise IngestError(
            "the given paths hold no log files", hint="point the load at log files or folders of them"
        )
    return sorted(files)


def fingerprint(files: Iterable[Path], **options: Any) -> str:
    """A stable hash of the input files (path, size, mtime) and the options that change what gets written."""
    digest = hashlib.sha256()
    for path in files:
        stat = path.stat()
        digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    digest.update(json.dumps(options, sort_keys=True, default=str).encode())
    return digest.hexdigest()[:24]


def _write_atomically(path: Path, text: str) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class LoadState:
    """Markers of finished batches and the side file of one load, under ``root/<fingerprint>``."""

    def __init__(self, root: Path | str, key: str) -> None:
        self.dir = Path(root) / key
        self.batches = self.dir / "batches"

    def create(self) -> LoadState:
        """Make the folder, readable by its owner only (idempotent), and return self."""
        try:
            private_dir(self.dir)
            private_dir(self.batches)
        except OSError as exc:
            raise IngestError(
                f"cannot create the state folder {self.dir}: {exc}", hint="pass a writable --state-dir"
            ) from exc
        return self

    def _marker(self, batch: int) -> Path:
        return self.batches / f"{batch:08d}.json"

    def done(self) -> set[int]:
        """Numbers of the batches already written."""
        return {int(marker.stem) for marker in self.batches.glob("*.json")}

    def mark_done(self, batch: int, result: dict[str, Any]) -> None:
        """Record that ``batch`` is written, with what writing it produced (atomic: all or nothing)."""
        _write_atomically(self._marker(batch), json.dumps(result, sort_keys=True))

    def results(self) -> list[dict[str, Any]]:
        """The results of every finished batch, in batch order."""
        return [
            json.loads(marker.read_text(encoding="utf-8")) for marker in sorted(self.batches.glob("*.json"))
        ]

    def baseline(self, counts: Callable[[], dict[str, int]]) -> dict[str, int]:
        """What the graph held when this load first started: read from the folder, or taken now with
        ``counts`` and kept (the first run of a load takes it, before any of its writes)."""
        path = self.dir / BASELINE_FILE
        if path.exists():
            return json.loads(path.read_text(encoding="utf-8"))
        taken = counts()
        _write_atomically(path, json.dumps(taken, sort_keys=True))
        return taken

    @property
    def rejected_file(self) -> Path:
        """The side file of bad records and statements that could not be parsed."""
        return self.dir / REJECTED_FILE

    def write_rejected(self, rows: Iterable[dict[str, Any]]) -> Path:
        """Replace the side file with ``rows`` (JSON lines of source, line, reason, raw)."""
        text = "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows)
        _write_atomically(self.rejected_file, text)
        return self.rejected_file
