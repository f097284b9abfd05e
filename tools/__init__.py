"""Developer tooling kept out of the installed ``lineage_platform`` wheel (see tools/README.md).

Run from the repository root: ``python -m tools.conformance``, ``python -m tools.security.readme``.
"""
