"""A living demo: what the accounts of a seed file marked ``"demo": true`` (``fixtures/demo.json``) get on
top of their resources, once, at the first start of the service after they were loaded
(:func:`add_activity`).

- **Two weeks of clicks** on the account's links (:mod:`linksvc.demo.clicks`), ending at the moment of
  loading, written the way the click writer writes real ones: the same row
  (:func:`linksvc.links.clicks.stored_row`) with the user agent's full parse (browser, OS, device).
- **Two weeks of customer activity** (:mod:`linksvc.demo.events`): purchases and custom events accepted
  through the ingest of ``POST /behavior/events`` (:func:`linksvc.loyalty.service.prepare` and
  :func:`~linksvc.loyalty.service.apply`), at the moment each happened, so wallets, tiers and the ledger
  move as they would, and every enabled connection gets its deliveries in the outbox; one purchase is
  taken back (:func:`~linksvc.loyalty.reversal.reverse`).
The seed marks the accounts (``demo_accounts``); the mark turns on the receivers the demo's connections
deliver to, on the service itself (:mod:`linksvc.demo.endpoints`), and records when the activity
was added, so it is added once. The activity is not part of the seed itself: loading the file twice still
changes nothing, while the activity, like real traffic, moves what it moves (a customer's tier, a wallet).
All of it is added in one transaction: whole or not at all.
"""

from __future__ import annotations

import logging
import time
import zlib
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from linksvc.clock import iso, utcnow
from linksvc.demo.clicks import demo_clicks
from linksvc.demo.events import demo_events
from linksvc.jsoncodec import dumpb, loads
from linksvc.links.click_details import parse_details, stored_user_agent
from linksvc.links.clicks import stored_row
from linksvc.loyalty import reversal
from linksvc.loyalty import service as events
from linksvc.settings import REPO_ROOT
from storage import clicks as click_repo
from storage import demo as repo
from storage import documents
from storage import wallet as wallet_repo
from storage.db import AnyDatabase, Tx

log = logging.getLogger("linksvc.demo")
USER_AGENTS = REPO_ROOT / "fixtures" / "user_agents.json"
CLICKS_PER_LINK = 300  # over two weeks: about 150 a week


def read_user_agents(path: Path = USER_AGENTS) -> list[dict[str, Any]]:
    """The labelled real user agents the demo's clicks are made of; none when the file is not there."""
    try:
        agents = loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        log.warning("no demo clicks: cannot read %s (%s)", path, exc)
        return []
    return [a for a in agents if isinstance(a, dict) and isinstance(a.get("user_agent"), str)]


def _seed_of(account_id: str) -> int:
    """The random seed of one account's demo: the same account always gets the same activity."""
    return zlib.crc32(account_id.encode())


async def _bodies(tx: Tx, table: str, account_id: str) -> list[dict[str, Any]]:
    return [doc.body for doc in await documents.list_all(tx, table, account_id)]


async def _points(tx: Tx, account_id: str, customers: list[dict[str, Any]], rewards: list[dict[str, Any]],
                  now: str) -> dict[str, tuple[str, Decimal]]:
    """Each customer's balance of the account's first POINTS reward."""
    reward = next((r["id"] for r in rewards if r.get("type") == "POINTS"), None)
    balances: dict[str, tuple[str, Decimal]] = {}
    if reward is None:
        return balances
    for customer in customers:
        lines = await wallet_repo.open_lines_of_reward(tx, account_id, customer["id"], reward, now)
        balances[customer["id"]] = (reward, sum((line.amount for line in lines), Decimal(0)))
    return balances


async def _populate(tx: Tx, account_id: str, now: datetime, public_url: str, service_label: str,
                    agents: list[dict[str, Any]]) -> tuple[int, int]:
    """Adds one account's two weeks of clicks and activity; returns how many clicks and events."""
    seed = _seed_of(account_id)
    links = await _bodies(tx, "links", account_id)
    clicks = demo_clicks(account_id, links, agents, now, CLICKS_PER_LINK, public_url, service_label, seed)
    details = {agent: parse_details(stored_user_agent(agent)) for agent in {c.user_agent for c in clicks}}
    await click_repo.insert_clicks(tx, [stored_row(c, details[c.user_agent]) for c in clicks])

    customers = await _bodies(tx, "customers", account_id)
    tiers = await _bodies(tx, "tiers", account_id)
    lowest = min(tiers, key=lambda t: Decimal(str(t.get("level", 0))))["id"] if tiers else None
    custom_types = sorted(t["name"] for t in await _bodies(tx, "custom_event_types", account_id) if t.get("active"))
    points = await _points(tx, account_id, customers, await _bodies(tx, "rewards", account_id), iso(now))
    plan = demo_events(customers, await _bodies(tx, "campaigns", account_id), custom_types, lowest, points,
                       clicks, now, seed)
    accepted: dict[str, str] = {}
    for planned in plan:
        if planned.event is not None:
            raw = loads(dumpb(planned.event))  # as a client's JSON arrives: numbers, not Decimals
            event_id, _ = await events.apply(tx, account_id, events.prepare(raw, "SERVER", planned.at), planned.at)
            if planned.event.get("order_id"):
                accepted[planned.event["order_id"]] = event_id
        elif planned.reverse_order in accepted:
            await reversal.reverse(tx, account_id, accepted[planned.reverse_order], planned.reason, planned.at)
    await repo.set_activity(tx, account_id, iso(now))
    return len(clicks), len(plan)


async def _add_waiting(tx: Tx, now: datetime, public_url: str, service_label: str) -> dict[str, int]:
    """A unit of work, in one transaction: the activity of every demo account that has none yet."""
    added = {"accounts": 0, "clicks": 0, "events": 0}
    waiting = await repo.without_activity(tx)
    agents = read_user_agents() if waiting else []
    for account_id in waiting:
        clicks, planned = await _populate(tx, account_id, now, public_url, service_label, agents)
        added["accounts"] += 1
        added["clicks"] += clicks
        added["events"] += planned
    return added


async def add_activity(db: AnyDatabase, public_url: str, service_label: str) -> dict[str, int]:
    """Adds their week of activity, ending now, to the demo accounts that have none yet. The check is inside
    the transaction that adds it, so several workers starting at once add it once. It is a unit of the write
    queue (``AnyDatabase.write``): on the writer's thread in one hop, the repository calls never waiting there."""
    if not await repo.accounts(db.reader):
        return {"accounts": 0, "clicks": 0, "events": 0}
    started = time.perf_counter()
    now = utcnow()
    added = await db.write(lambda tx: _add_waiting(tx, now, public_url, service_label))
    if added["accounts"]:
        log.info("demo activity added: %d clicks and %d events in %.0f ms", added["clicks"], added["events"],
                 (time.perf_counter() - started) * 1000, extra={"added": added})
    return added
