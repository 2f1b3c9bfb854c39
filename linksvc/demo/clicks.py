"""Two weeks of clicks on the demo's links, made up once when the demo data is loaded (see :mod:`linksvc.demo.setup`).

Each click is what the resolver would have recorded for a real one: the user agent is one of the real
strings of ``fixtures/user_agents.json``, classified by :func:`linksvc.links.devices.classify`, and the
answer, the resolved UTM and the tracking id come from :func:`linksvc.links.decide.decide` with the click's
query, exactly as on ``GET /{code}``. Only the people are invented: when they clicked, on which link, from
which device, with which query and referer.

The mix follows the kind of link:

    campaign    phones first (Android ahead of iPhone), some from the Facebook, Instagram and TikTok apps'
                browsers, a few ads' utm_source in the query, search referers of Colombia, Mexico and the US
    email       a send day: most clicks in the hours after it, a third of them from desktops
    push        a send day, phones only, some opened by the installed app ($app-found=true)
    whatsapp    shared in chats: phones, and WhatsApp's own link preview fetching each share (a bot)
    others      steady, mixed devices

Clicks follow the day of Bogotá (UTC-5): few at night, peaks at breakfast and after work. Everything is
drawn from one seeded ``random.Random``: the same links give the same clicks, shifted to end at ``now``.
Bots (crawlers and link previews) are about one click in ten.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from linksvc.links.clicks import Click
from linksvc.links.decide import decide, unavailable
from linksvc.links.devices import classify
from linksvc.links.visitors import visitor_hash

SPAN = timedelta(days=14)  # two weeks: "Last week" and "Last 7 days" both hold clicks, whatever the weekday
LOCAL_OFFSET_HOURS = -5  # Bogotá
# Relative activity by local hour: asleep, breakfast, lunch, after work.
HOURLY = (0.15, 0.08, 0.05, 0.05, 0.05, 0.12, 0.35, 0.8, 1.0, 0.85, 0.7, 0.75,
          0.9, 0.85, 0.65, 0.6, 0.65, 0.8, 1.0, 1.0, 0.95, 0.8, 0.55, 0.3)


@dataclass(frozen=True)
class Mix:
    """Who clicks a kind of link: weights of the user-agent groups, the queries and referers they arrive with."""

    share: float  # the link's weight among the account's links
    agents: Mapping[str, float]  # group of user agents -> weight (see agent_groups)
    queries: Sequence[tuple[str, float]] = (("", 1.0),)
    burst: bool = False  # clicks come after a send, not all the time


SOCIAL_QUERIES = (("", 0.5), ("utm_source=facebook&utm_medium=paid_social", 0.2),
                  ("utm_source=google&utm_medium=cpc", 0.15), ("utm_source=tiktok&utm_medium=paid_social", 0.15))
MIXES: dict[str, Mix] = {
    "campaign": Mix(5.0, {"android": 38, "ios": 27, "social_app": 14, "desktop": 12, "social_bot": 8, "other": 1},
                    SOCIAL_QUERIES),
    "email": Mix(3.0, {"desktop": 34, "ios": 30, "android": 26, "scanner_bot": 9, "other": 1},
                 (("", 0.8), ("utm_source=newsletter", 0.2)), burst=True),
    "push": Mix(2.5, {"android": 55, "ios": 45}, (("", 0.7), ("$app-found=true", 0.3)), burst=True),
    "whatsapp": Mix(2.0, {"android": 52, "ios": 28, "desktop": 5, "whatsapp_bot": 15}, burst=True),
    "in_app": Mix(1.0, {"android": 50, "ios": 45, "desktop": 5}),
    "news_feed": Mix(1.2, {"android": 48, "ios": 40, "desktop": 10, "social_bot": 2}),
    "external": Mix(0.8, {"desktop": 45, "android": 25, "ios": 20, "social_bot": 10}),
}
SEARCH_REFERERS = ("https://www.google.com.co/", "https://www.google.com.mx/", "https://www.google.com/")
APP_REFERERS = {"facebook": "https://lm.facebook.com/", "instagram": "https://l.instagram.com/",
                "tiktok": "https://www.tiktok.com/"}


def agent_groups(agents: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """The user agents of ``fixtures/user_agents.json`` by group: phones' and desktops' browsers, the social
    apps' in-app browsers, and the bots by what fetches a link where it is shared."""
    groups: dict[str, list[str]] = {}

    def put(group: str, agent: str) -> None:
        groups.setdefault(group, []).append(agent)

    for entry in agents:
        agent, name = str(entry["user_agent"]), str(entry.get("name", "")).lower()
        if entry.get("bot"):
            if "whatsapp" in name:
                put("whatsapp_bot", agent)
            elif any(word in name for word in ("googlebot", "bingbot", "curl")):
                put("scanner_bot", agent)
            else:
                put("social_bot", agent)
        elif entry.get("in_app") in APP_REFERERS:
            put("social_app", agent)
        elif entry.get("platform") in ("android", "ios", "desktop"):
            put(str(entry["platform"]), agent)
        else:
            put("other", agent)
    return groups


def _weighted(rng: random.Random, choices: Mapping[str, float] | Sequence[tuple[str, float]]) -> str:
    pairs = list(choices.items()) if isinstance(choices, Mapping) else list(choices)
    return rng.choices([value for value, _ in pairs], [weight for _, weight in pairs])[0]


def _busy(rng: random.Random, moment: datetime) -> bool:
    """Keeps a moment with the chance of its local hour (and a little more at weekends)."""
    local = moment + timedelta(hours=LOCAL_OFFSET_HOURS)
    weekend = 1.0 if local.weekday() >= 5 else 0.8
    return rng.random() < HOURLY[local.hour] * weekend


def _moment(rng: random.Random, now: datetime, sent: datetime | None) -> datetime:
    """When one click happened: after the send (most within hours) or any busy moment of the two weeks."""
    for _ in range(100):
        if sent is not None and rng.random() < 0.8:
            moment = sent + timedelta(hours=rng.expovariate(1 / 6))
        else:
            moment = now - SPAN * rng.random()
        if now - SPAN < moment < now and _busy(rng, moment):
            return moment
    return now - SPAN * rng.random()


def _query(text: str) -> dict[str, str]:
    return dict(pair.split("=", 1) for pair in text.split("&")) if text else {}


def _referer(rng: random.Random, kind: str, query: Mapping[str, str], agent: str) -> str:
    source = query.get("utm_source", "")
    device = classify(agent)
    if device.bot:
        return ""
    if device.in_app in APP_REFERERS:
        return APP_REFERERS[device.in_app]
    if source == "google":
        return rng.choice(SEARCH_REFERERS)
    if source in APP_REFERERS:
        return APP_REFERERS[source]
    if kind == "email" and device.platform == "desktop":
        return rng.choice(("https://mail.google.com/", "https://outlook.live.com/", ""))
    if kind == "whatsapp" and device.platform == "desktop":
        return "https://web.whatsapp.com/"
    if kind in ("campaign", "external") and rng.random() < 0.3:
        return rng.choice(SEARCH_REFERERS)
    return ""


def demo_clicks(account_id: str, links: Sequence[Mapping[str, Any]], agents: Sequence[Mapping[str, Any]],
                now: datetime, per_link: int, public_url: str, service_label: str, seed: int) -> list[Click]:
    """About ``per_link`` clicks a link on average over the two weeks before ``now``, on the links a click can
    reach (not disabled, not expired), in time order; campaign links get more than the others."""
    rng = random.Random(seed)
    groups = agent_groups(agents)
    live = [link for link in links if unavailable(link, now.timestamp()) is None]
    weights = [MIXES.get(str(link.get("kind")), MIXES["external"]).share * rng.uniform(0.6, 1.4) for link in live]
    scale = per_link * len(live) / sum(weights) if weights else 0.0
    clicks: list[Click] = []
    for link, weight in zip(live, weights, strict=True):
        kind = str(link.get("kind"))
        mix = MIXES.get(kind, MIXES["external"])
        sent = now - timedelta(days=rng.uniform(1.5, 5.5)) if mix.burst else None
        if sent is not None:  # sends go out at 9:00 in Bogotá
            local = sent + timedelta(hours=LOCAL_OFFSET_HOURS)
            sent = sent - timedelta(hours=local.hour - 9, minutes=local.minute, seconds=local.second)
        mixed = {group: weight for group, weight in mix.agents.items() if groups.get(group)}
        for _ in range(math.floor(weight * scale)):
            agent = rng.choice(groups[_weighted(rng, mixed)])
            query = _query(_weighted(rng, mix.queries))
            device = classify(agent)
            app_found = query.get("$app-found") == "true"
            decision = decide(link, device, query, app_found, f"{public_url}/{link['code']}",
                              f"{rng.getrandbits(128):032x}", service_label)
            if decision.answer == "broken":
                continue
            moment = _moment(rng, now, sent)
            # a demo person is one user agent a day (no address): the same salted hash as a real click's
            visitor = visitor_hash(f"demo-{seed}-{moment.date()}", "", agent)
            clicks.append(Click(account_id, str(link["id"]), decision.tracking_id, moment.timestamp(),
                                device.platform, device.bot, decision.answer, agent,
                                _referer(rng, kind, query, agent), decision.utm, visitor, decision.utm_origin))
    clicks.sort(key=lambda click: click.clicked_at)
    return clicks
