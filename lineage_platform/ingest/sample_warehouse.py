"""A synthetic layered warehouse (ODS -> DWD -> DWS -> ADS): tables with schemas and the jobs that fill them.

Each job is the SQL template of one scheduled statement. ``@BIZDATE@`` in a template stands for the
business date; the log writer renders it either as the Hive variable ``${bizdate}`` or as a resolved
date. Table and column names carry the hints later features look for: an ``app`` column (douyin,
toutiao, ...), PII columns (phone, email, id_card) in ODS user tables, ``dt`` partitions, and
downstream reads over ``dt >= date_sub('@BIZDATE@', N)`` windows.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

BIZDATE = "@BIZDATE@"
LAYERS = ("ods", "dwd", "dws", "ads")
APPS = ("douyin", "toutiao", "xigua", "huoshan", "lark")
BASE_REGIONS = ("cn", "sg", "us", "eu", "jp", "br", "in", "id")
WINDOW_DAYS = (1, 7, 30)
# share of tables per layer, in LAYERS order
LAYER_SHARES = (0.4, 0.25, 0.2, 0.15)

SUBJECT_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "user": (
        ("user_id", "bigint"),
        ("nickname", "string"),
        ("phone", "string"),
        ("email", "string"),
        ("id_card", "string"),
        ("gender", "string"),
        ("city", "string"),
        ("tags", "string"),
        ("register_time", "string"),
    ),
    "event": (
        ("event_id", "string"),
        ("user_id", "bigint"),
        ("device_id", "string"),
        ("event_name", "string"),
        ("params", "string"),
        ("event_time", "string"),
    ),
    "order": (
        ("order_id", "bigint"),
        ("user_id", "bigint"),
        ("item_id", "bigint"),
        ("amount", "decimal(18,2)"),
        ("pay_channel", "string"),
        ("order_status", "string"),
        ("create_time", "string"),
    ),
    "video": (
        ("video_id", "bigint"),
        ("author_id", "bigint"),
        ("title", "string"),
        ("duration_sec", "int"),
        ("category", "string"),
        ("publish_time", "string"),
    ),
    "ad": (
        ("ad_id", "bigint"),
        ("advertiser_id", "bigint"),
        ("user_id", "bigint"),
        ("action", "string"),
        ("cost", "decimal(18,4)"),
        ("ext", "string"),
        ("action_time", "string"),
    ),
}
SUBJECTS = tuple(SUBJECT_COLUMNS)
TAIL_COLUMNS = (("app", "string"), ("dt", "string"))


@dataclass(frozen=True)
class Table:
    """A warehouse table: ``db.name`` and its columns (``dt`` is the daily partition column)."""

    db: str
    name: str
    columns: tuple[tuple[str, str], ...]

    @property
    def qualified_name(self) -> str:
        """``db.name``."""
        return f"{self.db}.{self.name}"


@dataclass(frozen=True)
class Job:
    """A scheduled statement: the tables it writes and its SQL template (``@BIZDATE@`` marks the date)."""

    name: str
    layer: str
    outputs: tuple[Table, ...]
    template: str


@dataclass
class Warehouse:
    """Tables by qualified name and the jobs in dependency order (upstream layers first)."""

    tables: dict[str, Table] = field(default_factory=dict)
    jobs: list[Job] = field(default_factory=list)

    def add(self, job: Job) -> None:
        """Register a job and the tables it writes."""
        self.jobs.append(job)
        for table in job.outputs:
            self.tables[table.qualified_name] = table

    def catalog(self) -> dict[str, dict[str, dict[str, str]]]:
        """The schemas in sqlglot's nested form ``{db: {table: {column: type}}}``.

        Databases and tables come sorted; columns keep their table order, which positional
        ``INSERT ... SELECT`` lineage depends on.
        """
        nested: dict[str, dict[str, dict[str, str]]] = {}
        for table in sorted(self.tables.values(), key=lambda t: (t.db, t.name)):
            nested.setdefault(table.db, {})[table.name] = dict(table.columns)
        return nested


def _regions() -> Iterator[str]:
    """Region codes: the real-looking ones first, then numbered ones without end."""
    yield from BASE_REGIONS
    for number in itertools.count(1):
        yield f"r{number}"


def _table(db: str, name: str, columns: tuple[tuple[str, str], ...]) -> Table:
    return Table(db, name, (*columns, *TAIL_COLUMNS))


def _insert(table: Table) -> str:
    return f"INSERT OVERWRITE TABLE {table.qualified_name} PARTITION (dt='{BIZDATE}')"


def _window(days: int, alias: str = "") -> str:
    column = f"{alias}.dt" if alias else "dt"
    if days == 1:
        return f"{column} = '{BIZDATE}'"
    return f"{column} >= date_sub('{BIZDATE}', {days - 1}) AND {column} <= '{BIZDATE}'"


# ---- ODS: raw loads -------------------------------------------------------------------------------


def _ods_job(subject: str, app: str, region: str) -> Job:
    table = _table("ods", f"ods_{subject}_{app}_{region}_di", SUBJECT_COLUMNS[subject])
    sql = (
        f"LOAD DATA INPATH '/data/raw/{app}/{region}/{subject}/{BIZDATE}' OVERWRITE INTO TABLE "
        f"{table.qualified_name} PARTITION (dt='{BIZDATE}')"
    )
    return Job(f"load_{table.name}", "ods", (table,), sql)


# ---- DWD: cleaned detail, one per ODS table --------------------------------------------------------

_DWD_SELECTS: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "user": (
        "SELECT user_id, nickname, phone, email, id_card,\n"
        "  CASE gender WHEN 'm' THEN 'male' WHEN 'f' THEN 'female' ELSE 'unknown' END AS gender,\n"
        "  city, to_date(register_time) AS register_date, app",
        (
            ("user_id", "bigint"),
            ("nickname", "string"),
            ("phone", "string"),
            ("email", "string"),
            ("id_card", "string"),
            ("gender", "string"),
            ("city", "string"),
            ("register_date", "string"),
        ),
    ),
    "event": (
        "SELECT event_id, user_id, device_id, lower(event_name) AS event_name,\n"
        "  get_json_object(params, '$.video_id') AS video_id,\n"
        "  CAST(get_json_object(params, '$.duration') AS BIGINT) AS play_duration, event_time, app",
        (
            ("event_id", "string"),
            ("user_id", "bigint"),
            ("device_id", "string"),
            ("event_name", "string"),
            ("video_id", "string"),
            ("play_duration", "bigint"),
            ("event_time", "string"),
        ),
    ),
    "order": (
        "SELECT order_id, user_id, item_id, amount, pay_channel,\n"
        "  CASE WHEN order_status IN ('paid', 'shipped', 'done') THEN 1 ELSE 0 END AS is_paid, create_time, app",
        (
            ("order_id", "bigint"),
            ("user_id", "bigint"),
            ("item_id", "bigint"),
            ("amount", "decimal(18,2)"),
            ("pay_channel", "string"),
            ("is_paid", "int"),
            ("create_time", "string"),
        ),
    ),
    "video": (
        "SELECT video_id, author_id, title, duration_sec, coalesce(category, 'other') AS category, publish_time, app",
        (
            ("video_id", "bigint"),
            ("author_id", "bigint"),
            ("title", "string"),
            ("duration_sec", "int"),
            ("category", "string"),
            ("publish_time", "string"),
        ),
    ),
    "ad": (
        "SELECT ad_id, advertiser_id, user_id, action, cost,\n"
        "  get_json_object(ext, '$.creative_id') AS creative_id, action_time, app",
        (
            ("ad_id", "bigint"),
            ("advertiser_id", "bigint"),
            ("user_id", "bigint"),
            ("action", "string"),
            ("cost", "decimal(18,4)"),
            ("creative_id", "string"),
            ("action_time", "string"),
        ),
    ),
}


def _dwd_jobs(subject: str, app: str, region: str) -> list[Job]:
    source = f"ods.ods_{subject}_{app}_{region}_di"
    select, columns = _DWD_SELECTS[subject]
    table = _table("dwd", f"dwd_{subject}_{app}_{region}_di", columns)
    jobs = [
        Job(
            f"clean_{table.name}",
            "dwd",
            (table,),
            f"{_insert(table)}\n{select}\nFROM {source}\nWHERE {_window(1)}",
        )
    ]
    if subject == "user":
        tags = _table("dwd", f"dwd_user_tag_{app}_{region}_di", (("user_id", "bigint"), ("tag", "string")))
        sql = (
            f"{_insert(tags)}\nSELECT user_id, t.tag, app\nFROM {source}\n"
            f"LATERAL VIEW explode(split(tags, ',')) t AS tag\nWHERE {_window(1)} AND tags IS NOT NULL"
        )
        jobs.append(Job(f"explode_{tags.name}", "dwd", (tags,), sql))
    return jobs


# ---- DWS: aggregates over day windows, per app and region -------------------------------------------


def _dws_user_event(app: str, region: str, days: int) -> Job:
    table = _table(
        "dws",
        f"dws_user_event_{app}_{region}_{days}d",
        (
            ("user_id", "bigint"),
            ("event_cnt", "bigint"),
            ("video_cnt", "bigint"),
            ("play_duration", "bigint"),
        ),
    )
    sql = (
        f"{_insert(table)}\nSELECT user_id, count(1) AS event_cnt, count(DISTINCT video_id) AS video_cnt,\n"
        f"  sum(play_duration) AS play_duration, app\nFROM dwd.dwd_event_{app}_{region}_di\n"
        f"WHERE {_window(days)}\nGROUP BY user_id, app"
    )
    return Job(f"agg_{table.name}", "dws", (table,), sql)


def _dws_user_order(app: str, region: str, days: int) -> Job:
    table = _table(
        "dws",
        f"dws_user_order_{app}_{region}_{days}d",
        (("user_id", "bigint"), ("city", "string"), ("pay_amount", "decimal(18,2)"), ("order_cnt", "bigint")),
    )
    sql = (
        f"{_insert(table)}\nSELECT u.user_id, u.city, sum(CASE WHEN o.is_paid = 1 THEN o.amount ELSE 0 END) AS pay_amount,\n"
        f"  count(o.order_id) AS order_cnt, u.app\nFROM dwd.dwd_user_{app}_{region}_di u\n"
        f"JOIN dwd.dwd_order_{app}_{region}_di o ON u.user_id = o.user_id AND {_window(days, 'o')}\n"
        f"WHERE u.dt = '{BIZDATE}'\nGROUP BY u.user_id, u.city, u.app"
    )
    return Job(f"agg_{table.name}", "dws", (table,), sql)


def _dws_video_rank(app: str, region: str, days: int) -> Job:
    table = _table(
        "dws",
        f"dws_video_rank_{app}_{region}_{days}d",
        (("video_id", "bigint"), ("category", "string"), ("play_cnt", "bigint"), ("rank_in_category", "int")),
    )
    sql = (
        f"{_insert(table)}\nSELECT video_id, category, play_cnt,\n"
        f"  row_number() OVER (PARTITION BY category ORDER BY play_cnt DESC) AS rank_in_category, app\n"
        f"FROM (\n  SELECT v.video_id, v.category, count(1) AS play_cnt, v.app\n"
        f"  FROM dwd.dwd_event_{app}_{region}_di e\n"
        f"  JOIN dwd.dwd_video_{app}_{region}_di v ON CAST(e.video_id AS BIGINT) = v.video_id\n"
        f"  WHERE {_window(days, 'e')} AND e.event_name = 'play'\n  GROUP BY v.video_id, v.category, v.app\n) ranked"
    )
    return Job(f"rank_{table.name}", "dws", (table,), sql)


def _dws_ad_cost(app: str, region: str, days: int) -> Job:
    by_ad = _table(
        "dws",
        f"dws_ad_cost_{app}_{region}_{days}d",
        (("ad_id", "bigint"), ("cost", "decimal(18,4)"), ("action_cnt", "bigint")),
    )
    by_advertiser = _table(
        "dws",
        f"dws_advertiser_cost_{app}_{region}_{days}d",
        (("advertiser_id", "bigint"), ("cost", "decimal(18,4)")),
    )
    sql = (
        f"FROM dwd.dwd_ad_{app}_{region}_di\n"
        f"{_insert(by_ad)}\nSELECT ad_id, sum(cost) AS cost, count(1) AS action_cnt, app\n"
        f"WHERE {_window(days)}\nGROUP BY ad_id, app\n"
        f"{_insert(by_advertiser)}\nSELECT advertiser_id, sum(cost) AS cost, app\n"
        f"WHERE {_window(days)} AND action = 'click'\nGROUP BY advertiser_id, app"
    )
    return Job(f"agg_ad_cost_{app}_{region}_{days}d", "dws", (by_ad, by_advertiser), sql)


# builder -> the DWD subjects it reads
_DWS_BUILDERS: tuple[tuple[Callable[[str, str, int], Job], tuple[str, ...]], ...] = (
    (_dws_user_event, ("event",)),
    (_dws_user_order, ("user", "order")),
    (_dws_video_rank, ("event", "video")),
    (_dws_ad_cost, ("ad",)),
)


# ---- ADS: reports, views, exports --------------------------------------------------------------------


def _ads_user_value(app: str, region: str, days: int) -> Job:
    table = _table(
        "ads",
        f"ads_user_value_{app}_{region}_{days}d",
        (
            ("user_id", "bigint"),
            ("pay_amount", "decimal(18,2)"),
            ("event_cnt", "bigint"),
            ("user_level", "string"),
        ),
    )
    sql = (
        f"WITH o AS (\n  SELECT user_id, pay_amount, app FROM dws.dws_user_order_{app}_{region}_{days}d WHERE dt = '{BIZDATE}'\n),\n"
        f"e AS (\n  SELECT user_id, event_cnt FROM dws.dws_user_event_{app}_{region}_{days}d WHERE dt = '{BIZDATE}'\n)\n"
        f"{_insert(table)}\nSELECT o.user_id, o.pay_amount, coalesce(e.event_cnt, 0) AS event_cnt,\n"
        f"  CASE WHEN o.pay_amount > 1000 THEN 'high' WHEN o.pay_amount > 100 THEN 'mid' ELSE 'low' END AS user_level,\n"
        f"  o.app\nFROM o LEFT JOIN e ON o.user_id = e.user_id"
    )
    return Job(f"report_{table.name}", "ads", (table,), sql)


def _ads_top_video_view(app: str, region: str, days: int) -> Job:
    view = Table(
        "ads",
        f"v_top_video_{app}_{region}_{days}d",
        (("video_id", "bigint"), ("category", "string"), ("play_cnt", "bigint"), ("dt", "string")),
    )
    sql = (
        f"CREATE OR REPLACE VIEW {view.qualified_name} AS\nSELECT video_id, category, play_cnt, dt\n"
        f"FROM dws.dws_video_rank_{app}_{region}_{days}d\nWHERE rank_in_category <= 10"
    )
    return Job(f"view_{view.name}", "ads", (view,), sql)


def _ads_advertiser_export(app: str, region: str, days: int) -> Job:
    table = _table(
        "ads",
        f"ads_advertiser_top_{app}_{region}_{days}d",
        (("advertiser_id", "bigint"), ("cost", "decimal(18,4)"), ("cost_rank", "int")),
    )
    sql = (
        f"DROP TABLE IF EXISTS {table.qualified_name};\n"
        f"CREATE TABLE {table.qualified_name} AS\nSELECT advertiser_id, cost,\n"
        f"  rank() OVER (ORDER BY cost DESC) AS cost_rank, app, dt\n"
        f"FROM dws.dws_advertiser_cost_{app}_{region}_{days}d\nWHERE dt = '{BIZDATE}';\n"
        f"EXPORT TABLE {table.qualified_name} TO '/export/ads/{table.name}/{BIZDATE}'"
    )
    return Job(f"export_{table.name}", "ads", (table,), sql)


_ADS_BUILDERS: tuple[tuple[Callable[[str, str, int], Job], tuple[str, ...]], ...] = (
    (_ads_user_value, ("dws_user_order", "dws_user_event")),
    (_ads_top_video_view, ("dws_video_rank",)),
    (_ads_advertiser_export, ("dws_advertiser_cost",)),
)


def _ads_region_overview(region: str, apps: list[str]) -> Job:
    table = _table(
        "ads",
        f"ads_app_overview_{region}_1d",
        (("active_users", "bigint"), ("events", "bigint")),
    )
    branches = "\nUNION ALL\n".join(
        f"SELECT count(DISTINCT user_id) AS active_users, count(1) AS events, '{app}' AS app\n"
        f"FROM dwd.dwd_event_{app}_{region}_di WHERE dt = '{BIZDATE}'"
        for app in apps
    )
    sql = f"{_insert(table)}\nSELECT active_users, events, app FROM (\n{branches}\n) overview"
    return Job(f"report_{table.name}", "ads", (table,), sql)


# ---- assembling ------------------------------------------------------------------------------------


def _layer_counts(tables: int) -> list[int]:
    counts = [max(1, round(tables * share)) for share in LAYER_SHARES]
    counts[0] += tables - sum(counts)
    return counts


def _fill(warehouse: Warehouse, candidates: Iterator[Job], budget: int) -> None:
    """Add candidate jobs until the layer holds ``budget`` tables or the candidates run out."""
    written = 0
    for job in candidates:
        if written >= budget:
            return
        warehouse.add(job)
        written += len(job.outputs)


def build_warehouse(tables: int, seed: int) -> Warehouse:
    """A warehouse of about ``tables`` tables spread over the four layers, with one job per statement.

    Layers are filled upstream first, so every job reads only tables an earlier job writes. The seed
    shuffles which app/region groups each downstream layer picks, so the graph is not a plain grid.
    """
    rng = random.Random(seed)
    ods_count, dwd_count, dws_count, ads_count = _layer_counts(tables)
    warehouse = Warehouse()
    region_iter = _regions()
    groups: list[tuple[str, str]] = []  # (app, region) groups with a full set of ODS subjects
    while len(groups) * len(SUBJECTS) < ods_count:
        region = next(region_iter)
        groups.extend((app, region) for app in APPS)
    ods_jobs = (_ods_job(subject, app, region) for app, region in groups for subject in SUBJECTS)
    _fill(warehouse, ods_jobs, ods_count)

    def has(name: str) -> bool:
        return name in warehouse.tables

    dwd_jobs = (
        job
        for app, region in groups
        for subject in SUBJECTS
        if has(f"ods.ods_{subject}_{app}_{region}_di")
        for job in _dwd_jobs(subject, app, region)
    )
    _fill(warehouse, dwd_jobs, dwd_count)

    shuffled = groups[:]
    rng.shuffle(shuffled)
    dws_jobs = (
        builder(app, region, days)
        for app, region in shuffled
        for days in WINDOW_DAYS
        for builder, subjects in _DWS_BUILDERS
        if all(has(f"dwd.dwd_{subject}_{app}_{region}_di") for subject in subjects)
    )
    _fill(warehouse, dws_jobs, dws_count)

    rng.shuffle(shuffled)
    overview_regions = {
        region: [app for app, r in groups if r == region and has(f"dwd.dwd_event_{app}_{region}_di")]
        for _, region in groups
    }
    overview_jobs = (
        _ads_region_overview(region, apps) for region, apps in overview_regions.items() if len(apps) >= 2
    )
    ads_jobs = (
        builder(app, region, days)
        for app, region in shuffled
        for days in WINDOW_DAYS
        for builder, inputs in _ADS_BUILDERS
        if all(has(f"dws.{prefix}_{app}_{region}_{days}d") for prefix in inputs)
    )
    _fill(warehouse, itertools.chain(overview_jobs, ads_jobs), ads_count)
    return warehouse
