"""The variant report of a link's A/B split (issue 34; docs/decisions.md, "A/B split (issue 34)").

Per variant, in the link's order (the first is the control), then the variants clicks were recorded for that the
link no longer has: human and bot clicks, visitors, purchases, revenue per currency, the conversion rate and,
for every variant but the control, a two-proportion z-test against the control.

- **Visitors** are the distinct visitors of the variant's human clicks, the daily salted hash of
  :mod:`linksvc.links.visitors` (a person who comes back another day counts again, as in the conversion report).
- **Purchases** reach a variant through attribution: the click behind the purchase's ``tracking_id`` (the
  latest one of the account carrying it, as the event batch finds it) went to that variant. Reversed
  purchases are taken back.
- **Conversion rate** = purchases / visitors (4 decimals): the people a variant was shown to are its sample.
- **The test**: a purchase is a success, a visitor a trial. With x purchases of n visitors for the control (c)
  and the variant (v), p = (x_c + x_v) / (n_c + n_v), z = (x_v/n_v - x_c/n_c) / sqrt(p (1 - p) (1/n_c + 1/n_v)),
  and the two-sided p-value is 2 (1 - Phi(|z|)) (:class:`statistics.NormalDist`). Confidence is 1 - p-value. It
  is not computed (null, with the reason) when either side has no visitor, when nobody or everybody bought
  (the variance is 0), or when a side has more purchases than visitors (repeat buyers: the test's model, one
  trial per person, does not hold).

It reads the rollups only (``storage.conversions.variant_figures``: the daily rows of each variant, and of each
variant and currency), after the clicks waiting in the recorder are stored and counted: never a scan of clicks or
events. Without ``from`` and ``to`` it covers the split's whole life; with either, the days of the range as the
conversion report takes them (:func:`linksvc.reports.conversions.report_query`: dates as YYYY-MM-DD, UTC, ``to``
inclusive, a week when one end is left out, at most 366 days): clicks by the day they were taken, purchases by
the day they were issued.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from statistics import NormalDist
from typing import Any

from linksvc.links.clicks import ClickRecorder
from linksvc.reports.conversions import amount_text, report_query
from linksvc.reports.rollups import count_before_reading
from linksvc.resources.service import Resources
from linksvc.store import Store
from storage import conversions as repo

RATE = Decimal("0.0001")
SIGNIFICANT = 0.05  # a p-value under it is called significant (95% confidence)
_NORMAL = NormalDist()


@dataclass(frozen=True)
class ZTest:
    z: float
    p_value: float


def z_test(control_successes: int, control_trials: int, successes: int, trials: int) -> ZTest | str:
    """The pooled two-proportion z-test of ``successes`` / ``trials`` against the control's, two-sided; or why
    it cannot be computed."""
    if control_trials <= 0 or trials <= 0:
        return "a side has no visitor yet"
    if control_successes > control_trials or successes > trials:
        return "a side has more purchases than visitors (repeat purchases): the test counts one per visitor"
    pooled = (control_successes + successes) / (control_trials + trials)
    if pooled in (0.0, 1.0):
        return "no purchase yet" if pooled == 0.0 else "every visitor purchased"
    error = math.sqrt(pooled * (1 - pooled) * (1 / control_trials + 1 / trials))
    z = (successes / trials - control_successes / control_trials) / error
    return ZTest(z, 2 * (1 - _NORMAL.cdf(abs(z))))


def verdict(name: str, control: str, rate: float, control_rate: float, test: ZTest, trials: int,
            control_trials: int) -> str:
    """"B converts 23% better than A; 97% confidence; 1,204 and 1,188 visitors" (the variant's visitors first)."""
    confidence = f"{math.floor((1 - test.p_value) * 100)}% confidence"
    sizes = f"{trials:,} and {control_trials:,} visitors"
    if control_rate == 0:
        comparison = f"{name} converts at {rate:.2%} where {control} has no purchase yet"
    elif rate == control_rate:
        comparison = f"{name} converts as well as {control}"
    else:
        lift = (rate - control_rate) / control_rate
        comparison = f"{name} converts {abs(lift):.0%} {'better' if lift > 0 else 'worse'} than {control}"
    return f"{comparison}; {confidence}; {sizes}"


def variant_range(first: str | None, last: str | None) -> tuple[str, str] | None:
    """The report's days (first, last as YYYY-MM-DD), checked as the conversion report checks its own (400 naming
    ``from`` or ``to``); None for all time, when neither is given."""
    if not first and not last:
        return None
    query = report_query(first, last, None)
    return query.first.isoformat(), query.last.isoformat()


async def variant_report(db: Store, resources: Resources, clicks: ClickRecorder, account_id: str, link_id: str,
                         days: tuple[str, str] | None = None) -> dict[str, Any]:
    """The report as the admin API answers it (``data``), of ``days`` (:func:`variant_range`; None: all time);
    404 unless the link is the account's. The clicks the recorder still buffers are written and counted first,
    so every click answered before is in it."""
    link = await resources.get(account_id, "links", link_id)
    await clicks.flush_before_counting()
    await count_before_reading(db)
    first, last = days if days is not None else (None, None)
    counted, revenue = await repo.variant_figures(db.reader, account_id, link_id, first, last)
    return {**report_of(link, counted, revenue), "from": first, "to": last}


def report_of(link: Mapping[str, Any], counted: Sequence[repo.VariantClicks],
              revenue: Sequence[repo.VariantRevenue]) -> dict[str, Any]:
    """The report from the rollups' rows (pure: the tests and the dashboard's figures are the same numbers)."""
    configured = [(str(v["name"]), int(v["weight"])) for v in link.get("variants") or []]
    names = [name for name, _ in configured]
    recorded = sorted(({row.variant for row in counted} | {row.variant for row in revenue}) - set(names))
    by_clicks = {row.variant: row for row in counted}
    money: dict[str, dict[str, Decimal]] = {}
    purchases: dict[str, int] = {}
    for sold in revenue:
        money.setdefault(sold.variant, {})
        money[sold.variant][sold.currency] = money[sold.variant].get(sold.currency, Decimal(0)) + sold.revenue
        purchases[sold.variant] = purchases.get(sold.variant, 0) + sold.purchases
    weights = dict(configured)
    rows: list[dict[str, Any]] = []
    for name in [*names, *(n for n in recorded if n not in weights)]:
        found = by_clicks.get(name)
        visitors = found.visitors if found else 0
        bought = purchases.get(name, 0)
        rows.append({
            "variant": name, "weight": weights.get(name), "control": bool(names) and name == names[0],
            "in_link": name in weights,
            "clicks": {"human": found.human if found else 0, "bot": found.bot if found else 0},
            "visitors": visitors, "purchases": bought,
            "revenue": {c: amount_text(c, a) for c, a in sorted(money.get(name, {}).items()) if c or a},
            "conversion_rate": str((Decimal(bought) / Decimal(visitors)).quantize(RATE, ROUND_HALF_UP))
            if visitors else None,
            "significance": None,
        })
    if rows and rows[0]["control"]:
        control = rows[0]
        for row in rows[1:]:
            if row["in_link"]:
                row["significance"] = _significance(row, control)
    return {"link_id": link["id"], "code": link.get("code"), "control": names[0] if names else None,
            "conversion_rate_of": "purchases / visitors", "variants": rows}


def _significance(row: Mapping[str, Any], control: Mapping[str, Any]) -> dict[str, Any]:
    n, x, nc, xc = row["visitors"], row["purchases"], control["visitors"], control["purchases"]
    test = z_test(xc, nc, x, n)
    found: dict[str, Any] = {"against": control["variant"], "test": "two-proportion z-test (pooled, two-sided)",
                             "sample_sizes": {row["variant"]: n, control["variant"]: nc}}
    if isinstance(test, str):
        return {**found, "z": None, "p_value": None, "confidence": None, "lift": None, "significant": False,
                "verdict": f"Not computed for {row['variant']} against {control['variant']}: {test}"}
    rate, control_rate = x / n, xc / nc
    return {**found, "z": round(test.z, 4), "p_value": round(test.p_value, 6),
            "confidence": round(1 - test.p_value, 6),
            "lift": None if control_rate == 0 else round((rate - control_rate) / control_rate, 4),
            "significant": test.p_value < SIGNIFICANT,
            "verdict": verdict(row["variant"], control["variant"], rate, control_rate, test, n, nc)}
