# `make docs`: regenerate docs/cli.md from the click commands (tests/test_docs.py fails when it is stale).
# Included by the top Makefile.
.PHONY: docs

docs: setup
	$(BIN)/python -m lineage_platform.cli_reference docs/cli.md
