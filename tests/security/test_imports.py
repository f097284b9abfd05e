"""security/ uses only the public API of sql/: the names lineage_platform.sql lists in ``__all__``."""

from __future__ import annotations

from pathlib import Path

import lineage_platform.security
import lineage_platform.sql
from tests.import_walk import imported_names

SECURITY = Path(lineage_platform.security.__file__).parent
SQL = "lineage_platform.sql"


def private_sql_imports(source: str) -> list[str]:
    """Each import of ``source`` that reaches into sql/ past its public names, as ``module:name``."""
    return [
        f"{module}:{name or '*'}"
        for module, name in imported_names(source)
        if module.startswith(SQL + ".")
        or (module == SQL and name is not None and name not in lineage_platform.sql.__all__)
    ]


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
