"""Read a table catalog for ``--schema``: JSON or YAML, nested ``{db: {table: {column: type}}}``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from lineage_platform.errors import SqlError
from lineage_platform.sql.session import normalize_schema

_HINT = 'write {"db": {"table": {"column": "type"}}} as JSON or YAML'


def load_schema(path: str | Path) -> dict[str, dict[str, dict[str, str]]]:
    """The normalised catalog in ``path`` (``.json``, or YAML for any other suffix)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        data: Any = json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, RecursionError, json.JSONDecodeError, yaml.YAMLError) as error:
        raise SqlError(f"schema file {path} cannot be read: {error}", hint=_HINT) from error
    if not isinstance(data, dict):
        raise SqlError(f"schema file {path} does not hold a mapping", hint=_HINT)
    return normalize_schema(data)
