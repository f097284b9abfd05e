"""Gremlin text (as typed in a Gremlin console or written in TinkerPop's Gherkin scenarios) to gremlinpython
Bytecode.

``tokenizer`` splits text into tokens, ``symbols`` lists the names gremlinpython knows (steps, enums,
predicates, strategies), ``values`` builds literal values, ``strategy`` builds strategies and ``parser``
puts them together into :class:`ParsedTraversal` objects.
"""

from lineage_platform.graph.gremlin_text.parser import ParsedTraversal, parse_script, parse_traversal

__all__ = ["ParsedTraversal", "parse_script", "parse_traversal"]
