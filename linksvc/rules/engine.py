"""A link's rules, compiled once when the worker takes the link into its read model, and evaluated on each
click by :func:`pick`: a pure function of the compiled rules and the click's :class:`Facts`; no I/O.

Rules are tried in order; the first whose conditions all hold picks its target. :func:`pick` finds that rule
without trying the rules one by one: the rules are bits of an int, and each kind of condition the link uses
(countries, a query parameter, networks...) is tested once per click for all the rules at once, by a
dictionary lookup of the click's value where it can (the rules that admit a country, a query value, a
language, a referrer host or one of its parent domains, a network prefix), the cheapest kinds first, until
the first rule left has had all its kinds tested. The facts a kind needs (the place, the address as a
number, the languages, the referrer's host, the OS and device type) are worked out on first use, once per
click. :func:`explain` tests each rule's conditions one by one (the straightforward evaluation, which
``tests/unit/test_rules_properties.py`` holds :func:`pick` to) and says, for each rule before the one that
matched, which condition did not hold.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter
from socket import AF_INET, AF_INET6, inet_pton
from typing import Any

from linksvc.client_address import IPNetwork, client_address
from linksvc.links.devices import Device
from linksvc.rules.agents import agent_facts
from linksvc.rules.geo import NOWHERE, Geo, Place
from linksvc.rules.languages import negotiated
from linksvc.rules.zones import zone

TARGET_FIELDS = ("destination_url", "deeplink", "android", "ios", "fallback_url")
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
# The order explain() tests a rule's conditions in, and so which one it names when several do not hold.
CONDITION_ORDER = ("bot", "platforms", "browsers", "query", "countries", "os", "devices", "referrer_hosts",
                   "languages", "regions", "networks", "time")
NEEDS = {"countries": "place", "regions": "place", "networks": "address", "os": "agent", "devices": "agent",
         "languages": "languages", "time": "now", "referrer_hosts": "referrer"}


class Facts:
    """What the rules may ask of one click. Built by the resolver (or ``linksvc route``) from what it has.
    What only some rules need (the client's place, its address as a number, its languages, the referrer's
    host, the OS and device type) is worked out on first use, once per click: a click the first rules settle
    never pays for the others. Building one costs a few attribute writes (it happens on every click);
    slots keep them cheap, and the later ones too."""

    __slots__ = ("device", "user_agent", "query", "now", "language_header", "referer", "peer", "forwarded_for",
                 "trusted", "geo", "address", "place", "_languages", "_referrer_host", "_agent", "_ip", "_ip_known")

    def __init__(self, device: Device, user_agent: str, query: Mapping[str, str], now: float,
                 language_header: str = "", referer: str = "", peer: str | None = None, forwarded_for: str = "",
                 trusted: Sequence[IPNetwork] = (), geo: Geo | None = None) -> None:
        self.device = device
        self.user_agent = user_agent
        self.query = query
        self.now = now
        self.language_header = language_header
        self.referer = referer
        self.peer = peer
        self.forwarded_for = forwarded_for
        self.trusted = trusted
        self.geo = geo
        self.address: str | None = None
        self.place: Place | None = None
        self._languages: tuple[frozenset[str], frozenset[str]] | None = None
        self._referrer_host: str | None = None
        self._agent: tuple[str, str] | None = None
        self._ip: tuple[int, int] | None = None
        self._ip_known = False

    def client(self) -> str:
        """The client's address (the socket's peer, or what trusted proxies say)."""
        if self.address is None:
            self.address = (client_address(self.peer, self.forwarded_for, self.trusted)
                            if self.forwarded_for and self.trusted else (self.peer or ""))
        return self.address

    def where(self) -> Place:
        """The client's place (country, and region and city with an ``.mmdb`` file); worked out once."""
        if self.place is None:
            self.place = NOWHERE if self.geo is None else self.geo.place(self.client())
        return self.place

    def ip(self) -> tuple[int, int] | None:
        """The client's address as (4 or 6, its number), or None when it is none."""
        if self._ip_known:
            return self._ip
        self._ip_known = True
        self._ip = found = address_number(self.client() if self.address is None else self.address)
        return found

    def languages(self, offered: frozenset[str]) -> frozenset[str]:
        """The client's language among ``offered`` (the languages the link's rules name), with its fallbacks
        (:func:`negotiated`); worked out once per click."""
        held = self._languages
        if held is not None and held[0] is offered:
            return held[1]
        found = negotiated(self.language_header, offered) if self.language_header else frozenset()
        self._languages = (offered, found)
        return found

    @property
    def referrer_host(self) -> str:
        """The host of the ``Referer`` ("" when none)."""
        if self._referrer_host is None:
            self._referrer_host = _host_of(self.referer)
        return self._referrer_host

    @property
    def os(self) -> str:
        if self._agent is None:
            self._agent = agent_facts(self.user_agent)
        return self._agent[0]

    @property
    def device_type(self) -> str:
        if self._agent is None:
            self._agent = agent_facts(self.user_agent)
        return self._agent[1]

    def prepare(self, needs: frozenset[str]) -> None:
        """Work out the place now when ``needs`` has it (the other facts are worked out on first use)."""
        if "place" in needs:
            self.where()


_V4_MAPPED = 0xFFFF << 32
_from_bytes = int.from_bytes


def address_number(text: str) -> tuple[int, int] | None:
    """``(4, n)`` or ``(6, n)`` for an address (an IPv4-mapped IPv6 address is its IPv4 one), else None."""
    try:
        if ":" not in text:
            return 4, _from_bytes(inet_pton(AF_INET, text), "big")
        number = _from_bytes(inet_pton(AF_INET6, text.partition("%")[0]), "big")
    except (OSError, ValueError):  # not an address; a NUL in it
        return None
    if number >> 32 == 0xFFFF:
        return 4, number ^ _V4_MAPPED
    return 6, number


def _host_of(referer: str) -> str:
    """The host of a ``Referer`` URL, lower case, without port or trailing dot ("" when none)."""
    _, sep, rest = referer.partition("://")
    if not sep:
        return ""
    authority = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].rpartition("@")[2]
    if authority.startswith("["):
        return authority[1:authority.find("]")].lower() if "]" in authority else ""
    return authority.split(":", 1)[0].lower().rstrip(".")


Check = Callable[[Facts], bool]


@dataclass(frozen=True, slots=True)
class CompiledRule:
    name: str
    checks: tuple[tuple[str, Check], ...]  # (condition, test) in CONDITION_ORDER
    conditions: Mapping[str, Any]  # as written, for explanations
    target: Mapping[str, Any] | None  # the five target fields; None: a link target not found
    link: str | None = None  # the code of the link the target was taken from


# How pick() runs a link's rules: rule i is bit i of an int, and a condition is tested a kind at a time. A
# kind's test gives, for one click, the rules whose condition of that kind holds, together with the rules that
# have no condition of that kind; ``running`` (the rules still in the running) lets it skip work for the
# others. One test settles its kind for all the rules at once: a country or a query value is one dictionary
# lookup whatever the number of rules naming it, a referrer host one per dot of the host, a network one per
# prefix length the rules use.
KindTest = Callable[[Facts, int], int]


@dataclass(frozen=True, slots=True)
class Rules:
    rules: tuple[CompiledRule, ...]
    needs: frozenset[str]
    candidates: int = 0  # the rules pick() may choose, as bits: those whose target is known
    # The link's set conditions on what the click has (platforms, countries...): (the click's value, the rules
    # that admit each value, the rules without such a condition); whether one needs the place; the rules all of
    # whose kinds of condition are among these.
    sets: tuple[tuple[Callable[[Facts], Any], dict[Any, int], int], ...] = ()
    placed: bool = False
    settled: int = 0
    # Its other kinds of condition, cheapest first: (the rules with such a condition, its test, the rules settled).
    tests: tuple[tuple[int, KindTest, int], ...] = ()
    # The languages the rules name (lower case): what the client's Accept-Language is negotiated against.
    languages: frozenset[str] = frozenset()


# The kinds of condition in the order pick() tests them: cheapest first (what the click already has, then what
# is worked out once per click on first use, the local time last).
KIND_ORDER = ("platforms", "browsers", "bot", "countries", "regions", "query", "os", "devices", "referrer_hosts",
              "languages", "networks", "time")
# The conditions that test one value of the click against a set of values, and how to read that value.
SET_FACTS: dict[str, Callable[[Facts], Any]] = {
    "countries": attrgetter("place.country"), "regions": attrgetter("place.region"),
    "platforms": attrgetter("device.platform"), "browsers": attrgetter("device.browser"),
    "bot": attrgetter("device.bot"), "os": attrgetter("os"), "devices": attrgetter("device_type")}
# The kinds whose value the click already has (pick() reads it inline; the place is worked out first).
INLINE = ("platforms", "browsers", "bot", "countries", "regions")


def _allowed(name: str, value: Any) -> frozenset[Any]:
    return frozenset((bool(value),)) if name == "bot" else frozenset(value)


def _add(table: dict[Any, int], key: Any, bit: int) -> None:
    table[key] = table.get(key, 0) | bit


def _set_table(name: str, held: Sequence[tuple[int, Any]], without: int) -> dict[Any, int]:
    """A set condition (``countries``, ``platforms``...): the rules that admit each value (and those without)."""
    table: dict[Any, int] = {}
    for bit, value in held:
        for item in _allowed(name, value):
            _add(table, item, bit)
    return {key: bits | without for key, bits in table.items()}


def _set_test(name: str, held: Sequence[tuple[int, Any]], without: int) -> KindTest:
    """:func:`_set_table` as a test, for the facts worked out on first use (``os``, ``devices``)."""
    get = _set_table(name, held, without).get
    fact = SET_FACTS[name]
    return lambda facts, running: get(fact(facts), without)


def _languages_test(held: Sequence[tuple[int, Any]], without: int, offered: frozenset[str]) -> KindTest:
    """The rules naming the client's language (or a fallback of it: both are in ``facts.languages``), as
    negotiated against ``offered``."""
    table: dict[str, int] = {}
    for bit, value in held:
        for tag in value:
            _add(table, tag.lower(), bit)

    def test(facts: Facts, running: int) -> int:
        found = without
        for tag in facts.languages(offered):
            found |= table.get(tag, 0)
        return found

    return test


def _referrer_test(held: Sequence[tuple[int, Any]], without: int) -> KindTest:
    """The rules naming the referrer's host, or (``*.example.com``) a suffix of it that starts at a dot."""
    exact: dict[str, int] = {}
    suffixes: dict[str, int] = {}  # ".example.com"
    for bit, value in held:
        for host in value:
            if host.startswith("*."):
                _add(suffixes, host[1:], bit)
            else:
                _add(exact, host, bit)

    def test(facts: Facts, running: int) -> int:
        if not facts.referer:  # no host to read (the common case: apps and mail send none)
            return without
        host = facts.referrer_host
        if not host:
            return without
        found = without | exact.get(host, 0)
        if suffixes:
            at = host.find(".")
            while at >= 0:
                found |= suffixes.get(host[at:], 0)
                at = host.find(".", at + 1)
        return found

    return test


def _networks_test(held: Sequence[tuple[int, Any]], without: int) -> KindTest:
    """The rules with a network the client's address is in: one lookup per (IP version, prefix length)."""
    groups: dict[tuple[int, int], dict[int, int]] = {}
    for bit, value in held:
        for text in value:
            version, first, mask = _block(text)
            _add(groups.setdefault((version, mask), {}), first, bit)
    blocks = tuple((version, mask, table) for (version, mask), table in groups.items())

    def test(facts: Facts, running: int) -> int:
        address = facts.ip()
        if address is None:
            return without
        version, number = address
        found = without
        for block_version, mask, table in blocks:
            if version == block_version:
                found |= table.get(number & mask, 0)
        return found

    return test


def _query_test_of(held: Sequence[tuple[int, Any]], everyone: int) -> KindTest:
    """The rules whose query parameters all hold. Per parameter the rules naming it: those that want it present,
    those that want it absent, and those that want its value in a set (a rule's ``equals`` and ``one_of`` of
    one parameter are the intersection of their sets), the value giving the rules that admit it."""
    params: dict[str, tuple[list[int], dict[Any, int]]] = {}  # param: ([present, absent, a set], admitted)
    for bit, items in held:
        sets: dict[str, frozenset[Any]] = {}
        for item in items:
            param = item["param"]
            wants, _ = params.setdefault(param, ([0, 0, 0], {}))
            if item.get("present") is not None:
                wants[0 if item["present"] else 1] |= bit
                continue
            allowed = (frozenset((item["equals"],)) if item.get("equals") is not None
                       else frozenset(item.get("one_of") or ()))
            sets[param] = sets[param] & allowed if param in sets else allowed
        for param, allowed in sets.items():
            wants, admitted = params[param]
            wants[2] |= bit
            for value in allowed:
                _add(admitted, value, bit)
    # Per parameter: the rules that fail when it is absent (those wanting it present, or a value), and, for
    # when it is there, those wanting it absent and those wanting a value, with the rules admitting each value.
    table = tuple((param, absent, in_set, admitted, present | (in_set & ~admitted.get(None, 0)))
                  for param, ((present, absent, in_set), admitted) in params.items())

    def test(facts: Facts, running: int) -> int:
        query = facts.query
        failing = 0
        for param, absent, in_set, admitted, if_absent in table:
            if param in query:
                failing |= absent | (in_set & ~admitted.get(query[param], 0))
            else:
                failing |= if_absent
        return everyone & ~failing

    return test


def _time_test(held: Sequence[tuple[int, Any]], everyone: int) -> KindTest:
    """The rules whose time window holds: each window written alike tested once, if a rule in the running has it."""
    windows: dict[str, tuple[Check, list[int]]] = {}
    for bit, value in held:
        key = json.dumps(value, sort_keys=True)
        if key not in windows:
            windows[key] = (_time_check(value), [0])
        windows[key][1][0] |= bit
    tests = tuple((check, bits[0]) for check, bits in windows.values())

    def test(facts: Facts, running: int) -> int:
        failing = 0
        for check, bits in tests:
            if bits & running and not check(facts):
                failing |= bits
        return everyone & ~failing

    return test


def _plan(rules: Sequence[CompiledRule], offered: frozenset[str]
          ) -> tuple[int, tuple[Any, ...], bool, int, tuple[tuple[int, KindTest, int], ...]]:
    """What pick() runs (see :class:`Rules`): the rules it may choose, the set conditions it reads inline, and
    the tests of the other kinds."""
    everyone = (1 << len(rules)) - 1
    candidates = 0
    held: dict[str, list[tuple[int, Any]]] = {}
    for index, rule in enumerate(rules):
        if rule.target is None:
            continue
        candidates |= 1 << index
        for name, _ in rule.checks:
            held.setdefault(name, []).append((1 << index, rule.conditions[name]))
    kinds = [name for name in KIND_ORDER if name in held]
    sets = []
    tests = []
    settled_by_sets = candidates
    for name in kinds:
        with_it = 0
        for bit, _ in held[name]:
            with_it |= bit
        without = everyone & ~with_it
        # The rules all of whose kinds are tested once this one is.
        later = kinds[kinds.index(name) + 1:]
        settled = candidates
        for other in later:
            for bit, _ in held[other]:
                settled &= ~bit
        if name in INLINE:
            sets.append((SET_FACTS[name], _set_table(name, held[name], without), without))
            settled_by_sets = settled
            continue
        if name in SET_FACTS:
            test = _set_test(name, held[name], without)
        elif name == "languages":
            test = _languages_test(held[name], without, offered)
        elif name == "referrer_hosts":
            test = _referrer_test(held[name], without)
        elif name == "networks":
            test = _networks_test(held[name], without)
        elif name == "query":
            test = _query_test_of(held[name], everyone)
        else:
            test = _time_test(held[name], everyone)
        tests.append((with_it, test, settled))
    placed = "countries" in held or "regions" in held
    return candidates, tuple(sets), placed, settled_by_sets, tuple(tests)


def _check(name: str, value: Any, offered: frozenset[str] = frozenset()) -> Check:
    if name == "countries":
        codes = frozenset(value)
        return lambda facts: facts.where().country in codes
    if name == "regions":
        regions = frozenset(value)
        return lambda facts: facts.where().region in regions
    if name == "platforms":
        platforms = frozenset(value)
        return lambda facts: facts.device.platform in platforms
    if name == "browsers":
        browsers = frozenset(value)
        return lambda facts: facts.device.browser in browsers
    if name == "os":
        systems = frozenset(value)
        return lambda facts: facts.os in systems
    if name == "devices":
        kinds = frozenset(value)
        return lambda facts: facts.device_type in kinds
    if name == "bot":
        wanted = bool(value)
        return lambda facts: facts.device.bot is wanted
    if name == "languages":
        tags = frozenset(tag.lower() for tag in value)
        return lambda facts: not tags.isdisjoint(facts.languages(offered))
    if name == "networks":
        blocks = tuple(_block(text) for text in value)
        return lambda facts: _in_networks(facts.ip(), blocks)
    if name == "referrer_hosts":
        exact = frozenset(host for host in value if not host.startswith("*."))
        suffixes = tuple(host[1:] for host in value if host.startswith("*."))  # ".example.com"
        return lambda facts: (host := facts.referrer_host) != "" and (host in exact or host.endswith(suffixes))
    if name == "query":
        if len(value) == 1:  # one call a click, not two
            return _query_check(value[0])
        tests = tuple(_query_test(item) for item in value)
        return lambda facts: all(test(facts.query) for test in tests)
    if name == "time":
        return _time_check(value)
    raise ValueError(f"unknown condition {name!r}")


def _block(text: str) -> tuple[int, int, int]:
    """A CIDR network as (4 or 6, its first address's number, its mask)."""
    network = ipaddress.ip_network(text, strict=False)
    return network.version, int(network.network_address), int(network.netmask)


def _in_networks(address: tuple[int, int] | None, blocks: tuple[tuple[int, int, int], ...]) -> bool:
    if address is None:
        return False
    version, number = address
    for block_version, first, mask in blocks:  # noqa: SIM110 - a loop: any() of a generator costs 0.5 µs more
        if version == block_version and number & mask == first:
            return True
    return False


def _query_check(item: Mapping[str, Any]) -> Check:
    """:func:`_query_test` of the click's query, in one call."""
    param = item["param"]
    if item.get("present") is not None:
        present = bool(item["present"])
        return lambda facts: (param in facts.query) is present
    if item.get("equals") is not None:
        value = item["equals"]
        return lambda facts: facts.query.get(param) == value
    values = frozenset(item.get("one_of") or ())
    return lambda facts: facts.query.get(param) in values


def _query_test(item: Mapping[str, Any]) -> Callable[[Mapping[str, str]], bool]:
    param = item["param"]
    if "present" in item and item["present"] is not None:
        present = bool(item["present"])
        return lambda query: (param in query) is present
    if item.get("equals") is not None:
        value = item["equals"]
        return lambda query: query.get(param) == value
    values = frozenset(item.get("one_of") or ())
    return lambda query: query.get(param) in values


def _minutes(text: str) -> int:
    hours, minutes = text.split(":")
    return int(hours) * 60 + int(minutes)


def _time_check(window: Mapping[str, Any]) -> Check:
    tz = zone(window["timezone"])
    days = frozenset(WEEKDAYS.index(day) for day in window.get("days") or WEEKDAYS)
    start = _minutes(window["from"]) if window.get("from") else None
    end = _minutes(window["to"]) if window.get("to") else None

    def check(facts: Facts) -> bool:
        if tz is None:
            return False
        local = datetime.fromtimestamp(facts.now, tz)
        minute = local.hour * 60 + local.minute
        day = local.weekday()
        if start is None or end is None:
            return day in days
        if start < end:
            return day in days and start <= minute < end
        # past midnight: 22:00 to 06:00 on Friday runs from Friday 22:00 to Saturday 06:00
        if minute >= start:
            return day in days
        return minute < end and (day - 1) % 7 in days

    return check


def compile_rules(rules: Sequence[Mapping[str, Any]], targets: Mapping[str, Mapping[str, Any]]) -> Rules:
    """The rules of a stored link, ready to evaluate; ``targets`` holds the target fields of the links that
    rules lead to, by code (a code missing there makes its rule's target None: the rule is skipped)."""
    compiled = []
    needs: set[str] = set()
    offered = frozenset(tag.lower() for rule in rules for tag in (rule.get("conditions") or {}).get("languages") or ())
    for rule in rules:
        conditions = rule.get("conditions") or {}
        present = [name for name in CONDITION_ORDER if conditions.get(name) is not None]
        checks = tuple((name, _check(name, conditions[name], offered)) for name in present)
        needs.update(NEEDS[name] for name in present if name in NEEDS)
        target = rule.get("target") or {}
        code = target.get("link")
        fields = targets.get(code) if code else {name: target.get(name) for name in TARGET_FIELDS}
        compiled.append(CompiledRule(str(rule.get("name", "")), checks, conditions, fields, code))
    return Rules(tuple(compiled), frozenset(needs), *_plan(compiled, offered), languages=offered)


def target_codes(rules: Sequence[Mapping[str, Any]]) -> list[str]:
    """The codes of the links the rules lead to."""
    codes = []
    for rule in rules:
        target = rule.get("target") if isinstance(rule, dict) else None
        if isinstance(target, dict) and isinstance(target.get("link"), str):
            codes.append(target["link"])
    return codes


def target_fields(link: Mapping[str, Any]) -> dict[str, Any]:
    """What a rule leading to ``link`` takes of it: its destination, deeplink, fallback and apps."""
    return {name: link.get(name) for name in TARGET_FIELDS}


def pick(rules: Rules, facts: Facts) -> CompiledRule | None:
    """The first rule whose conditions all hold for ``facts`` (and whose target is known), or None.

    Each kind of condition the link's rules use is tested once, for all of them at once (the rules still in
    the running, as bits, keep those it admits), cheapest first, a kind no rule in the running has being
    skipped; it stops as soon as the first rule still in the running has had all its kinds tested: it is the
    answer (the rules before it were struck out)."""
    running = rules.candidates
    if rules.sets:
        if rules.placed and facts.place is None:
            facts.where()
        for read, table, without in rules.sets:
            running &= table.get(read(facts), without)
        first = running & -running
        if first & rules.settled:
            return rules.rules[first.bit_length() - 1]
    for with_it, test, settled in rules.tests:
        if running & with_it:
            running &= test(facts, running)
            first = running & -running
            if first & settled:
                return rules.rules[first.bit_length() - 1]
    # Every kind a rule still in the running has was tested: the first of them holds (a rule without
    # conditions holds for every click).
    return rules.rules[(running & -running).bit_length() - 1] if running else None


def with_target(link: Mapping[str, Any], rule: CompiledRule) -> dict[str, Any]:
    """The link as the decision reads it when ``rule`` matched: its own settings (kind, UTM defaults, campaign,
    title) with the rule's destination, deeplink, fallback and apps in place of its own."""
    assert rule.target is not None
    return {**link, **rule.target}


@dataclass(frozen=True)
class Verdict:
    """One rule as :func:`explain` saw it: matched, or the first condition that did not hold."""

    name: str
    matched: bool
    failed: str | None  # the condition that did not hold (None when matched, or target missing)
    why: str


def _describe(name: str, value: Any, facts: Facts, offered: frozenset[str]) -> str:
    if name in ("countries", "regions"):
        place = facts.where()
        seen = place.country if name == "countries" else place.region
        return f"{name} {', '.join(value)}: the client's is {seen or 'unknown'}"
    if name == "languages":
        seen = ", ".join(sorted(facts.languages(offered), key=len, reverse=True)) or "none"
        return f"languages {', '.join(value)}: of the link's languages, the client prefers {seen}"
    if name == "platforms":
        return f"platforms {', '.join(value)}: the platform is {facts.device.platform}"
    if name == "browsers":
        return f"browsers {', '.join(value)}: the browser is {facts.device.browser}"
    if name == "os":
        return f"os {', '.join(value)}: the system is {facts.os}"
    if name == "devices":
        return f"devices {', '.join(value)}: the device is {facts.device_type}"
    if name == "bot":
        return f"bot {str(value).lower()}: the client is {'a bot' if facts.device.bot else 'a person'}"
    if name == "networks":
        return f"networks {', '.join(value)}: the client's address is {facts.client() or 'unknown'}"
    if name == "referrer_hosts":
        return f"referrer_hosts {', '.join(value)}: the referrer's host is {facts.referrer_host or 'none'}"
    if name == "query":
        return "query: " + "; ".join(_query_text(item, facts.query) for item in value)
    if name == "time":
        tz = zone(value["timezone"])
        local = datetime.fromtimestamp(facts.now, tz).strftime("%a %H:%M") if tz else "unknown"
        days = ",".join(value.get("days") or WEEKDAYS)
        hours = f" {value['from']}-{value['to']}" if value.get("from") else ""
        return f"time {days}{hours} in {value['timezone']}: it is {local} there"
    return name


def _query_text(item: Mapping[str, Any], query: Mapping[str, str]) -> str:
    param = item["param"]
    seen = f"{param}={query[param]!r}" if param in query else f"{param} absent"
    if item.get("present") is not None:
        return f"{param} {'present' if item['present'] else 'absent'} ({seen})"
    if item.get("equals") is not None:
        return f"{param} = {item['equals']!r} ({seen})"
    return f"{param} one of {', '.join(map(repr, item.get('one_of') or ()))} ({seen})"


def explain(rules: Rules, facts: Facts) -> list[Verdict]:
    """Each rule up to the one that matched (all of them when none did), with why it did or did not."""
    facts.prepare(rules.needs)
    verdicts = []
    for rule in rules.rules:
        failed = next((name for name, check in rule.checks if not check(facts)), None)
        if failed is not None:
            verdicts.append(Verdict(rule.name, False, failed,
                                    "does not hold: " + _describe(failed, rule.conditions[failed], facts,
                                                                                 rules.languages)))
            continue
        if rule.target is None:
            verdicts.append(Verdict(rule.name, False, None,
                                    f"its conditions hold, but no link of the account has the code {rule.link!r}"))
            continue
        verdicts.append(Verdict(rule.name, True, None, "all conditions hold: " + "; ".join(
            _describe(name, rule.conditions[name], facts, rules.languages) for name, _ in rule.checks)))
        break
    return verdicts
