"""Settings, resolved once: explicit argument > ``LINEAGE_*`` environment variable > default."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

ENV_PREFIX = "LINEAGE_"
DEFAULT_HOME = Path(os.environ.get(f"{ENV_PREFIX}HOME", Path.home() / ".lineage"))
DEFAULT_GRAPH_PATH = DEFAULT_HOME / "graph"


def _env(name: str, default: str) -> str:
    return os.environ.get(ENV_PREFIX + name, default)


@dataclass(frozen=True)
class Settings:
    """Everything the platform needs to reach its parts."""

    graph_url: str = field(default_factory=lambda: _env("GRAPH_URL", f"embedded:{DEFAULT_GRAPH_PATH}"))
    graph_username: str | None = field(default_factory=lambda: os.environ.get(f"{ENV_PREFIX}GRAPH_USERNAME"))
    graph_password: str | None = field(default_factory=lambda: os.environ.get(f"{ENV_PREFIX}GRAPH_PASSWORD"))
    # strict: the embedded engine refuses what JanusGraph's schema refuses (graph_schema/schema.yaml); open: not
    graph_schema: str = field(default_factory=lambda: _env("GRAPH_SCHEMA", "strict"))
    # record every write to a ws:// graph in its change-capture outbox (for `lineage cdc relay --graph URL`)
    graph_outbox: bool = field(
        default_factory=lambda: _env("GRAPH_OUTBOX", "").lower() in ("1", "true", "on", "yes")
    )
    kafka_bootstrap: str = field(default_factory=lambda: _env("KAFKA_BOOTSTRAP", "127.0.0.1:9092"))
    spark_master: str = field(default_factory=lambda: _env("SPARK_MASTER", "local[*]"))
    work_dir: Path = field(default_factory=lambda: Path(_env("WORK_DIR", str(DEFAULT_HOME / "work"))))

    def with_overrides(self, **overrides: object) -> Settings:
        """A copy with the given non-None values replaced."""
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})


def load_settings(**overrides: object) -> Settings:
    """Resolve settings from the environment, then apply explicit overrides."""
    return Settings().with_overrides(**overrides)
