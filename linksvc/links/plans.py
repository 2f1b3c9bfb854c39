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

**Worked out ahead** (:meth:`DecisionPlans.warm`): once a worker holds its links, it works out each plain
link's answers on the shared host for every kind of device (:data:`KINDS`, five), so that a link's first click
from a phone costs what its next one does, whichever of the held links it is. A link's kinds that lead to the
same answer share one, and answers with the same UTM share its dictionaries: a link without apps keeps one
answer, a link with both apps four.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any, NamedTuple

import orjson

from linksvc.links.decide import Decision, DeviceLike, decide
from linksvc.links.passwords import protected
from linksvc.links.service import HeldLink

MAX_ANSWERS = 500_000
"""Answers kept at most per process: a worker holding :data:`~linksvc.links.service.MAX_LINKS_HELD` links keeps
every plain link's answers worked out ahead (five a link, one to four of them distinct) and those of the links
clicked since; beyond, the oldest plans go first. Their cost in memory and time: docs/decisions.md, "Every held
link's answers worked out ahead"."""

MAX_SHARED_UTM = 100_000
"""Distinct UTM dictionaries remembered for answers to share."""

DeviceKey = tuple[str, bool]
"""What :func:`~linksvc.links.decide.decide` reads of a device for a plain link's click without a query: ``bot``
for every bot; ``android`` and whether it gets an intent URL (a Chromium browser, not in an app); ``ios``;
``web`` for every other platform (desktops and the unknown: the destination)."""

BOT: DeviceKey = ("bot", False)
WEB: DeviceKey = ("web", False)
IOS: DeviceKey = ("ios", False)


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
    if device.bot:
        return BOT
    platform = device.platform
    if platform == "android":
        return "android", device.chromium and not device.in_app
    return IOS if platform == "ios" else WEB


class Kind(NamedTuple):
    """A device of one kind (:data:`DeviceKey`), for working answers out ahead."""

    platform: str
    chromium: bool
    bot: bool
    in_app: str | None


KINDS: dict[DeviceKey, Kind] = {
    BOT: Kind("unknown", False, True, None), WEB: Kind("desktop", True, False, None),
    ("android", True): Kind("android", True, False, None), ("android", False): Kind("android", False, False, None),
    IOS: Kind("ios", False, False, None),
}
"""One device of each kind :func:`device_key` tells apart."""

_SHARED_HOST: dict[DeviceKey, tuple[DeviceKey, None]] = {key: (key, None) for key in KINDS}  # one key object each

SETTINGS_OF = {"android": "android", "ios": "ios"}
"""The link's member a phone's answer reads beyond the web's: without it, the phone gets the web's answer."""


class DecisionPlans:
    """The plans of one application's held links (its settings fix the service label and the public URL)."""

    def __init__(self, max_answers: int = MAX_ANSWERS) -> None:
        self._plans: dict[str, Plan] = {}
        self._max = max_answers
        self._answers = 0  # kept in all plans
        self._utm: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}  # one dictionary per UTM (never changed)
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
        found = self._work_out(link if link is not None else orjson.loads(plan.held.body), device, short_url,
                               service_label)
        while self._answers >= self._max:  # the oldest plans go first (never the one answering now)
            oldest = next(iter(self._plans), None)
            if oldest is None or self._plans[oldest] is plan:
                break
            self._answers -= len(self._plans.pop(oldest).answers)
        answers[key] = found
        self._answers += 1
        return found

    def warm(self, code: str, held: HeldLink, short_url: str, service_label: str) -> int:
        """Works out ahead the answers of the link held at ``code`` on the shared host (``short_url``: its
        address there) for every kind of device (:data:`KINDS`), the kinds with the same answer sharing it, unless
        the link is not plain, names a domain, or the answers kept would pass the bound; how many it added."""
        plan, link = self.plan(code, held)
        if not plan.plain or plan.domain is not None or self._answers + len(KINDS) > self._max:
            return 0
        body = link if link is not None else orjson.loads(held.body)
        answers = plan.answers
        web = self._work_out(body, KINDS[WEB], short_url, service_label)
        made: dict[tuple[Any, ...], Answer] = {}  # by value (the UTM dictionaries are shared: by identity)
        if web is not None:
            made[(web.parts, web.answer, id(web.utm), id(web.utm_origin))] = web
        added = 0
        for key, kind in KINDS.items():
            at = _SHARED_HOST[key]
            if at in answers:
                continue
            found = web
            # A bot gets the web's answer; a phone too, unless the link has settings for its platform.
            if key[0] in SETTINGS_OF and body.get(SETTINGS_OF[key[0]]):
                found = self._work_out(body, kind, short_url, service_label)
                if found is not None:
                    found = made.setdefault((found.parts, found.answer, id(found.utm), id(found.utm_origin)), found)
            answers[at] = found
            added += 1
        self._answers += added
        return added

    def _work_out(self, link: Mapping[str, Any], device: DeviceLike, short_url: str, service_label: str
                  ) -> Answer | None:
        stand_in = self.stand_in
        decision = decide(link, device, {}, False, short_url, stand_in, service_label)
        if decision.status != 302 or decision.location is None or decision.skipped:
            return None
        return Answer(tuple(decision.location.split(stand_in)), decision.answer, self._shared(decision.utm),
                      self._shared(decision.utm_origin))

    def _shared(self, values: dict[str, str]) -> dict[str, str]:
        """The one dictionary kept with these items (answers hand theirs to every click; none changes them)."""
        shared = self._utm
        if len(shared) >= MAX_SHARED_UTM:  # UTM of plans dropped since: let the next answers share anew
            shared.clear()
        return shared.setdefault(tuple(values.items()), values)

    def __len__(self) -> int:
        """The answers kept."""
        return self._answers
