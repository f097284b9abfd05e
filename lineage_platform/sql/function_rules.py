"""How values flow through functions: which arguments are only conditions, which functions aggregate or mask.

Masking functions hide their argument's value: hashes, Hive's mask functions, encryption, and counting
aggregates (``count(DISTINCT phone)`` is a number of phones, not a phone). Aggregates that return values of
their argument (``max``, ``min``, ``collect_set``, ``first``, ``sum``, ...) do not mask.

Rules are looked up by lower-case function name. Users register rules for their own UDFs by passing
``function_rules={"my_udf": FunctionRule(...)}`` to :func:`lineage_platform.sql.extract_lineage`, or write them
in a file read by :func:`lineage_platform.sql.rules_file.load_function_rules` (``--udf-rules``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlglot import exp


@dataclass(frozen=True)
class FunctionRule:
    """The lineage behaviour of one function.

    Attributes:
        flow_args: 0-based argument positions whose values flow into the result; None: every argument that is
            neither a condition nor the key. Arguments in neither list add no lineage (e.g. a lookup's options).
        condition_args: 0-based argument positions used only as conditions (weak, CONDITIONAL).
        aggregate: the result summarises many rows (AGGREGATION instead of TRANSFORMATION); None leaves
            it to sqlglot's classification of the function.
        masking: the result hides the argument's value (hashing, masking, encryption).
        key_arg: position of a literal argument naming a JSON path, map key or struct field.
    """

    condition_args: tuple[int, ...] = ()
    aggregate: bool | None = None
    masking: bool = False
    key_arg: int | None = None
    flow_args: tuple[int, ...] | None = None

    def role(self, position: int) -> str | None:
        """What argument ``position`` is: ``key``, ``condition``, ``value`` (it flows) or None (no lineage).

        >>> FunctionRule(condition_args=(0,), flow_args=(1,)).role(0), FunctionRule(flow_args=(1,)).role(2)
        ('condition', None)
        """
        if position == self.key_arg:
            return "key"
        if position in self.condition_args:
            return "condition"
        if self.flow_args is None or position in self.flow_args:
            return "value"
        return None


_MASK = FunctionRule(masking=True)
_COUNT = FunctionRule(aggregate=True, masking=True)
"""Counting aggregates: the result says how many values there were, never one of them (OpenLineage's masking)."""
DEFAULT_FUNCTION_RULES: Mapping[str, FunctionRule] = {
    **dict.fromkeys(
        (
            "md5",
            "sha",
            "sha1",
            "sha2",
            "crc32",
            "hash",
            "xxhash64",
            "murmur_hash",
            "mask",
            "mask_hash",
            "mask_first_n",
            "mask_last_n",
            "mask_show_first_n",
            "mask_show_last_n",
            "aes_encrypt",
        ),
        _MASK,
    ),
    "if": FunctionRule(condition_args=(0,)),
    "nvl2": FunctionRule(condition_args=(0,)),
    "get_json_object": FunctionRule(key_arg=1),
    "json_extract": FunctionRule(key_arg=1),
    "json_extract_scalar": FunctionRule(key_arg=1),
    "element_at": FunctionRule(key_arg=1),
    # window navigation reads one other row's value: a transformation, not a summary
    **dict.fromkeys(
        ("lead", "lag", "first_value", "last_value", "nth_value", "first", "last"),
        FunctionRule(aggregate=False),
    ),
    "collect_set": FunctionRule(aggregate=True),
    "collect_list": FunctionRule(aggregate=True),
    "percentile": FunctionRule(aggregate=True),
    "percentile_approx": FunctionRule(aggregate=True),
    **dict.fromkeys(("count", "approx_distinct", "approx_count_distinct", "ndv"), _COUNT),
    # count_if(cond) counts the rows where cond holds, like count(*) FILTER (WHERE cond): cond only decides
    "count_if": FunctionRule(condition_args=(0,), aggregate=True),
    # max_by(x, y) / arg_max(x, y): y only picks the row whose x is returned
    **dict.fromkeys(
        ("arg_max", "arg_min", "max_by", "min_by"), FunctionRule(condition_args=(1,), aggregate=True)
    ),
    # GROUPING(a, b) / grouping_id(): which columns a row is aggregated over, never their values
    **dict.fromkeys(("grouping", "grouping_id"), FunctionRule(flow_args=())),
}


def function_name(node: exp.Func) -> str:
    """The lower-case name a user writes for ``node`` (``md5``, ``sha2``, a UDF's own name).

    >>> import sqlglot
    >>> function_name(sqlglot.parse_one("SELECT my_udf(a)").selects[0])
    'my_udf'
    """
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    return node.sql_name().lower()


def function_arguments(node: exp.Func) -> list[exp.Expr]:
    """The arguments of ``node`` in written order."""
    if isinstance(node, exp.Anonymous):
        return list(node.expressions)
    arguments: list[exp.Expr] = []
    for key in node.arg_types:
        value = node.args.get(key)
        if isinstance(value, list):
            arguments.extend(v for v in value if isinstance(v, exp.Expr))
        elif isinstance(value, exp.Expr):
            arguments.append(value)
    return arguments


def merge_rules(custom: Mapping[str, FunctionRule] | None) -> Mapping[str, FunctionRule]:
    """Default rules overlaid with user rules (user rules win; names are case-insensitive)."""
    if not custom:
        return DEFAULT_FUNCTION_RULES
    return {**DEFAULT_FUNCTION_RULES, **{name.lower(): rule for name, rule in custom.items()}}
