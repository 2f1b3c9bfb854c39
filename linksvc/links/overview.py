"""What the dashboard shows of links: the searchable list, and the preview of where a link sends each device.

The preview runs the resolver's own rules (:func:`linksvc.links.decide.decide` on a device that
:func:`linksvc.links.devices.classify` made from a real user agent), so what the UTM builder shows is
what a click will get. A click's ``tracking_id`` is new each time; the preview puts :data:`TRACKING_ID`
in its place, a word of URL-safe characters that reads the same at every level of encoding (inside an
intent URL or a Play referrer too), so the page can mark every place it stands. Each device's answer comes
with its explanation (:func:`linksvc.links.explain.explain`), and :func:`route_of_code` explains the
answer to one click on a stored link, for ``linksvc route``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import unquote, urlsplit

from linksvc.accounts.service import get_account
from linksvc.clock import iso, utcnow
from linksvc.domains.hosts import LIVE, held_domains
from linksvc.domains.hosts import short_url as short_url_of
from linksvc.links import passwords, variants
from linksvc.links.clicks import ClickRecorder
from linksvc.links.decide import unavailable
from linksvc.links.devices import classify
from linksvc.links.explain import PASSWORD_TEXT, Step, describe_device, explain, explain_unavailable
from linksvc.links.organise import LinkSearch, link_filter
from linksvc.links.passwords import protected
from linksvc.links.previews import PreviewCard, card_on, is_preview_fetcher
from linksvc.links.urls import query_values
from linksvc.links.utm import default_utm, edit_utm, utm_of
from linksvc.rules.engine import CompiledRule, Facts, Rules, compile_rules, target_codes, target_fields, with_target
from linksvc.rules.engine import explain as explain_rules
from linksvc.rules.geo import Geo, Place
from linksvc.sorting import order_of
from linksvc.store import Store
from storage import link_overview as repo
from storage.clicks import human_clicks_of
from storage.db import Conn
from storage.links import AppSettings, StoredLink, app_settings_of_account, link_by_code, links_at_codes

CLICK_DAYS = 7
TRACKING_ID = "TRACKING_ID"
NEW_CODE = "NEW_CODE"
"""Stands for the code of a link that has none yet (one is made when the link is created)."""

# One user agent for each device the preview shows, as in fixtures/user_agents.json (a test checks them).
PREVIEW_DEVICES: tuple[tuple[str, str, str], ...] = (
    ("desktop", "Chrome on Windows",
     "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 "
     "Safari/537.36"),
    ("android", "Chrome on Android (full user agent, Pixel 7)",
     "Mozilla/5.0 (Linux; Android 13; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/116.0.0.0 "
     "Mobile Safari/537.36"),
    ("ios", "Safari on iPhone",
     "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
     "Version/17.5 Mobile/15E148 Safari/604.1"),
)


async def link_overview(db: Store, clicks: ClickRecorder, account_id: str, search: LinkSearch, limit: int,
                        offset: int, public_url: str, domain_scheme: str = "https",
                        sort: str = "-created") -> tuple[list[dict[str, Any]], int]:
    """One page of the account's links that ``search`` finds, in the order ``sort`` names
    (:mod:`linksvc.sorting`; newest first unless told: ``created``, ``updated``, ``code``, ``clicks`` of all time,
    ``last_clicked``), with their human clicks of the last seven days and of all time and the time of the latest
    (every click taken so far is counted). The page is read on the background reader: counting a page of links'
    clicks walks every click of the week on them, which anonymous clickers add without end, and an order by
    clicks counts those of every link found."""
    await get_account(db.reader, account_id)
    await clicks.flush_before_counting()
    found = link_filter(search)
    since = iso(utcnow() - timedelta(days=CLICK_DAYS))
    key, descending = order_of(sort)
    rows = await repo.page_links(db.background, account_id, found, since, limit, offset, key, descending)
    total = await repo.count_links(db.background, account_id, found)
    items = []
    for row in rows:
        link = row.link
        items.append({
            "id": link["id"], "code": link["code"], "kind": link["kind"], "campaign_id": link.get("campaign_id"),
            "campaign_name": row.campaign_name, "destination_url": link["destination_url"],
            "disabled": bool(link.get("disabled")), "expires_at": link.get("expires_at"),
            "tags": list(link.get("tags") or []), "folder": link.get("folder"),
            "short_url": short_url_of(public_url, domain_scheme, link),
            "clicks_7d": row.clicks,
            "clicks": row.total_clicks, "last_clicked_at": row.last_clicked_at,
            "created_at": row.created_at, "updated_at": row.updated_at,
        })
    return items, total


@dataclass(frozen=True)
class ClickAt:
    """What ``linksvc route`` is told of the click beside its user agent and query: the client's country (or its
    address, placed as the resolver places it), its ``Accept-Language``, its ``Referer``, and its ``Cookie``
    header (None: not given, so the variant is the one a first visit gets and a protected link is explained past
    its password page; given, it is all the browser sends: the variant cookie ``lsv_<link id>`` a returning
    visitor holds, and the password cookie ``linksvc_pw_<code>`` or the page without it)."""

    country: str | None = None
    ip: str | None = None
    language: str = ""
    referer: str = ""
    cookie: str | None = None


@dataclass(frozen=True)
class Visitor:
    """Who clicks, for a preview of a link's rules (the dashboard's "Try a visitor"): the device is each
    preview device in turn; the rest is what :class:`ClickAt` tells ``linksvc route``, the click's query and
    when it comes (None: now)."""

    click: ClickAt = ClickAt()
    query: Mapping[str, str] = field(default_factory=dict)
    at: float | None = None


@dataclass(frozen=True)
class HostApps:
    """The apps of the link's account that the association files of the link's host list: iOS apps (``TEAM.bundle``,
    universal links) and Android packages with their certificate fingerprints (verified App Links), each claiming
    every path; ``unverified``: Android packages the account's links name without a fingerprint, which
    ``assetlinks.json`` cannot list (:mod:`linksvc.links.wellknown`)."""

    host: str = ""
    ios: tuple[str, ...] = ()
    android: tuple[str, ...] = ()
    unverified: tuple[str, ...] = ()


def host_apps(host: str, apps: list[AppSettings]) -> HostApps:
    """What the association files on ``host`` list of ``apps`` (the rule of :mod:`linksvc.links.wellknown`)."""
    ios = sorted({f"{a.ios['team_id']}.{a.ios['bundle_id']}" for a in apps
                  if a.ios and a.ios.get("team_id") and a.ios.get("bundle_id")})
    android = [a.android for a in apps if a.android and a.android.get("package")]
    verified = {app["package"] for app in android if app.get("sha256_cert_fingerprints")}
    named = {app["package"] for app in android}
    return HostApps(host, tuple(ios), tuple(sorted(verified)), tuple(sorted(named - verified)))


async def apps_on_host_of(db: Store, account_id: str, link: Mapping[str, Any], public_url: str,
                          domain_scheme: str) -> HostApps:
    """The account's apps as the association files of the link's short URL host list them: its domain's when
    the link names one (none while that domain is pending), else the shared host's, which lists the apps of the
    accounts without a live domain (:func:`linksvc.links.service.apps_of_host`)."""
    host = urlsplit(short_url_of(public_url, domain_scheme, {**link, "code": NEW_CODE})).hostname or ""
    held = await held_domains(db).current()
    if link.get("domain"):
        domain = held.get(str(link["domain"]))
        if domain is None or domain.status != LIVE or domain.account_id != account_id:
            return HostApps(host)
    elif any(row.account_id == account_id and row.status == LIVE for row in held.values()):
        return HostApps(host)
    return host_apps(host, await app_settings_of_account(db.background, account_id))


def _app_of_device(device_name: str, device: Any, target: Mapping[str, Any], short_url: str, service_label: str,
                   apps: HostApps) -> tuple[dict[str, Any] | None, Step | None]:
    """What an installed app makes of a click on the short link from this device: iOS opens a universal link, and
    Android a verified App Link, in the app without the browser, when the host's association files list an app
    of the account; the app then asks the service with ``$app-found=true`` and gets the resolver's answer to
    that (the deeplink). With a step saying so; or, on Android, a step saying why the app is not opened."""
    if device.bot or device_name not in ("ios", "android"):
        return None, None
    names = apps.ios if device_name == "ios" else apps.android
    if not names:
        if device_name == "android" and apps.unverified and not (target.get("android") or {}).get("package"):
            return None, {"step": "app", "text": (
                f"the account's app {', '.join(apps.unverified)} is known, but no link names its signing "
                "certificate (android.sha256_cert_fingerprints), so assetlinks.json on "
                f"{apps.host} does not list it and Android opens the short link in the browser")}
        return None, None
    decision, _ = explain(target, device, {"$app-found": "true"}, False, short_url, TRACKING_ID, service_label)
    via = "a universal link" if device_name == "ios" else "a verified App Link"
    files = "apple-app-site-association" if device_name == "ios" else "assetlinks.json"
    opened = "with the deeplink" if decision.answer == "deeplink" else "with the destination (no deeplink)"
    text = (f"with the app installed, the short link is {via}: {files} on {apps.host} lists {', '.join(names)} "
            f"for every path, so the app opens and asks the service with $app-found=true, which answers {opened}")
    return ({"apps": list(names), "via": "universal_link" if device_name == "ios" else "app_link",
             "answer": decision.answer, "location": decision.location}, {"step": "app", "text": text})


async def preview_for_account(db: Store, account_id: str, link: Mapping[str, Any],
                              utm_changes: Mapping[str, str | None], public_url: str, service_label: str,
                              domain_scheme: str = "https", visitor: Visitor | None = None,
                              geo: Geo | None = None) -> dict[str, Any]:
    """:func:`preview` for an account of the store (404 for an unknown one), the link's rules as given (not
    saved yet) compiled with the account's links they lead to."""
    await get_account(db.reader, account_id)
    rules = link.get("rules")
    compiled = None
    if rules:
        codes = target_codes(rules)
        others = await links_at_codes(db.reader, codes) if codes else {}
        compiled = compile_rules(rules, {code: target_fields(other.link) for code, other in others.items()
                                         if other.account_id == account_id})
    apps = await apps_on_host_of(db, account_id, link, public_url, domain_scheme)
    return preview(link, utm_changes, public_url, service_label, domain_scheme, compiled, visitor or Visitor(), geo,
                   apps)


def preview(link: Mapping[str, Any], utm_changes: Mapping[str, str | None], public_url: str,
            service_label: str, domain_scheme: str = "https", rules: Rules | None = None,
            visitor: Visitor | None = None, geo: Geo | None = None, apps: HostApps | None = None
            ) -> dict[str, Any]:
    """Where a click on ``link`` goes from each preview device once ``utm_changes`` are applied to its
    destination (the rule of ``PATCH .../links/{id}/utm``: a value sets a field, None or "" removes it), and,
    with ``rules``, which rule picks the target for ``visitor`` on that device. With ``apps`` (the account's apps
    the short link's host lists), each phone also says what the installed app makes of the click."""
    visitor = visitor or Visitor()
    now = visitor.at if visitor.at is not None else utcnow().timestamp()
    destination = edit_utm(link["destination_url"], utm_changes)
    edited = {key: value for key, value in link.items() if key != "rules"} | {"destination_url": destination}
    short_url = short_url_of(public_url, domain_scheme, {**link, "code": link.get("code") or NEW_CODE})
    devices = []
    for device_name, label, user_agent in PREVIEW_DEVICES:
        device = classify(user_agent)
        matched: CompiledRule | None = None
        rule_steps: list[Step] = []
        if rules is not None:
            facts = Facts(device, user_agent, visitor.query, now, visitor.click.language, visitor.click.referer,
                          visitor.click.ip, "", (), geo or Geo())
            if visitor.click.country is not None:
                facts.place = Place(visitor.click.country.upper())
            matched, rule_steps = _rule_steps(rules, facts, visitor.click, PREVIEW_WORDS)
        target = edited if matched is None else with_target(edited, matched)
        decision, steps = explain(target, device, visitor.query, False, short_url, TRACKING_ID, service_label)
        steps[1:1] = rule_steps
        app, app_step = _app_of_device(device_name, device, target, short_url, service_label, apps or HostApps())
        if app_step is not None:
            steps.append(app_step)
        devices.append({"device": device_name, "label": label, "user_agent": user_agent, "answer": decision.answer,
                        "location": decision.location, "utm": decision.utm,
                        "rule": None if matched is None else matched.name, "app": app, "explanation": steps})
    return {
        "destination_url": destination,
        "destination_utm": utm_of(query_values(destination)),
        "defaults": default_utm(link["kind"], service_label, link.get("campaign_id"), link.get("template_id")),
        "short_url": short_url,
        "tracking_id": TRACKING_ID,
        "devices": devices,
    }


def preview_text(card: PreviewCard, destination: str) -> str:
    """The preview page's card in one line: what each field shows and where it links."""
    shown = [f"title {card.title!r}"]
    if card.description:
        shown.append(f"description {card.description!r}")
    if card.image_url:
        shown.append(f"image {card.image_url}")
    shown.append(f"site {card.site_name!r}")
    return ", ".join(shown) + f"; links to {destination}"


async def _variant_of(conn: Conn, row: StoredLink, link: dict[str, Any], user_agent: str, click: ClickAt
                      ) -> tuple[str, dict[str, Any], Step]:
    """The variant of the link's A/B split a click without the link's cookie gets (the resolver's stable hash
    of the link, the address and the user agent: :mod:`linksvc.links.variants`), the link as the decision then
    reads it, and the step that says so."""
    arms = row.link["variants"]
    name_of_cookie = variants.cookie_name(row.id)
    sent = variants.cookie_value(click.cookie or "", name_of_cookie)
    kept = variants.named(arms, sent)
    index = kept if kept is not None else variants.by_weight(
        arms, variants.stable_fraction(row.id, click.ip or "", user_agent))
    chosen = arms[index]
    name = str(chosen["name"])
    target = chosen.get("target") or None
    if target and target.get("link"):
        other = await link_by_code(conn, target["link"])
        target = other.link if other is not None and other.account_id == row.account_id else None
    total = sum(int(arm.get("weight") or 0) for arm in arms)
    share = f"{int(chosen['weight'])} of {total}"
    whose = f"the address {click.ip} and this user agent" if click.ip else "this user agent (no --ip)"
    leads = "its own target" if target else "the link's own target"
    control = ", the control" if index == 0 else ""
    if kept is not None:
        text = (f"the cookie {name_of_cookie} keeps this visitor on variant {name!r} (weight {share}{control}), "
                f"{leads}")
    else:
        ignored = "" if sent is None else (f"the cookie {name_of_cookie} names {unquote(sent)!r}, which the split no "
                                           "longer has or weighs 0, so it is ignored; ")
        text = (f"{ignored}the A/B split sends {whose} to variant {name!r} (weight {share}{control}), "
                f"{leads}; a visitor whose cookie {name_of_cookie} names another variant gets that one")
    return name, dict(variants.with_target(link, target)), {"step": "variant", "text": text}


def _password_cookie(link: Mapping[str, Any], link_id: str, code: str, cookie: str | None, now: float
                     ) -> tuple[bool, str]:
    """Whether the click's ``Cookie`` header holds a valid password cookie of the protected link, and the step's
    words (without a header given, the link's password page explained in general)."""
    if cookie is None:
        return False, PASSWORD_TEXT
    name = passwords.cookie_name(code)
    value = variants.cookie_value(cookie, name)
    if value is None:
        return False, (f"the link is password-protected and the cookie has no {name}: 200 and the page asking for "
                       "the password (nothing of the target)")
    if not passwords.cookie_admits(value, link["password"], link_id, now):
        return False, (f"the link is password-protected and its cookie {name} is not valid (lapsed, or given for "
                       "another password): 200 and the page asking for the password (nothing of the target)")
    until = datetime.fromtimestamp(int(value.split(".", 1)[0]), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return True, (f"the link is password-protected and the cookie {name} (valid until {until}) says the right "
                  "password was given: answered as below, the click recorded")


async def _rules_of(conn: Conn, row: StoredLink) -> Rules | None:
    """The link's rules compiled as a worker holds them, the links they lead to read from ``conn``."""
    rules = row.link.get("rules")
    if not rules:
        return None
    codes = target_codes(rules)
    others = await links_at_codes(conn, codes) if codes else {}
    return compile_rules(rules, {code: target_fields(other.link) for code, other in others.items()
                                 if other.account_id == row.account_id})


ROUTE_WORDS = ("--country", "give --country or --ip")
PREVIEW_WORDS = ("the visitor's country", "no country or address given")
"""How :func:`_rule_steps` names where the client's country came from and what to give when none was."""


def _rule_steps(rules: Rules | None, facts: Facts, click: ClickAt, words: tuple[str, str] = ROUTE_WORDS
                ) -> tuple[CompiledRule | None, list[Step]]:
    """The rule that matched (None: none did) and a step per rule tried, with why it did or did not hold."""
    if rules is None:
        return None, []
    if click.country is not None:
        where = f"{facts.where().country} ({words[0]})"
    elif click.ip is not None:
        place = facts.where()
        where = (f"{place.country or 'unknown'}" + (f", {place.region}" if place.region else "")
                 + (f", {place.city}" if place.city else "") + f" (the address {click.ip})")
    else:
        where = f"unknown ({words[1]})"
    steps: list[Step] = [{"step": "client", "text": f"the client is in {where}"}]
    matched = None
    for verdict in explain_rules(rules, facts):
        steps.append({"step": "rule", "name": verdict.name, "matched": verdict.matched, "condition": verdict.failed,
                      "text": f"{verdict.name!r} {verdict.why}"})
        if verdict.matched:
            matched = next(rule for rule in rules.rules if rule.name == verdict.name)
    if matched is None:
        steps.append({"step": "rules", "text": f"none of the {len(rules.rules)} rules matched: the link's own target"})
    else:
        via = f" (the link {matched.link!r})" if matched.link else ""
        steps.append({"step": "rules", "text": f"rule {matched.name!r} picks the target{via}"})
    return matched, steps


async def route_of_code(conn: Conn, code: str, user_agent: str, query: Mapping[str, str], accepts_json: bool,
                        public_url: str, service_label: str, now: float, click: ClickAt | None = None,
                        geo: Geo | None = None) -> dict[str, Any] | None:
    """What ``GET /{code}`` would answer this click (at ``now``) and why: which of the link's rules matched,
    and for each rule before it which condition did not hold; None for an unknown code. The tracking id a
    click would get is :data:`TRACKING_ID` here."""
    click = click or ClickAt()
    row = await link_by_code(conn, code)
    if row is None:
        return None
    link = {key: value for key, value in row.link.items() if key != "rules"}
    device = classify(user_agent)
    facts = Facts(device, user_agent, query, now, click.language, click.referer, click.ip, "", (), geo or Geo())
    if click.country is not None:
        facts.place = Place(click.country.upper())
    matched, rule_steps = _rule_steps(await _rules_of(conn, row), facts, click)
    variant: str | None = None
    if matched is not None:
        link = with_target(link, matched)
    elif row.link.get("variants"):
        variant, link, variant_step = await _variant_of(conn, row, link, user_agent, click)
        rule_steps.append(variant_step)
    answer: dict[str, Any] = {"code": code, "link_id": row.id, "account_id": row.account_id}
    state = unavailable(link, now, await human_clicks_of(conn, row.id) if link.get("max_clicks") else None)
    if state is not None:
        answer_name = {"disabled": "gone", "expired": "expired", "not yet valid": "not_yet_valid",
                       "click limit reached": "click_limit_reached"}[state.reason]
        return {**answer, "status": state.status, "location": state.location, "answer": answer_name,
                "reason": state.reason, "body": None, "utm": {}, "tracking_id": None, "explanation": [
                    {"step": "device", "text": describe_device(device)},
                    {"step": "route", "text": explain_unavailable(state)}]}
    decision, steps = explain(link, device, query, accepts_json, f"{public_url}/{code}", TRACKING_ID, service_label)
    steps[1:1] = rule_steps
    answer["rule"] = None if matched is None else matched.name
    answer["variant"] = variant
    if protected(link):
        answer["password_protected"] = True
        admitted = _password_cookie(link, row.id, code, click.cookie, now)
        if device.bot or (click.cookie is not None and not admitted[0]):
            # as the resolver answers it: the page, nothing of the target, nothing recorded
            return {**answer, "rule": None, "variant": None, "status": 200, "location": None,
                    "answer": "password_page", "body": None, "utm": {}, "tracking_id": None,
                    "explanation": [{"step": "device", "text": describe_device(device)},
                                    {"step": "password", "text": admitted[1] if not device.bot else PASSWORD_TEXT}]}
        steps.insert(1, {"step": "password", "text": admitted[1]})
    if is_preview_fetcher(device) and decision.status == 302 and decision.location is not None:
        card = await card_on(conn, row.account_id, link)
        if card is None:
            route = next(step for step in steps if step["step"] == "route")
            route["text"] = ("a link-preview fetcher, and neither the link nor its account sets a preview: "
                             f"{route['text']}")
        else:  # as the resolver answers it: the page, no redirect
            route = next(step for step in steps if step["step"] == "route")
            route["text"] = ("a link-preview fetcher, and the link or its account sets a preview -> 200 and a "
                             "page of Open Graph and Twitter card tags that links to the destination (recorded "
                             "as a bot click answered preview)")
            steps.insert(steps.index(route) + 1, {
                "step": "preview", "title": card.title, "description": card.description, "image_url": card.image_url,
                "site_name": card.site_name, "links_to": decision.location,
                "text": preview_text(card, decision.location)})
            return {**answer, "status": 200, "location": None, "answer": "preview", "body": None,
                    "utm": decision.utm, "tracking_id": decision.tracking_id, "explanation": steps}
    return {**answer, "status": decision.status, "location": decision.location, "answer": decision.answer,
            "body": decision.body, "utm": decision.utm, "tracking_id": decision.tracking_id, "explanation": steps}
