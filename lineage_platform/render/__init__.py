"""Views of a traced lineage subgraph: text tree, Graphviz DOT, HTML."""
