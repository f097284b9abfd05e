# `make docs`: regenerate docs/cli.md from the click commands (tests/test_docs.py fails when it is stale), the
# generated tables of lineage_platform/security/README.md (mask kinds, attack suite; tests/security fails when
# stale) and the `lineage ui` screenshots in docs/features/img/ (taken by the browser tests).
# Included by the top Makefile.
.PHONY: docs

docs: setup
	$(BIN)/python -m lineage_platform.cli_reference docs/cli.md
	$(BIN)/python -m tools.security.readme
	LINEAGE_DOC_SCREENSHOTS=$(CURDIR)/docs/features/img $(BIN)/pytest -q -p no:cacheprovider tests/ui/test_browser.py
