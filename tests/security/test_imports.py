"""security/ uses only the public API of sql/: the names lineage_platform.sql lists in ``__all__``."""

from __future__ import annotations

import ast
from pathlib import Path

import lineage_platform.security
import lineage_platform.sql

SECURITY = Path(lineage_platform.security.__file__).parent
SQL = "lineage_platform.sql"


def private_sql_imports(source: str) -> list[str]:
    """Each import of ``source`` that reaches into sql/ past its public names, as ``module:name``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"{a.name}:*" for a in node.names if a.name.startswith(SQL + ".")]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(SQL):
            public = node.module == SQL
            found += [
                f"{node.module}:{a.name}"
                for a in node.names
                if not public or a.name not in lineage_platform.sql.__all__
            ]
    return found


def test_the_check_sees_private_and_deep_imports() -> None:
    source = (
        "from lineage_platform.sql import Tracer, _helper\n"
        "from lineage_platform.sql.tracer import leftmost_select\n"
        "import lineage_platform.sql.flow\n"
        "def f():\n    from lineage_platform.sql import run_passes, Usage\n"
    )
    assert private_sql_imports(source) == [
        "lineage_platform.sql:_helper",
        "lineage_platform.sql.tracer:leftmost_select",
        "lineage_platform.sql.flow:*",
    ]


def test_every_public_name_exists() -> None:
    for name in lineage_platform.sql.__all__:
        assert hasattr(lineage_platform.sql, name), name
        assert not name.startswith("_")


def test_security_imports_only_public_names_from_sql() -> None:
    modules = sorted(SECURITY.rglob("*.py"))
    assert len(modules) > 10
    offending = {
        str(path.relative_to(SECURITY)): found
        for path in modules
        if (found := private_sql_imports(path.read_text()))
    }
    assert offending == {}, "security/ must import sql/ names from lineage_platform.sql (its __all__)"
