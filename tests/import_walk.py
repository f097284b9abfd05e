"""What a Python source imports, read from its syntax tree without importing it: the helper import tests share."""

from __future__ import annotations

import ast


def imported_names(source: str, package: str = "") -> list[tuple[str, str | None]]:
    """``(module, name)`` for every import in ``source``, nested ones (inside functions, ``TYPE_CHECKING``)
    included: ``from m import n`` gives ``(m, n)``, ``import m`` gives ``(m, None)``. Relative imports are
    resolved against ``package``, the dotted package the source belongs to."""
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{module}" if module else base
            found += [(module, alias.name) for alias in node.names]
    return found


def reaches(module: str, name: str | None, target: str) -> bool:
    """Whether importing ``name`` from ``module`` (or ``module`` itself) reaches the package ``target``."""
    return any(
        dotted == target or dotted.startswith(target + ".")
        for dotted in (module, f"{module}.{name}" if name else module)
    )
