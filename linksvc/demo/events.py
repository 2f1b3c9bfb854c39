"""The demo's two weeks of customer activity, as the events a shop's backend and app would have sent (see
:mod:`linksvc.demo.setup`, which applies them through the ingest path of ``POST /behavior/events``).

For every customer of the account, in a seeded random order over the 13 days before ``now`` (so that the
report's presets "Last 7 days" and "Last week", Monday to Sunday, both hold purchases attributed to campaign
links whatever the weekday; Meta and GA4 skip the older ones, as they would refuse them):

- purchases of the account's products (the SKUs its campaigns name) at its stores, some attributed to a
  person's click on one of the demo links (its ``tracking_id`` and UTM), some carrying the analytics
  client id a web shop would pass on, some Meta's ``fbp`` cookie;
- the account's active custom events (``app_open``, ``store_visit``...), a few a customer, some after a
  click (its ``tracking_id`` and UTM, drawn apart so the rest of the two weeks stays as it was);
- one catering order over $250 by a customer of the lowest tier (the demo's tiers move a customer up on
  such an order), one purchase that spends points the customer holds, and one purchase returned the
  next day (a reversal);
- customers of a higher tier open their two weeks with a bulk order ($100 to $200 of the dearest product):
  their tier's exit conditions count only the purchases the service has seen, and a first small one
  would read as a customer who buys little.

The plan is pure: the events are dictionaries exactly as a client sends them, with the moment each
happened; nothing here reads or writes the store.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from linksvc.clock import iso
from linksvc.links.clicks import Click

DAYS = 13
FALLBACK_SKUS = ("SKU-LATTE-12OZ", "SKU-AMERICANO-12OZ", "SKU-COLDBREW-16OZ")
CHANNELS = ("app", "store", "store", "web")
PURCHASES_PER_CUSTOMER = (8, 6, 4, 4, 6, 4)
CATERING_VALUE = Decimal("262.50")
BULK_VALUE = Decimal(110)
REDEEM_AMOUNT = Decimal(450)


@dataclass(frozen=True)
class Planned:
    at: datetime
    event: dict[str, Any] | None = None  # an event to accept
    reverse_order: str | None = None  # or the order id of a purchase to take back
    reason: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _menu(campaigns: Sequence[Mapping[str, Any]], rng: random.Random) -> list[tuple[str, Decimal]]:
    """The products the account's campaigns name, each with a price."""
    skus = sorted({sku for c in campaigns for sku in (c.get("products") or []) if isinstance(sku, str)})
    return [(sku, Decimal(rng.randrange(14, 30)) / 4) for sku in (skus or FALLBACK_SKUS)]


def _stores(campaigns: Sequence[Mapping[str, Any]]) -> list[str]:
    return sorted({s for c in campaigns for s in (c.get("stores") or []) if isinstance(s, str)}) or ["STORE-1"]


def _moment(rng: random.Random, now: datetime, day: int) -> datetime:
    """A moment of shop hours (8:00 to 20:00 in Bogotá, UTC-5) ``day`` days before today, before ``now``."""
    start = (now - timedelta(days=day)).replace(hour=13, minute=0, second=0, microsecond=0)
    moment = start + timedelta(minutes=rng.randrange(0, 12 * 60), seconds=rng.randrange(60))
    return moment if moment < now else now - timedelta(minutes=rng.randrange(5, 120))


def _attribution(rng: random.Random, clicks: Sequence[Click], at: datetime) -> dict[str, Any] | None:
    """The attribution of a person's click of the two days before ``at``, or None (half the time)."""
    before = [c for c in clicks if not c.bot and at.timestamp() - 2 * 86400 < c.clicked_at < at.timestamp()]
    if not before or rng.random() < 0.5:
        return None
    click = rng.choice(before)
    return {"tracking_id": click.tracking_id, **click.utm}


def _basket(rng: random.Random, menu: Sequence[tuple[str, Decimal]]) -> tuple[list[dict[str, Any]], Decimal]:
    products: list[dict[str, Any]] = []
    value = Decimal(0)
    for sku, price in rng.sample(list(menu), k=min(len(menu), rng.choice((1, 1, 2, 3)))):
        quantity = rng.choice((1, 1, 1, 2))
        products.append({"sku": sku, "quantity": quantity, "price": price})
        value += price * quantity
    return products, value


def _bulk(menu: Sequence[tuple[str, Decimal]]) -> tuple[list[dict[str, Any]], Decimal]:
    sku, price = max(menu, key=lambda item: (item[1], item[0]))
    quantity = int(-(-BULK_VALUE // price))  # enough to pass $110
    return [{"sku": sku, "quantity": quantity, "price": price}], price * quantity


def demo_events(customers: Sequence[Mapping[str, Any]], campaigns: Sequence[Mapping[str, Any]],
                custom_types: Sequence[str], lowest_tier: str | None, points: Mapping[str, tuple[str, Decimal]],
                clicks: Sequence[Click], now: datetime, seed: int) -> list[Planned]:
    """The two weeks' events in time order. ``points`` holds, per customer, a POINTS reward and its balance."""
    rng = random.Random(seed)
    tagging = random.Random(seed + 1)  # which custom events follow a click
    menu, stores = _menu(campaigns, rng), _stores(campaigns)
    plan: list[Planned] = []
    orders = 0
    catering_done = redeem_done = reversal_done = False
    for index, customer in enumerate(customers):
        customer_id = str(customer["id"])
        days = sorted(rng.sample(range(DAYS), k=PURCHASES_PER_CUSTOMER[index % len(PURCHASES_PER_CUSTOMER)]),
                      reverse=True)  # the first purchase the oldest
        for n, day in enumerate(days):
            orders += 1
            at = _moment(rng, now, day)
            products, value = _basket(rng, menu)
            if n == 0 and customer.get("tier_id") not in (None, lowest_tier):
                products, value = _bulk(menu)
            event: dict[str, Any] = {
                "type": "PURCHASE", "customer_id": customer_id, "order_id": f"demo-{1000 + orders}",
                "issued_at": iso(at), "currency": "USD", "products": products, "value": value,
                "store_id": rng.choice(stores), "channel_id": rng.choice(CHANNELS),
            }
            if not catering_done and lowest_tier is not None and customer.get("tier_id") == lowest_tier:
                sku = menu[0][0]
                event.update(products=[{"sku": sku, "name": "Catering: 60 coffees and pastries", "quantity": 1,
                                        "price": CATERING_VALUE}], value=CATERING_VALUE, channel_id="web")
                catering_done = True
            elif not redeem_done and customer_id in points and points[customer_id][1] >= REDEEM_AMOUNT:
                event["redeem"] = [{"id": points[customer_id][0], "amount": REDEEM_AMOUNT}]
                redeem_done = True
            attribution = _attribution(rng, clicks, at)
            if attribution:
                event["attribution"] = attribution
            if event["channel_id"] == "web" or rng.random() < 0.3:
                event["analytics"] = {"client_id": f"{rng.randrange(10**9, 2 * 10**9)}.{int(at.timestamp()) - 86400}",
                                      "session_id": str(int(at.timestamp()) - rng.randrange(60, 900))}
            if rng.random() < 0.3:
                event["click_ids"] = {"fbp": f"fb.1.{int(at.timestamp() * 1000) - 3600_000}."
                                             f"{rng.randrange(10**9, 2 * 10**9)}"}
            plan.append(Planned(at, event))
            if not reversal_done and n == 1 and at < now - timedelta(days=1):
                plan.append(Planned(at + timedelta(hours=20), reverse_order=event["order_id"],
                                    reason="returned: the beans were the wrong grind"))
                reversal_done = True
        for type_name in custom_types:
            for _ in range(rng.randrange(1, 4)):
                at = _moment(rng, now, rng.randrange(0, DAYS))
                properties = {"store_id": rng.choice(stores)} if "store" in type_name else {"app_version": "3.4.1"}
                custom = {"type": type_name, "customer_id": customer_id, "issued_at": iso(at),
                          "properties": properties}
                attribution = _attribution(tagging, clicks, at)
                if attribution:
                    custom["attribution"] = attribution
                plan.append(Planned(at, custom))
    plan.sort(key=lambda planned: planned.at)
    return plan
