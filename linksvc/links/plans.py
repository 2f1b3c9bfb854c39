"""Answers worked out once per held link and kind of device: the redirect's fast lane for a link clicked again.

A click on a plain link (no password, no lifecycle dates, no click limit, no rules, no A/B split) that carries
no query gets the answer every other such click on that link from the same kind of device and host gets, save
its tracking id: :func:`linksvc.links.decide.decide` reads of the device only its platform and whether it is a
bot, a Chromium browser or an in-app browser, and of the host only the short link's address. So the first such
click works the answer out with ``decide`` and a stand-in tracking id, and keeps it cut at the stand-in; the
next ones join the pieces around their own tracking id, and decode, parse and encode nothing.

The stand-in is 32 random hexadecimal digits made per process, as long as a real tracking id and of the same
characters: unreserved in every URL, so no level of percent-encoding (the intent's fallback, Play's referrer)
changes it or the text around it, and no link's owner can guess it into a stored URL.

Plans are kept per held link object (:class:`linksvc.links.service.HeldLink`): a changed link is a new object
in the worker's read model, and its old plan is never used again. At most ``max_answers`` answers are kept in
all (:data:`MAX_ANSWERS`), the oldest plans dropped first; a plan holds the answers its link's clicks asked for.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any, NamedTuple

import orjson

from linksvc.links.decide import Decision, DeviceLike, decide
from linksvc.links.passwords import protected
from linksvc.links.service import HeldLink

MAX_ANSWERS = 20_000
"""Answers kept at most per process, about 1 KB each (the location's pieces, its UTM and their sources): the
links clicked most keep theirs, and a worker holding 100,000 links spends at most about 20 MB on them."""

DeviceKey = tuple[str, bool, bool, bool]
"""What :func:`~linksvc.links.decide.decide` reads of a device: platform, bot, Chromium, in an app."""


class Answer(NamedTuple):
    """A 302 cut at the tracking id, with what the click records of it."""

    parts: tuple[str, ...]  # the location, cut where the tracking id goes
    answer: str
    utm: dict[str, str]
    utm_origin: dict[str, str]

    def decision(self, tracking_id: str) -> Decision:
        return Decision(302, tracking_id.join(self.parts), None, self.answer, self.utm, tracking_id,
                        utm_origin=self.utm_origin)


class Plan:
    """One held link's plan: whether it is plain, the domain it names, its own preview card settings (what a
    preview fetcher's click reads), and its answers so far by device and host (None for an answer that is not a
    plain 302: the handler gives those)."""

    __slots__ = ("answers", "domain", "held", "plain", "preview")

    def __init__(self, held: HeldLink, link: Mapping[str, Any]) -> None:
        self.held = held
        self.plain = held.rules is None and is_plain(link)
        domain = link.get("domain")
        self.domain: str | None = domain if isinstance(domain, str) else None
        preview = link.get("preview")
        self.preview: Mapping[str, Any] | None = preview if isinstance(preview, dict) and preview else None
        self.answers: dict[tuple[DeviceKey, str | None], Answer | None] = {}


def is_plain(link: Mapping[str, Any]) -> bool:
    """Whether every click on ``link`` without a query is answered by the same decision: no password, never
    unavailable (disabled, not yet valid, expiring, limited) and no A/B split."""
    return (not protected(link) and not link.get("disabled") and link.get("valid_since") is None
            and link.get("expires_at") is None and link.get("max_clicks") is None and not link.get("variants"))


def device_key(device: DeviceLike) -> DeviceKey:
    return device.platform, device.bot, device.chromium, bool(device.in_app)


class DecisionPlans:
    """The plans of one application's held links (its settings fix the service label and the public URL)."""

    def __init__(self, max_answers: int = MAX_ANSWERS) -> None:
        self._plans: dict[str, Plan] = {}
        self._max = max_answers
        self._answers = 0  # kept in all plans
        self.stand_in = secrets.token_hex(16)

    def plan(self, code: str, held: HeldLink) -> tuple[Plan, Mapping[str, Any] | None]:
        """The plan of the link held at ``code``, and its body when it had to be decoded for a new plan."""
        plans = self._plans
        found = plans.get(code)
        if found is not None and found.held is held:
            return found, None
        link = orjson.loads(held.body)
        plan = Plan(held, link)
        if found is not None:
            self._answers -= len(found.answers)
        plans[code] = plan
        return plan, link

    def answer(self, plan: Plan, link: Mapping[str, Any] | None, device: DeviceLike, domain: str | None,
               short_url: str, service_label: str) -> Answer | None:
        """The plain link's answer for ``device`` on ``domain`` (None: the shared host): kept, or worked out now
        with :func:`~linksvc.links.decide.decide` (``link``: the plan's body, if decoded already). None when it
        is not a 302 the lane gives (a page, or a stored URL today's rules refuse)."""
        key = (device_key(device), domain)
        answers = plan.answers
        if key in answers:
            return answers[key]
        body = link if link is not None else orjson.loads(plan.held.body)
        stand_in = self.stand_in
        decision = decide(body, device, {}, False, short_url, stand_in, service_label)
        found = None
        if decision.status == 302 and decision.location is not None and not decision.skipped:
            found = Answer(tuple(decision.location.split(stand_in)), decision.answer, decision.utm,
                           decision.utm_origin)
        while self._answers >= self._max:  # the oldest plans go first (never the one answering now)
            oldest = next(iter(self._plans), None)
            if oldest is None or self._plans[oldest] is plan:
                break
            self._answers -= len(self._plans.pop(oldest).answers)
        answers[key] = found
        self._answers += 1
        return found

    def __len__(self) -> int:
        """The answers kept."""
        return self._answers
