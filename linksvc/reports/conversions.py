"""The conversion report (docs/decisions.md, "Conversion report and attribution lineage"): for an account and a
range of days, clicks (people and bots apart), unique visitors, routes, attributed events by type, purchases,
revenue per currency, conversion rate and time from click to purchase, grouped by one or two dimensions.

It reads the rollups only (``storage.conversions``), summed by the store per the dimensions asked (a campaign is
the link's current campaign: the rollups are summed per link and the links' campaigns added here), plus the
account's links for their codes and campaigns. Revenue is added with Decimal, exactly; median and p90 of the
time from click to purchase are the upper bounds of the buckets holding those ranks (nearest rank).
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from linksvc.accounts.service import get_account
from linksvc.clock import utcnow
from linksvc.errors import Issues
from linksvc.links.clicks import ClickRecorder
from linksvc.reports.rollups import count_before_reading
from linksvc.spreadsheet import csv_text
from linksvc.store import Store
from storage import conversions as repo
from storage import link_tags
from storage.db import Conn

GROUPS = ("link", "campaign", "utm_source", "utm_medium", "utm_campaign", "platform", "day", "country",
          "referrer_host", "rule", "variant", "tag", "folder")
ORGANISING = ("tag", "folder")
"""The link's tags and folder (issue 36), worked out when the report is read from its link-level sums and the
links' tags and folders as they are now: a link with several tags counts in each of its tags' rows (so the rows of
a grouping by tag may add up to more than the totals, which count each click once)."""
CLICK_GROUPS = ("country", "referrer_host", "rule", "variant")
"""Dimensions of the click behind a row (issue 34): country, referrer host, rule and A/B variant."""
CLICK_PAIRS = {"country": ("day",), "referrer_host": ("day",), "rule": ("day", "link", "campaign"),
               "variant": ("link",)}
"""What each of :data:`CLICK_GROUPS` is grouped with (``storage.conversions.CLICK_LEVELS``): country and referrer
host alone or with the day; the rule alone or with the day, the link or the campaign; a variant is named per
link (every split has its "A"), so only with the link."""
UNKNOWN = {"country": "(unknown)", "referrer_host": "(no referrer)", "rule": "(no rule)", "variant": "(no variant)",
           "tag": "(no tag)", "folder": "(no folder)"}
"""How the CSV names a click dimension's missing value (null in JSON): no country known, no Referer (or none
with a host), no rule matched, no split."""
MAX_DAYS = 366
DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
"""A report's dates: the calendar date YYYY-MM-DD only (no ISO week or ordinal dates, no basic format)."""
DEFAULT_DAYS = 7
_COLUMN = {"link": "link_id", "campaign": "link_id", "utm_source": "utm_source", "utm_medium": "utm_medium",
           "utm_campaign": "utm_campaign", "platform": "platform", "day": "day",
           **{g: g for g in CLICK_GROUPS}, "tag": "link_id", "folder": "link_id"}
RATE = Decimal("0.0001")
# ISO 4217 currencies whose minor unit is not the cent (every other code has two decimals).
MINOR_UNITS = {**dict.fromkeys(("BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI",
                                "VND", "VUV", "XAF", "XOF", "XPF"), 0),
               **dict.fromkeys(("BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"), 3),
               **dict.fromkeys(("CLF", "UYW"), 4)}


def amount_text(currency: str, amount: Decimal) -> str:
    """An exact sum as text at its currency's decimals (``49.00`` USD, ``1500`` JPY), or at more when the
    amounts sent had more (``12.345`` USD): never rounded, and the same sum reads the same in every grouping
    (Decimal addition alone would give ``49.0`` or ``922.30``, as the amounts added happened to be written)."""
    places = MINOR_UNITS.get(currency, 2)
    exponent = amount.normalize().as_tuple().exponent
    if isinstance(exponent, int) and -exponent > places:
        places = -exponent
    try:
        return format(amount.quantize(Decimal(1).scaleb(-places)), "f")
    except InvalidOperation:  # more digits than the context's precision: as it is
        return format(amount, "f")


def _amounts(revenue: Mapping[str, Decimal]) -> dict[str, str]:
    return {currency: amount_text(currency, amount) for currency, amount in sorted(revenue.items())}


UTM_FROM = ("click", "event")
"""Whose UTM keys an event in a grouping by a UTM field: the click's behind its tracking_id (the default: the
click's and its events' UTM are the same, so the click and its purchases share a row), or the event's own."""
DEFAULT_ROWS, MAX_ROWS = 100, 1000
"""The groups a report shows at most (its ``limit``), the rest summed in its ``other``."""


@dataclass(frozen=True)
class ReportQuery:
    first: date
    last: date
    group_by: tuple[str, ...]
    utm_from: str = "click"
    limit: int = DEFAULT_ROWS


def report_query(first: str | None, last: str | None, group_by: str | None, today: date | None = None,
                 utm_from: str = "click", limit: int = DEFAULT_ROWS) -> ReportQuery:
    """The query's parameters checked: every problem named at once (400)."""
    issues = Issues()
    if utm_from not in UTM_FROM:
        issues.add("utm_from", f"must be one of {', '.join(UTM_FROM)}", "enum", UTM_FROM)
    if not 1 <= limit <= MAX_ROWS:
        issues.add("limit", f"must be from 1 to {MAX_ROWS}", "range")
    today = today or utcnow().date()
    dates: dict[str, date | None] = {}
    for name, text in (("from", first), ("to", last)):
        dates[name] = None
        if text is None or text == "":
            continue
        try:
            if not DATE.fullmatch(text):  # fromisoformat alone takes 2026-W02-1 and 20260105 too
                raise ValueError(text)
            dates[name] = date.fromisoformat(text)
        except ValueError:
            issues.add(name, "must be a date as YYYY-MM-DD", "format")
    groups: tuple[str, ...] = ("day",)
    if group_by is not None:
        groups = tuple(part.strip() for part in group_by.split(","))
        if not 1 <= len(groups) <= 2:
            issues.add("group_by", "names one or two dimensions, separated by a comma", "count")
        elif len(set(groups)) != len(groups):
            issues.add("group_by", "names a dimension twice", "duplicate")
        elif any(g not in GROUPS for g in groups):
            issues.add("group_by", f"must be among {', '.join(GROUPS)}", "enum", GROUPS)
        else:
            _check_pairs(groups, issues)
    issues.raise_if_any("Invalid query")
    week = timedelta(days=DEFAULT_DAYS - 1)
    last_day = dates["to"] or (today if dates["from"] is None else None)
    first_day = dates["from"] or (last_day or today)
    try:
        if dates["from"] is None:  # the week ending at to
            first_day -= week
        if last_day is None:  # only from: a week from it, not past today, nor before from
            last_day = max(first_day, min(today, first_day + week))
    except OverflowError:  # a week before year 1 or after 9999
        issues.add("to" if dates["from"] is None else "from", "the default range would leave the calendar",
                   "range")
        issues.raise_if_any("Invalid query")
    assert last_day is not None
    if last_day < first_day:
        issues.add("to", "must not be before from", "range")
    elif (last_day - first_day).days + 1 > MAX_DAYS:
        issues.add("to", f"the range holds at most {MAX_DAYS} days", "range")
    issues.raise_if_any("Invalid query")
    return ReportQuery(first_day, last_day, groups, utm_from, limit)


def _check_pairs(groups: Sequence[str], issues: Issues) -> None:
    """A click dimension goes with what :data:`CLICK_PAIRS` says; the 400 names every grouping allowed. A tag or a
    folder is the link's: not with the link itself, nor with each other."""
    organising = [g for g in groups if g in ORGANISING]
    if organising and ("link" in groups or len(organising) == 2):
        issues.add("group_by", f"{organising[0]} is a link's: group by {organising[0]} alone or with day, campaign, "
                               "platform or a utm_* field", "enum")
        return
    for group in groups:
        if group not in CLICK_PAIRS:
            continue
        other = [g for g in groups if g != group]
        allowed = CLICK_PAIRS[group]
        if (other and other[0] not in allowed) or (not other and group == "variant"):
            accepted = [*([] if group == "variant" else [group]), *(f"{g},{group}" for g in allowed)]
            if group == "variant":
                message = "variant is named per link (every split has its own): group_by=link,variant"
            else:
                message = (f"{group} goes alone or with {' or '.join(allowed)}: group_by={', '.join(accepted)}")
            issues.add("group_by", message, "enum", accepted)
            return


COUNTS = ("human", "bot", "visitors", "web", "app", "store")  # of clicks, in the rollup's column order


@dataclass
class Figures:
    """What a row (or the totals) adds up: the click counts of :data:`COUNTS`, events by type, purchases,
    revenue by currency and the click-to-purchase histogram."""

    counts: list[int] = field(default_factory=lambda: [0] * len(COUNTS))
    events: dict[str, int] = field(default_factory=dict)
    purchases: int = 0
    revenue: dict[str, Decimal] = field(default_factory=dict)
    delays: list[int] = field(default_factory=lambda: [0] * len(repo.BUCKETS))

    def add(self, other: Figures) -> None:
        self.counts = [a + b for a, b in zip(self.counts, other.counts, strict=True)]
        for kind, n in other.events.items():
            self.events[kind] = self.events.get(kind, 0) + n
        self.purchases += other.purchases
        for currency, amount in other.revenue.items():
            self.revenue[currency] = self.revenue.get(currency, Decimal(0)) + amount
        self.delays = [a + b for a, b in zip(self.delays, other.delays, strict=True)]

    def minus(self, shown: Figures) -> Figures:
        """What these figures hold beyond ``shown`` (a part of them): the groups not shown."""
        rest = Figures([a - b for a, b in zip(self.counts, shown.counts, strict=True)],
                       {k: n - shown.events.get(k, 0) for k, n in self.events.items()},
                       self.purchases - shown.purchases,
                       {c: a - shown.revenue.get(c, Decimal(0)) for c, a in self.revenue.items()},
                       [a - b for a, b in zip(self.delays, shown.delays, strict=True)])
        rest.revenue = {c: a for c, a in rest.revenue.items() if a}
        return rest

    def view(self) -> dict[str, Any]:
        human, bot, visitors, web, app, store = self.counts
        rate = None
        if human:
            rate = str((Decimal(self.purchases) / Decimal(human)).quantize(RATE, ROUND_HALF_UP))
        return {
            "clicks": {"human": human, "bot": bot},
            "visitors": visitors,
            "routes": {"web": web, "app": app, "store": store},
            "events": {kind: n for kind, n in sorted(self.events.items()) if n},
            "purchases": self.purchases,
            "revenue": _amounts(self.revenue),
            "conversion_rate": rate,
            "click_to_purchase": {"median_seconds": rank_bound(self.delays, 0.5),
                                  "p90_seconds": rank_bound(self.delays, 0.9)},
        }


def rank_bound(counts: Sequence[int], q: float) -> int | None:
    """The upper bound (seconds) of the bucket holding rank ceil(q * n) of the ``n`` counted delays; None when
    nothing is counted, or when that bucket is the last one, which has no bound (over 30 days)."""
    n = sum(counts)
    if n <= 0:
        return None
    rank = max(1, math.ceil(q * n))
    seen = 0
    for i, count in enumerate(counts):
        seen += count
        if seen >= rank:
            bound = repo.BUCKETS[i]
            return None if math.isinf(bound) else int(bound)
    return None


Key = tuple[str, ...]


async def conversion_report(db: Store, clicks: ClickRecorder, account_id: str, query: ReportQuery
                            ) -> dict[str, Any]:
    """The report as the admin API answers it (``data``); the clicks the recorder still buffers are written
    first, and every stored click not counted yet is counted into the rollups (:mod:`linksvc.reports.rollups`),
    so that every click answered before is in it. Read on three read connections of the store at once
    (clicks, events and revenue are three statements, each over tens of thousands of rows at size)."""
    await clicks.flush_before_counting()
    await count_before_reading(db)
    conns = await db.readers(3)
    return await report_from(conns[0], account_id, query, conns[1:])


async def report_from(conn: Conn, account_id: str, query: ReportQuery, more: Sequence[Conn] = ()
                      ) -> dict[str, Any]:
    """The report read on ``conn``; given ``more`` connections, its events and revenue statements run on them
    at the same time as its clicks statement on ``conn``. Its first ``query.limit`` groups first are chosen by
    the store (:func:`storage.conversions.top_groups`), and only theirs are read; the rest are ``other``, the
    totals less the groups shown. A grouping by tag or folder reads every link's sums and regroups them
    (:func:`_by_tag_or_folder`)."""
    await get_account(conn, account_id)  # 404 for an unknown account
    if any(g in ORGANISING for g in query.group_by):
        sums = await _by_tag_or_folder(conn, account_id, query, more)
    else:
        sums = await _sums(conn, account_id, query, more)
    ordered = sorted(sums.rows.items(), key=_order)
    return {
        "from": query.first.isoformat(), "to": query.last.isoformat(), "group_by": list(query.group_by),
        "utm_from": query.utm_from, "limit": query.limit, "groups": sums.groups,
        "rows": [{"key": _key_view(query.group_by, key, sums.labels, sums.names), **figures.view()}
                 for key, figures in ordered],
        "other": None if sums.other is None else {"groups": sums.groups - len(sums.rows), **sums.other.view()},
        "totals": sums.totals.view(),
        "unattributed": {"events": sum(sums.unattributed.events.values()), "purchases": sums.unattributed.purchases,
                         "revenue": _amounts(sums.unattributed.revenue)},
    }


def _order(item: tuple[Key, Figures]) -> tuple[int, int, Key]:
    return -item[1].purchases, -item[1].counts[0], item[0]


@dataclass
class _Sums:
    """A report's figures before they are shown: the rows by key, the totals, the groups beyond the limit summed
    (None when every group is shown), how many groups there are, the unattributed events, and the names of the
    account's links and campaigns."""

    rows: dict[Key, Figures]
    totals: Figures
    other: Figures | None
    groups: int
    unattributed: Figures
    labels: Mapping[str, repo.LinkLabel]
    names: Mapping[str, str | None]


ALL_GROUPS = 1 << 62
"""The ``limit`` of the link-level read behind a grouping by tag or folder: every link's sums."""


async def _by_tag_or_folder(conn: Conn, account_id: str, query: ReportQuery, more: Sequence[Conn]) -> _Sums:
    """Every link's sums (the tag or folder dimension read as the link), each link's row then added to the row of
    each of its tags (``(no tag)``: none), or of its folder: ``query.limit`` rows shown, the rest summed in
    ``other``. The totals are the links' own, each click once."""
    at = next(i for i, g in enumerate(query.group_by) if g in ORGANISING)
    organising = query.group_by[at]
    by_link = tuple("link" if g in ORGANISING else g for g in query.group_by)
    sums = await _sums(conn, account_id, ReportQuery(query.first, query.last, by_link, query.utm_from, ALL_GROUPS),
                       more)
    if organising == "tag":
        tagged = await link_tags.all_tags_of(conn, account_id)
        names_of = lambda link_id: tagged.get(link_id) or [""]  # noqa: E731
    else:
        folders = await link_tags.folders_of(conn, account_id)
        names_of = lambda link_id: [folders.get(link_id, "")]  # noqa: E731
    rows: dict[Key, Figures] = {}
    for key, figures in sums.rows.items():
        for name in names_of(key[at]):
            regrouped = (*key[:at], name, *key[at + 1:])
            rows.setdefault(regrouped, Figures()).add(figures)
    ordered = sorted(rows.items(), key=_order)
    shown, rest = dict(ordered[:query.limit]), ordered[query.limit:]
    other = None
    if rest:
        other = Figures()
        for _, figures in rest:
            other.add(figures)
    return _Sums(shown, sums.totals, other, len(rows), sums.unattributed, sums.labels, sums.names)


async def _sums(conn: Conn, account_id: str, query: ReportQuery, more: Sequence[Conn]) -> _Sums:
    first, last = query.first.isoformat(), query.last.isoformat()
    columns = list(dict.fromkeys(_COLUMN[g] for g in query.group_by))
    own_utm = query.utm_from == "event" and any(g.startswith("utm_") for g in query.group_by)
    # Events: link_id '' holds the unattributed; without the link dimension, only whether there was one.
    with_link = columns if "link_id" in columns else [*columns, repo.ATTRIBUTED]
    link_at = with_link.index("link_id" if "link_id" in columns else repo.ATTRIBUTED)
    labels = await repo.link_labels(conn, account_id)
    no_label = repo.LinkLabel("", "", None)
    key_columns = tuple(repo.CAMPAIGN if g == "campaign" else _COLUMN[g] for g in query.group_by)
    shown, groups = await repo.top_groups(conn, account_id, first, last, key_columns, query.limit, own_utm)
    only = repo.Only(key_columns, tuple(shown)) if groups > len(shown) else None

    # A row's key from the dimensions read: their places (a campaign is the link's, looked up in labels).
    places = [(with_link.index(_COLUMN[g]), g == "campaign") for g in query.group_by]

    def key_of(dims: Sequence[Any]) -> Key:
        return tuple(labels.get(dims[at], no_label).campaign_id if campaign else dims[at]
                     for at, campaign in places)

    rows: dict[Key, Figures] = {}
    unattributed = Figures()

    def row_of(key: Key) -> Figures:
        figures = rows.get(key)
        if figures is None:
            figures = rows[key] = Figures()
        return figures

    def target(dims: Sequence[Any]) -> Figures:
        return row_of(key_of(dims)) if dims[link_at] else unattributed

    events_conn, revenue_conn = (list(more) + [conn, conn])[:2]
    whole = [repo.ATTRIBUTED]  # the totals, from the level of the day's totals (the same whoever's UTM)
    click_sums, event_sums, revenue_sums, whole_clicks, whole_events, whole_revenue = await asyncio.gather(
        repo.clicks_by(conn, account_id, first, last, columns, only),  # columns: a prefix of with_link
        repo.events_by(events_conn, account_id, first, last, with_link, own_utm, only),
        repo.revenue_by(revenue_conn, account_id, first, last, with_link, own_utm, only),
        _nothing() if only is None else repo.clicks_by(conn, account_id, first, last, whole),
        _nothing() if only is None else repo.events_by(events_conn, account_id, first, last, whole),
        _nothing() if only is None else repo.revenue_by(revenue_conn, account_id, first, last, whole))
    # Added in place: up to a thousand groups, each a few additions.
    for sums in click_sums:
        counts = row_of(key_of(sums.dims)).counts
        for i, n in enumerate(sums.counts):
            counts[i] += n
    for events in event_sums:
        _add_events(target(events.dims), events)
    for revenue in revenue_sums:
        _add_revenue(target(revenue.dims), revenue)
    totals = Figures()
    for figures in rows.values():
        totals.add(figures)
    other = None
    if only is not None:
        whole_figures, ignored = Figures(), Figures()
        for sums in whole_clicks:
            whole_figures.counts = [a + b for a, b in zip(whole_figures.counts, sums.counts, strict=True)]
        for events in whole_events:
            _add_events(whole_figures if events.dims[0] else ignored, events)
        for revenue in whole_revenue:
            _add_revenue(whole_figures if revenue.dims[0] else ignored, revenue)
        other = whole_figures.minus(totals)
        totals = whole_figures
    names = {label.campaign_id: label.campaign_name for label in labels.values() if label.campaign_id}
    return _Sums(rows, totals, other, groups, unattributed, labels, names)


async def _nothing() -> list[Any]:
    return []


def _add_events(figures: Figures, events: repo.EventSum) -> None:
    figures.events[events.type] = figures.events.get(events.type, 0) + events.events


def _add_revenue(figures: Figures, revenue: repo.RevenueSum) -> None:
    if not revenue.purchases:  # every purchase of that currency was reversed: no revenue to show in it
        return
    figures.purchases += revenue.purchases
    figures.revenue[revenue.currency] = figures.revenue.get(revenue.currency, Decimal(0)) + revenue.revenue
    delays = figures.delays
    for i, n in enumerate(revenue.delays):
        delays[i] += n


def _key_view(group_by: Sequence[str], key: Key, labels: Mapping[str, repo.LinkLabel],
              names: Mapping[str, str | None]) -> dict[str, Any]:
    view: dict[str, Any] = {}
    for name, value in zip(group_by, key, strict=True):
        view[name] = value
        if name == "link":
            view["link_code"] = labels[value].code if value in labels else None
        elif name == "campaign":
            view["campaign_name"] = names.get(value) if value else None
        elif (name in CLICK_GROUPS or name in ORGANISING) and not value:
            # no country known, no referrer, no rule, no split, no tag, no folder: null
            view[name] = None
    return view


OTHER = "(other)"
CSV_HEADERS = {"tag": "tag (a link counts in each of its tags)"}
"""Key columns whose CSV header says more than their name."""
CSV_FIGURES = ("clicks_human", "clicks_bot", "visitors", "routes_web", "routes_app", "routes_store", "events",
               "purchases", "revenue", "conversion_rate", "median_seconds", "p90_seconds")


def report_csv(report: Mapping[str, Any]) -> str:
    """The report's rows as CSV (:func:`linksvc.spreadsheet.csv_text`: every field quoted, none a formula): one
    column per key member, then the figures; events and revenue as ``type=n`` and ``CUR=amount`` joined by
    ``; `` (they have a member per type or currency); a click dimension's missing value as :data:`UNKNOWN` says.
    The groups beyond the report's limit are one last line, ``(other)`` in each key column."""
    keys: list[str] = []
    for name in report["group_by"]:
        keys.append(name)
        if name == "link":
            keys.append("link_code")
        elif name == "campaign":
            keys.append("campaign_name")
    other = report.get("other")

    def cell(key: Mapping[str, Any], name: str) -> Any:
        value = key.get(name)
        return UNKNOWN[name] if value is None and name in UNKNOWN else value
    return csv_text([[*(CSV_HEADERS.get(k, k) for k in keys), *CSV_FIGURES],
                     *([cell(row["key"], k) for k in keys] + _figure_cells(row) for row in report["rows"]),
                     *([[OTHER] * len(keys) + _figure_cells(other)] if other else [])])


def _figure_cells(row: Mapping[str, Any]) -> list[Any]:
    delays = row["click_to_purchase"]
    return [row["clicks"]["human"], row["clicks"]["bot"], row["visitors"], row["routes"]["web"], row["routes"]["app"],
            row["routes"]["store"], "; ".join(f"{k}={n}" for k, n in row["events"].items()), row["purchases"],
            "; ".join(f"{c}={a}" for c, a in row["revenue"].items()), row["conversion_rate"],
            delays["median_seconds"], delays["p90_seconds"]]
