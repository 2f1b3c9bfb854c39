"""The full parse of a click's user agent: browser, OS and device, computed off the request path.

The resolver classifies a click with the fast classifier (:mod:`linksvc.links.devices`) and records the
raw header; the click writer fills in the six detail columns once per batch. ``ua-parser``'s regex list
costs about 0.5-1 ms per string it has not seen, so the batch's unseen strings are parsed in a worker
thread (:func:`details_of_batch`) and every answer is kept in an LRU cache keyed by the stored (made safe,
cut) header: a busy link repeats a handful of user agents, which then cost a dictionary look-up.

The parser is ``ua-parser`` 1.x with its fastest installed resolver (``BestAvailableResolver``: the native
``ua-parser-rs`` when installed, else ``google-re2``, else the pure-Python one), not ``user_agents.parse``,
which goes through the legacy ``user_agent_parser`` API and always takes the pure-Python path. A string
that fails to parse gets NULLs: one bad header never fails a batch.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from typing import NamedTuple

import ua_parser
from ua_parser import BestAvailableResolver, Domain, Parser, load_builtins, load_lazy_builtins

from linksvc.untrusted import safe_text

log = logging.getLogger("linksvc.clicks")

USER_AGENT_CHARS = 1000  # the stored column's cut: the cache key is what is stored
CACHE_SIZE = 20_000  # a few MB; the strings a day of clicks repeats
UNKNOWN = "Other"  # ua-parser's family when no pattern matched: stored as NULL


class ClickDetails(NamedTuple):
    browser_family: str | None = None
    browser_version: str | None = None
    os_family: str | None = None
    os_version: str | None = None
    device_brand: str | None = None
    device_model: str | None = None


NO_DETAILS = ClickDetails()


def _native() -> bool:
    return BestAvailableResolver is not ua_parser.BasicResolver


# The native resolvers compile their own automaton and want the lazy matchers; the pure-Python one wants
# them compiled up front (ua_parser's own global parser makes the same choice).
_parser = Parser(BestAvailableResolver(load_lazy_builtins() if _native() else load_builtins()))

RESOLVER = f"{BestAvailableResolver.__module__}.{getattr(BestAvailableResolver, '__name__', 'Resolver')}"


def _version(*parts: str | None) -> str | None:
    """``major.minor.patch`` as far as known; None when not even the major is."""
    known: list[str] = []
    for part in parts:
        if not part:
            break
        known.append(part)
    return ".".join(known) or None


def _family(value: str | None) -> str | None:
    return None if not value or value == UNKNOWN else safe_text(value, 100)


def _text(value: str | None) -> str | None:
    return safe_text(value, 100) or None if value else None


def stored_user_agent(user_agent: str) -> str:
    """The header as the clicks table stores it, and as the cache is keyed."""
    return safe_text(user_agent, USER_AGENT_CHARS)


def parse_details(user_agent: str) -> ClickDetails:
    """Browser, OS and device of one stored user-agent string; NULLs for what is unknown or unparsable."""
    if not user_agent:
        return NO_DETAILS
    try:
        result = _parser(user_agent, Domain.ALL)
    except Exception as exc:  # a header no pattern can handle is a click without details, not a lost batch
        log.warning("user agent not parsed (%s): %.80r", type(exc).__name__, user_agent)
        return NO_DETAILS
    browser, os, device = result.user_agent, result.os, result.device
    browser_family = _family(browser.family) if browser else None
    os_family = _family(os.family) if os else None
    brand = _text(device.brand) if device else None
    return ClickDetails(
        browser_family,
        _text(_version(browser.major, browser.minor, browser.patch)) if browser and browser_family else None,
        os_family,
        _text(_version(os.major, os.minor, os.patch)) if os and os_family else None,
        brand,
        _text(device.model) if device and brand else None,
    )


HAND_OVER_SECONDS = 0.0005
"""Longest the parsing thread holds the interpreter lock between two hand-overs to the event loop."""


class DetailsCache:
    """The parsed details of the last ``size`` distinct user agents, least recently used out first.
    Read on the event loop and filled from the worker thread, hence the lock (held for dict steps only)."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self._entries: OrderedDict[str, ClickDetails] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, agent: str) -> ClickDetails | None:
        with self._lock:
            found = self._entries.get(agent)
            if found is None:
                self.misses += 1
            else:
                self.hits += 1
                self._entries.move_to_end(agent)
            return found

    def put(self, agent: str, details: ClickDetails) -> None:
        with self._lock:
            self._entries[agent] = details
            self._entries.move_to_end(agent)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)

    def parse_all(self, agents: Iterable[str]) -> dict[str, ClickDetails]:
        """Parses and keeps each of ``agents`` (run in a worker thread)."""
        parsed = {}
        clock = time.perf_counter
        handed = clock()
        for agent in agents:
            parsed[agent] = details = parse_details(agent)
            self.put(agent, details)
            # Hand the GIL over every HAND_OVER_SECONDS of parsing: left to the interpreter, the event loop would
            # wait a whole switch interval (5 ms) each time it wakes, and more. Not after every string: a parse
            # takes about 17 µs (ua-parser-rs), and each hand-over about 30 µs more of the two threads' CPU.
            if clock() - handed >= HAND_OVER_SECONDS:
                time.sleep(0)
                handed = clock()
        return parsed

    async def details_of_batch(self, user_agents: Iterable[str]) -> dict[str, ClickDetails]:
        """Details of every distinct stored user agent of a batch. What the cache holds is answered on the
        loop; the rest is parsed in a worker thread, so the event loop keeps serving redirects meanwhile
        (it shares the GIL with the parse, which hands it over after every string)."""
        known: dict[str, ClickDetails] = {}
        unseen: list[str] = []
        for agent in set(user_agents):
            hit = self.get(agent)
            if hit is None:
                unseen.append(agent)
            else:
                known[agent] = hit
        if unseen:
            known.update(await asyncio.to_thread(self.parse_all, unseen))
        return known
