"""A relay's checkpoint: the last SCN it published, in a small JSON file replaced atomically."""

from __future__ import annotations

import json
import os
from pathlib import Path

from lineage_platform.cdc.errors import ChangeCaptureError
from lineage_platform.private_files import open_private


class RelayCheckpoint:
    """The last SCN a relay published for one source, kept durably in ``path``.

    Saved only after the broker acknowledged every event up to that SCN, so a restarted relay resumes there;
    events published after the last save are sent again and subscribers drop them by SCN.
    """

    def __init__(self, path: str | os.PathLike, source: str) -> None:
        self.path = Path(path)
        self.source = source

    def load(self) -> int:
        """The saved SCN (0 when the relay never published)."""
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return 0
        except (OSError, ValueError) as exc:
            raise ChangeCaptureError(
                f"relay checkpoint {self.path} is unreadable: {exc}",
                hint="restore the file, or delete it to publish the retained log again from the start "
                "(subscribers drop what they already have)",
            ) from exc
        if data.get("source") != self.source or not isinstance(data.get("scn"), int):
            raise ChangeCaptureError(
                f"relay checkpoint {self.path} belongs to {data.get('source')!r}, not {self.source!r}",
                hint="give each relay its own --checkpoint file",
            )
        return data["scn"]

    def save(self, scn: int) -> None:
        """Durably record ``scn`` (write a temporary file of mode 0600, fsync, rename over the old one, fsync the
        folder)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(self.path.name + ".tmp")
        with open_private(temporary, "w") as file:
            json.dump({"source": self.source, "scn": scn}, file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, self.path)
        directory = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
