# SQL lineage peers (sqllineage, openlineage-sql) live in their own venv: they pin sqlglot / sqlparse
# versions that must not meet ours. Include from the top Makefile: `include benchmarks/sql_peers/peers.mk`.
PEERS_VENV  ?= .venv-peers
PEERS_STAMP  = $(PEERS_VENV)/.installed

.PHONY: peers-venv bench-sql

$(PEERS_STAMP):
	$(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/pip install --quiet --upgrade pip
	$(PEERS_VENV)/bin/pip install --quiet 'sqllineage==1.5.9' 'openlineage-sql==1.54.0'
	touch $(PEERS_STAMP)

peers-venv: $(PEERS_STAMP)

bench-sql: setup peers-venv
	$(BIN)/python benchmarks/bench_sql_accuracy.py
	$(BIN)/python benchmarks/bench_sql_throughput.py
