"""Reads tests/fixtures/sql/<pass>.sql: cases of ``# title:``, optional ``# schema:`` JSON and ``# dialect:``
(hive when absent), SQL, expected lines."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sql"


@dataclass(frozen=True)
class FixtureCase:
    """One input statement and the lines a pass is expected to render for it."""

    title: str
    sql: str
    expected: tuple[str, ...]
    schema: dict[str, Any] | None
    dialect: str = "hive"


def load_cases(pass_name: str) -> list[FixtureCase]:
    """Cases are separated by ``# title:`` lines; the SQL ends at the first line ending in ``;``."""
    cases: list[FixtureCase] = []
    for block in (FIXTURES / f"{pass_name}.sql").read_text().split("# title:")[1:]:
        title, _, body = block.partition("\n")
        schema = None
        dialect = "hive"
        sql_lines: list[str] = []
        expected: list[str] = []
        for line in body.splitlines():
            if line.startswith("# schema:"):
                schema = json.loads(line.removeprefix("# schema:"))
            elif line.startswith("# dialect:"):
                dialect = line.removeprefix("# dialect:").strip()
            elif not sql_lines or not sql_lines[-1].rstrip().endswith(";"):
                if line.strip():
                    sql_lines.append(line)
            elif line.strip():
                expected.append(line.strip())
        cases.append(
            FixtureCase(
                title.strip(),
                "\n".join(sql_lines).rstrip().rstrip(";"),
                tuple(expected),
                schema,
                dialect,
            )
        )
    return cases
