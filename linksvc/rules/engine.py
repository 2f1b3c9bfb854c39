"""A link's rules, compiled once when the worker takes the link into its read model, and evaluated on each
click by :func:`pick`: a pure function of the compiled rules and the click's :class:`Facts`; no I/O.

Rules are tried in order; the first whose conditions all hold picks its target. Each condition is a small
function of the facts; a rule's conditions run cheapest first, and the facts any rule needs (the country, the
client's languages, the local time...) are worked out once per click, before the first rule, and only when a
rule of the link asks for them. :func:`explain` says, for each rule before the one that matched, which
condition did not hold.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from linksvc.client_address import IPNetwork, client_address
from linksvc.links.devices import Device
from linksvc.rules.agents import agent_facts
from linksvc.rules.geo import NOWHERE, Geo, Place
from linksvc.rules.languages import client_languages
from linksvc.rules.zones import zone

TARGET_FIELDS = ("destination_url", "deeplink", "android", "ios", "fallback_url")
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
# The order a rule's conditions are tested in: cheapest first (a set lookup on what the click already has).
CONDITION_ORDER = ("bot", "platforms", "browsers", "query", "countries", "os", "devices", "referrer_hosts",
                   "languages", "regions", "networks", "time")
NEEDS = {"countries": "place", "regions": "place", "networks": "address", "os": "agent", "devices": "agent",
         "languages": "languages", "time": "now", "referrer_hosts": "referrer"}


class Facts:
    """What the rules may ask of one click. Built by the resolver (or ``linksvc route``) from what it has;
    :meth:`prepare` works out what a set of rules needs, once. Whatever is not given keeps the class's
    default (building one costs a few attribute writes: it happens on the clicks of links with rules)."""

    address: str | None = None
    place: Place | None = None
    languages: frozenset[str] = frozenset()
    os = "other"
    device_type = "other"
    referrer_host = ""
    _ip: tuple[int, int] | None = None
    _prepared: frozenset[str] = frozenset()

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
        if self._ip is None:
            self._ip = address_number(self.client())
        return self._ip

    def values(self) -> dict[str, Any]:
        """The facts the set conditions test, by name (after :meth:`prepare`)."""
        place = self.place or NOWHERE
        device = self.device
        return {"country": place.country, "region": place.region, "platform": device.platform,
                "browser": device.browser, "bot": device.bot, "os": self.os, "device_type": self.device_type}

    def prepare(self, needs: frozenset[str]) -> None:
        if self._prepared:
            if needs <= self._prepared:
                return
            needs = needs - self._prepared
        if "place" in needs:
            self.where()
        if "address" in needs:
            self.ip()
        if "agent" in needs:
            self.os, self.device_type = agent_facts(self.user_agent)
        if "languages" in needs:
            self.languages = client_languages(self.language_header) if self.language_header else frozenset()
        if "referrer" in needs:
            self.referrer_host = _host_of(self.referer)
        self._prepared = self._prepared | needs


_V4_MAPPED = 0xFFFF << 32


def address_number(text: str) -> tuple[int, int] | None:
    """``(4, n)`` or ``(6, n)`` for an address (an IPv4-mapped IPv6 address is its IPv4 one), else None."""
    try:
        if ":" not in text:
            return 4, int.from_bytes(socket.inet_pton(socket.AF_INET, text), "big")
        number = int.from_bytes(socket.inet_pton(socket.AF_INET6, text.partition("%")[0]), "big")
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


@dataclass(frozen=True, slots=True)
class Rules:
    rules: tuple[CompiledRule, ...]
    needs: frozenset[str]
    steps: tuple[Step, ...] = ()  # what pick() runs: see _steps


# A step of pick() is (sets, tests, rule, key, table). A rule: it matches when each (fact, allowed) of ``sets``
# has the click's value of that fact in ``allowed`` and each of ``tests`` holds. A run of rules that each test
# one fact against a set: ``table.get(value of the fact key)`` is the rule that matches (rule is None then).
Step = tuple[tuple[tuple[str, frozenset[Any]], ...], tuple["Check", ...], "CompiledRule | None", str,
             "dict[Any, CompiledRule] | None"]
# The conditions that test one value of the click against a set, and the fact they test (Facts.values).
SET_FACTS = {"countries": "country", "regions": "region", "platforms": "platform", "browsers": "browser",
             "os": "os", "devices": "device_type", "bot": "bot"}


def _allowed(name: str, value: Any) -> frozenset[Any]:
    return frozenset((bool(value),)) if name == "bot" else frozenset(value)


def _steps(rules: Sequence[CompiledRule]) -> tuple[Step, ...]:
    """The rules as pick() runs them: a rule's set conditions inline (no call each), the rest as tests.
    Consecutive rules whose one condition is a set of the same fact (``countries``, ``platforms``...) become
    one dictionary lookup: the value of that fact gives the first of them that lists it, which is the one
    trying them in order would find."""
    steps: list[Step] = []
    run_key: str | None = None
    table: dict[Any, CompiledRule] = {}
    for rule in rules:
        if rule.target is None:
            continue
        single = rule.checks[0][0] if len(rule.checks) == 1 else None
        if single in SET_FACTS and single != "bot":
            if single != run_key:
                table = {}
                run_key = single
                steps.append(((), (), None, SET_FACTS[single], table))
            for value in rule.conditions[single]:
                table.setdefault(value, rule)
            continue
        run_key = None
        sets = tuple((SET_FACTS[name], _allowed(name, rule.conditions[name])) for name, _ in rule.checks
                     if name in SET_FACTS)
        tests = tuple(check for name, check in rule.checks if name not in SET_FACTS)
        steps.append((sets, tests, rule, "", None))
    return tuple(steps)


def _all(checks: Sequence[Check]) -> Check:
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda facts: first(facts) and second(facts)
    return lambda facts: all(check(facts) for check in checks)


def _check(name: str, value: Any) -> Check:
    if name == "countries":
        codes = frozenset(value)
        return lambda facts: facts.place.country in codes  # type: ignore[union-attr]
    if name == "regions":
        regions = frozenset(value)
        return lambda facts: facts.place.region in regions  # type: ignore[union-attr]
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
        return lambda facts: not tags.isdisjoint(facts.languages)
    if name == "networks":
        blocks = tuple(_block(text) for text in value)
        return lambda facts: _in_networks(facts._ip, blocks)
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
    for rule in rules:
        conditions = rule.get("conditions") or {}
        present = [name for name in CONDITION_ORDER if conditions.get(name) is not None]
        checks = tuple((name, _check(name, conditions[name])) for name in present)
        needs.update(NEEDS[name] for name in present if name in NEEDS)
        target = rule.get("target") or {}
        code = target.get("link")
        fields = targets.get(code) if code else {name: target.get(name) for name in TARGET_FIELDS}
        compiled.append(CompiledRule(str(rule.get("name", "")), checks, conditions, fields, code))
    return Rules(tuple(compiled), frozenset(needs), _steps(compiled))


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
    """The first rule whose conditions all hold for ``facts`` (and whose target is known), or None."""
    facts.prepare(rules.needs)
    values = facts.values()
    for sets, tests, rule, key, table in rules.steps:
        if table is not None:
            found = table.get(values[key])
            if found is not None:
                return found
            continue
        for fact, allowed in sets:
            if values[fact] not in allowed:
                break
        else:
            for test in tests:
                if not test(facts):
                    break
            else:
                return rule
    return None


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


def _describe(name: str, value: Any, facts: Facts) -> str:
    if name in ("countries", "regions"):
        place = facts.where()
        seen = place.country if name == "countries" else place.region
        return f"{name} {', '.join(value)}: the client's is {seen or 'unknown'}"
    if name == "languages":
        seen = ", ".join(sorted(facts.languages)) or "none"
        return f"languages {', '.join(value)}: the client prefers {seen}"
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
                                    "does not hold: " + _describe(failed, rule.conditions[failed], facts)))
            continue
        if rule.target is None:
            verdicts.append(Verdict(rule.name, False, None,
                                    f"its conditions hold, but no link of the account has the code {rule.link!r}"))
            continue
        verdicts.append(Verdict(rule.name, True, None, "all conditions hold: " + "; ".join(
            _describe(name, rule.conditions[name], facts) for name, _ in rule.checks)))
        break
    return verdicts
