"""Labels (classifications) on tables and columns, and their propagation along lineage until fixpoint.

Flow: declarations (CLI, API or YAML) -> ``declare`` writes them to the graph -> ``propagate`` spreads them in
rounds along lineage through the rules -> ``explain`` tells where a label came from.
"""

from lineage_platform.labels.declare import Declaration, declare, load_declarations, undeclare
from lineage_platform.labels.explain import explain
from lineage_platform.labels.label import Label
from lineage_platform.labels.propagate import PropagationSummary, propagate
from lineage_platform.labels.rules import LabelRule, RuleSet

__all__ = [
    "Declaration",
    "Label",
    "LabelRule",
    "PropagationSummary",
    "RuleSet",
    "declare",
    "explain",
    "load_declarations",
    "propagate",
    "undeclare",
]
