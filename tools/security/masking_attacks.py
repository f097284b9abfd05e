"""The masking attack suite: queries trying to learn masked values, with the outcome each mode must give.

The queries run against :mod:`~tools.security.sample_warehouse` under :data:`ATTACK_POLICY`
(``ssn`` shows its last 4 characters, ``email`` is hashed, ``birth`` keeps its year). ``{guess_ssn}`` and
``{guess_email}`` stand for the values of customer 1 (a correct guess). ``tests/security/test_masking_attacks.py``
runs every attack in both modes on DuckDB and Spark SQL and checks the outcome declared here:

* ``stopped`` — the masked query runs and its result does not change when the hidden part of every masked
  value changes (the result is a function of the masked values only);
* ``refused`` — the rewrite fails closed with an error naming the construct and the column;
* ``inference`` — the masked query runs and its rows still depend on the real values: accepted by design in
  after mode, where filters and joins compute on real values.

The security README's table of attacks is generated from :data:`ATTACKS` by :mod:`tools.security.readme`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lineage_platform.security.masking_rules import MaskingPolicy, MaskRule

Outcome = Literal["stopped", "refused", "inference"]
ATTACK_POLICY = MaskingPolicy(
    {
        "sales.customers.ssn": MaskRule("show_last", 4),
        "sales.customers.email": MaskRule("hash"),
        "sales.customers.birth": MaskRule("year"),
    }
)
"""The masking rules every attack runs under."""


@dataclass(frozen=True)
class Attack:
    """One attack: a Hive query over the sample warehouse and the outcome each mode gives."""

    name: str
    kind: str
    sql: str
    after: Outcome = "stopped"
    before: Outcome = "stopped"


_C = "sales.customers"
ATTACKS: tuple[Attack, ...] = (
    Attack("alias", "copy", f"SELECT ssn AS x, email AS y FROM {_C}"),
    Attack("cte", "copy", f"WITH c AS (SELECT ssn AS s, email AS e FROM {_C}) SELECT s, e FROM c"),
    Attack("subquery", "copy", f"SELECT q.s FROM (SELECT id, ssn AS s FROM {_C}) q WHERE q.id > 3"),
    Attack("star", "copy", f"SELECT * FROM {_C}"),
    Attack("union_all", "set operation", f"SELECT name FROM {_C} UNION ALL SELECT ssn FROM {_C}"),
    Attack(
        "union_oracle", "set operation", f"SELECT ssn AS v FROM {_C} UNION SELECT '{{guess_ssn}}'", "refused"
    ),
    Attack(
        "union_oracle_hash",
        "set operation",
        f"SELECT email AS v FROM {_C} UNION SELECT '{{guess_email}}'",
        "refused",
    ),
    Attack(
        "union_count",
        "set operation",
        f"SELECT count(*) AS n FROM (SELECT ssn AS v FROM {_C} UNION SELECT '{{guess_ssn}}') u",
        "refused",
    ),
    Attack(
        "intersect", "set operation", f"SELECT ssn AS v FROM {_C} INTERSECT SELECT '{{guess_ssn}}'", "refused"
    ),
    Attack("except", "set operation", f"SELECT '{{guess_ssn}}' AS v EXCEPT SELECT ssn FROM {_C}", "refused"),
    Attack("distinct_prefix", "distinct", f"SELECT DISTINCT substr(ssn, 1, 1) AS d FROM {_C}", "refused"),
    Attack(
        "count_distinct_prefix",
        "distinct",
        f"SELECT count(DISTINCT substr(ssn, 1, 3)) AS n FROM {_C}",
        "refused",
    ),
    Attack(
        "group_by_prefix",
        "group by",
        f"SELECT substr(ssn, 1, 3) AS p, count(*) AS n FROM {_C} GROUP BY substr(ssn, 1, 3)",
        "refused",
    ),
    Attack(
        "group_by_character",
        "group by",
        f"SELECT substr(ssn, 2, 1) AS ch, count(*) AS n FROM {_C} GROUP BY substr(ssn, 2, 1)",
        "refused",
    ),
    Attack(
        "group_by_hidden_key",
        "group by",
        f"SELECT region, count(*) AS n FROM {_C} GROUP BY region, substr(ssn, 1, 1)",
        "refused",
    ),
    Attack("max", "aggregate", f"SELECT max(ssn) AS hi FROM {_C}", "refused"),
    Attack("min_hashed", "aggregate", f"SELECT min(email) AS lo FROM {_C}", "refused"),
    Attack(
        "collect_list",
        "aggregate",
        f"SELECT region, collect_list(ssn) AS everyone FROM {_C} GROUP BY region",
        "refused",
    ),
    Attack(
        "sum_digits", "aggregate", f"SELECT sum(CAST(substr(ssn, 1, 1) AS INT)) AS s FROM {_C}", "refused"
    ),
    Attack(
        "having",
        "aggregate",
        f"SELECT region, count(*) AS n FROM {_C} GROUP BY region HAVING max(ssn) > '5'",
        "refused",
    ),
    Attack(
        "holder_of_max",
        "aggregate",
        f"SELECT name FROM {_C} WHERE ssn = (SELECT max(ssn) FROM {_C})",
        "refused",
    ),
    Attack(
        "window_first_value",
        "window",
        f"SELECT id, first_value(ssn) OVER (PARTITION BY region ORDER BY id) AS f FROM {_C}",
    ),
    Attack(
        "window_partition",
        "window",
        f"SELECT id, count(*) OVER (PARTITION BY substr(ssn, 1, 1)) AS n FROM {_C}",
        "refused",
    ),
    Attack("window_rank", "window", f"SELECT id, row_number() OVER (ORDER BY ssn) AS r FROM {_C}", "refused"),
    Attack("window_lag", "window", f"SELECT id, lag(ssn) OVER (ORDER BY id) AS prev FROM {_C}"),
    Attack("length", "string function", f"SELECT id, length(email) AS n FROM {_C}"),
    Attack("substr", "string function", f"SELECT substr(ssn, 1, 6) AS p FROM {_C}"),
    Attack("concat", "string function", f"SELECT concat('id:', ssn, '/', email) AS v FROM {_C}"),
    Attack(
        "unknown_functions",
        "string function",
        f"SELECT reverse(ssn) AS r, translate(ssn, '0123456789', 'abcdefghij') AS t, upper(email) AS u "
        f"FROM {_C}",
    ),
    Attack("instr", "string function", f"SELECT id, instr(ssn, '9') AS at FROM {_C}"),
    Attack("cast", "cast", f"SELECT CAST(ssn AS STRING) AS v FROM {_C}"),
    Attack(
        "cast_arithmetic",
        "cast",
        f"SELECT id, CAST(regexp_replace(ssn, '-', '') AS BIGINT) DIV 10000 AS v FROM {_C}",
    ),
    Attack("regexp_extract", "regexp", f"SELECT id, regexp_extract(email, '^([a-z]+)', 1) AS u FROM {_C}"),
    Attack("regexp_like", "regexp", f"SELECT id, ssn RLIKE '^[1-4]' AS low FROM {_C}"),
    Attack("date_part", "cast", f"SELECT id, month(birth) AS m FROM {_C}"),
    Attack("hash_of_a_character", "enumeration", f"SELECT id, sha2(substr(ssn, 1, 1), 256) AS h FROM {_C}"),
    Attack("lateral_view", "copy", f"SELECT x FROM {_C} LATERAL VIEW explode(array(ssn, email)) t AS x"),
    Attack(
        "case_oracle",
        "CASE oracle",
        f"SELECT id, CASE WHEN ssn LIKE '1%' THEN 'one' ELSE 'other' END AS first_digit FROM {_C}",
    ),
    Attack(
        "case_guess",
        "CASE oracle",
        f"SELECT id, CASE WHEN ssn = '{{guess_ssn}}' THEN 1 ELSE 0 END AS hit FROM {_C}",
    ),
    Attack("if_oracle", "CASE oracle", f"SELECT id, if(email LIKE 'user1%', name, NULL) AS v FROM {_C}"),
    Attack("self_join", "join", f"SELECT a.name, b.ssn FROM {_C} a JOIN {_C} b ON a.ssn = b.ssn"),
    Attack(
        "join_guess",
        "join",
        f"SELECT c.name FROM {_C} c JOIN (SELECT '{{guess_ssn}}' AS g) q ON c.ssn = q.g",
        "inference",
    ),
    Attack("filter_like", "filter", f"SELECT name FROM {_C} WHERE ssn LIKE '1%'", "inference"),
    Attack(
        "filter_guess", "filter", f"SELECT count(*) AS n FROM {_C} WHERE ssn = '{{guess_ssn}}'", "inference"
    ),
    Attack(
        "exists_filter",
        "filter",
        "SELECT count(*) AS n FROM sales.orders o WHERE EXISTS "
        f"(SELECT 1 FROM {_C} c WHERE c.id = o.customer_id AND c.ssn LIKE '2%')",
        "inference",
    ),
    Attack("order_by", "ORDER BY", f"SELECT name FROM {_C} ORDER BY ssn", "refused"),
    Attack("order_by_limit", "ORDER BY", f"SELECT name FROM {_C} ORDER BY ssn DESC LIMIT 1", "refused"),
    Attack(
        "limit_probe",
        "LIMIT probing",
        f"SELECT count(*) AS n FROM (SELECT id FROM {_C} WHERE ssn < '12' LIMIT 5) t",
        "inference",
    ),
    Attack(
        "error_probe",
        "error-based",
        f"SELECT count(*) AS n FROM {_C} WHERE CAST(CASE WHEN ssn LIKE '9%' THEN 'boom' ELSE '1' END AS INT) = 1",
        "inference",
    ),
)
"""The attack suite."""

_OUTCOME_TEXT = {"stopped": "stopped", "refused": "refused", "inference": "**inference**"}


def attack_table(attacks: tuple[Attack, ...] = ATTACKS) -> str:
    """The README's Markdown table of attacks and outcomes.

    >>> print(attack_table(ATTACKS[:1]))
    | attack | kind | query | before | after |
    | --- | --- | --- | --- | --- |
    | alias | copy | `SELECT ssn AS x, email AS y FROM sales.customers` | stopped | stopped |
    """
    lines = ["| attack | kind | query | before | after |", "| --- | --- | --- | --- | --- |"]
    for attack in attacks:
        query = attack.sql.replace("|", "\\|")
        before, after = _OUTCOME_TEXT[attack.before], _OUTCOME_TEXT[attack.after]
        lines.append(f"| {attack.name} | {attack.kind} | `{query}` | {before} | {after} |")
    return "\n".join(lines)
