"""Test and benchmark tooling for ``lineage_platform.security``: the sample warehouse, the semantic oracle and
the masking attack suite."""
