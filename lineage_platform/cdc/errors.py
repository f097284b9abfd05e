"""Errors of change capture; each says what to do next (``hint``)."""

from __future__ import annotations

from lineage_platform.errors import LineageError


class ChangeCaptureError(LineageError):
    """Change capture, the channel or a subscriber cannot go on without losing or inventing changes."""


class SchemaVersionError(ChangeCaptureError):
    """A change event was written with a schema version this code does not know."""


class BootstrapRequired(ChangeCaptureError):
    """The changes a reader asks for are no longer retained; it must start again from a snapshot."""
