"""``python -m linksvc route CODE``: what the resolver would answer a click and why, against a seeded database."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.factories import A, two_accounts
from tests.processes import ServiceStore, service_store, sqlite_only

CHROME_ANDROID = ("Mozilla/5.0 (Linux; Android 13; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/116.0.0.0 "
                  "Mobile Safari/537.36")
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
WHATSAPP = "WhatsApp/2.23.20.0"
FACEBOOK = "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"
RULES = [
    {"name": "japan", "conditions": {"countries": ["JP"]}, "target": {"destination_url": "https://shop.example/jp"}},
    {"name": "tokyo-evening", "conditions": {"time": {"timezone": "Asia/Tokyo", "from": "18:00", "to": "23:00"}},
     "target": {"destination_url": "https://shop.example/evening"}},
    {"name": "portuguese", "conditions": {"languages": ["pt"], "platforms": ["android"]},
     "target": {"link": "appaaaa"}},
]


def linksvc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "linksvc", *args], capture_output=True, text=True, timeout=60,
                          check=False)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory, store_choice: str | None) -> Iterator[list[str]]:
    """The store's command-line arguments, seeded with :func:`tests.factories.two_accounts` and three links
    more (an app link, a disabled one, an expired one)."""
    folder = tmp_path_factory.mktemp("route")
    with service_store(folder, store_choice) as store:
        _seed(folder, store)
        yield store.args()


def _seed(folder: Path, store: ServiceStore) -> None:
    seed = two_accounts()
    account = next(a for a in seed["accounts"] if a["id"] == A)
    base: dict[str, Any] = account["links"][0]
    account["links"] += [
        {**base, "id": "aaaaaaaa-0108-4000-8000-000000000108", "code": "appaaaa", "deeplink": "democoffee://menu",
         "android": {"package": "com.democoffee.app", "fallback_url": "https://shop.example/android"}},
        {**base, "id": "aaaaaaaa-0109-4000-8000-000000000109", "code": "offaaaa", "disabled": True},
        {**base, "id": "aaaaaaaa-0110-4000-8000-000000000110", "code": "oldaaaa",
         "expires_at": "2020-01-01T00:00:00Z"},
        {**base, "id": "aaaaaaaa-0111-4000-8000-000000000111", "code": "cardaaa",
         "preview": {"title": "Black Friday", "image_url": "https://shop.example/og.png"}},
        {**base, "id": "aaaaaaaa-0112-4000-8000-000000000112", "code": "ruleaaa", "rules": RULES},
    ]
    (folder / "seed.json").write_text(json.dumps(seed))
    loaded = linksvc("seed", str(folder / "seed.json"), *store.args())
    assert loaded.returncode == 0, loaded.stderr


def test_android_chrome_gets_an_intent_url_and_the_reasons(db: list[str]) -> None:
    run = linksvc("route", "appaaaa", "--user-agent", CHROME_ANDROID, "--query", "utm_source=newsletter", *db)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "302 Found"
    assert lines[1].startswith("Location: intent://menu?utm_source=newsletter&utm_medium=email&tracking_id=")
    assert ";package=com.democoffee.app;" in lines[1]
    assert "why: Android, chrome (honours intent URLs), not a bot, not in an app" in lines
    assert ("route: link has android.package and the browser honours intent URLs -> intent URL; "
            "fallback: android.fallback_url") in lines
    assert "utm_source=newsletter (from the click's query)" in lines
    assert "utm_medium=email (from the defaults of this kind of link)" in lines
    assert "tracking_id: new (none in the query)" in lines


def test_a_bot_gets_the_destination(db: list[str]) -> None:
    run = linksvc("route", "appaaaa", "--user-agent", GOOGLEBOT, "--query", "tracking_id=t-1", *db)
    lines = run.stdout.splitlines()
    assert lines[:2] == ["302 Found", "Location: https://shop.example/p?x=1&utm_source=linksvc&utm_medium=email"
                                      "&tracking_id=t-1#top"]
    assert "route: bots always get the destination (recorded as a bot click)" in lines
    assert "tracking_id: kept from the query" in lines


@pytest.mark.parametrize("agent", [WHATSAPP, FACEBOOK])
def test_a_preview_fetcher_gets_the_links_card(db: list[str], agent: str) -> None:
    run = linksvc("route", "cardaaa", "--user-agent", agent, *db)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "200 OK" and not any(line.startswith("Location:") for line in lines)
    assert ("route: a link-preview fetcher, and the link or its account sets a preview -> 200 and a page of Open "
            "Graph and Twitter card tags that links to the destination (recorded as a bot click answered preview)"
            ) in lines
    assert ("preview: title 'Black Friday', image https://shop.example/og.png, site 'shop.example'; links to "
            "https://shop.example/p?x=1&utm_source=linksvc&utm_medium=email&tracking_id=TRACKING_ID#top") in lines
    answer = json.loads(linksvc("route", "cardaaa", "--user-agent", agent, "--json", *db).stdout)
    assert (answer["status"], answer["answer"], answer["location"]) == (200, "preview", None)
    card = next(step for step in answer["explanation"] if step["step"] == "preview")
    assert (card["title"], card["description"], card["image_url"]) == ("Black Friday", None,
                                                                      "https://shop.example/og.png")


def test_a_preview_fetcher_follows_the_redirect_when_nothing_is_set(db: list[str]) -> None:
    lines = linksvc("route", "appaaaa", "--user-agent", WHATSAPP, *db).stdout.splitlines()
    assert lines[0] == "302 Found" and lines[1].startswith("Location: https://shop.example/p?x=1")
    assert ("route: a link-preview fetcher, and neither the link nor its account sets a preview: bots always get "
            "the destination (recorded as a bot click)") in lines
    lines = linksvc("route", "cardaaa", "--user-agent", GOOGLEBOT, *db).stdout.splitlines()  # a search crawler
    assert lines[0] == "302 Found" and "route: bots always get the destination (recorded as a bot click)" in lines


def test_json_output(db: list[str]) -> None:
    run = linksvc("route", "appaaaa", "--user-agent", CHROME_ANDROID, "--json", *db)
    answer = json.loads(run.stdout)
    assert answer["status"] == 302 and answer["answer"] == "intent"
    assert answer["location"].startswith("intent://menu?")
    steps = {step["step"] for step in answer["explanation"]}
    assert steps == {"device", "route", "utm", "tracking_id"}
    source = next(s for s in answer["explanation"] if s.get("field") == "utm_source")
    assert (source["value"], source["from"]) == ("linksvc", "defaults")


@pytest.mark.parametrize(("code", "why"), [("offaaaa", "the link is disabled"),
                                           ("oldaaaa", "the link is expired at 2020-01-01")])
def test_disabled_and_expired_say_410_and_why(db: list[str], code: str, why: str) -> None:
    run = linksvc("route", code, "--user-agent", CHROME_ANDROID, *db)
    assert run.returncode == 0
    assert run.stdout.splitlines()[0] == "410 Gone"
    assert why in run.stdout


def test_an_unknown_code_exits_1(db: list[str]) -> None:
    run = linksvc("route", "nothere", *db)
    assert run.returncode == 1 and "no link has the code 'nothere'" in run.stderr and run.stdout == ""
    named = db[-1].rsplit("/", 1)[-1]  # the file, or the PostgreSQL database (its URL's credentials masked)
    assert f"{named} (the resolver answers 404)" in run.stderr


@sqlite_only("a database file that is not there is not created")
def test_no_database_file_exits_1(tmp_path: Path) -> None:
    missing = linksvc("route", "nothere", "--db", str(tmp_path / "none.db"))
    assert missing.returncode == 1 and "no database" in missing.stderr
    assert not (tmp_path / "none.db").exists()


def test_route_names_the_rule_that_matched(db: list[str]) -> None:
    run = linksvc("route", "ruleaaa", "--country", "jp", "--at", "2026-03-02T12:00:00+09:00", *db)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[:2] == ["302 Found", "Location: https://shop.example/jp?utm_source=linksvc&utm_medium=email"
                                      "&tracking_id=TRACKING_ID"]
    assert "client: the client is in JP (--country)" in lines
    assert "rule: 'japan' all conditions hold: countries JP: the client's is JP" in lines
    assert "rules: rule 'japan' picks the target" in lines


def test_route_says_why_each_rule_before_did_not_hold(db: list[str]) -> None:
    # 8.8.8.8 is in the US (iptocc's own tests); 12:00 in Tokyo is before the evening window
    run = linksvc("route", "ruleaaa", "--ip", "8.8.8.8", "--language", "pt-BR,pt;q=0.9,en;q=0.8",
                  "--user-agent", CHROME_ANDROID, "--at", "2026-03-02T12:00:00+09:00", *db)
    lines = run.stdout.splitlines()
    assert "client: the client is in US (the address 8.8.8.8)" in lines
    assert "rule: 'japan' does not hold: countries JP: the client's is US" in lines
    assert ("rule: 'tokyo-evening' does not hold: time mon,tue,wed,thu,fri,sat,sun 18:00-23:00 in Asia/Tokyo: "
            "it is Mon 12:00 there") in lines
    assert ("rule: 'portuguese' all conditions hold: platforms android: the platform is android; languages pt: of the "
            "link's languages, the client prefers pt-br, pt") in lines
    assert "rules: rule 'portuguese' picks the target (the link 'appaaaa')" in lines
    assert lines[1].startswith("Location: intent://menu?utm_source=linksvc&utm_medium=email&tracking_id=")
    answer = json.loads(linksvc("route", "ruleaaa", "--ip", "8.8.8.8", "--at", "2026-03-02T20:00:00+09:00",
                                "--json", *db).stdout)
    assert answer["rule"] == "tokyo-evening"
    assert [(s["name"], s["matched"], s["condition"]) for s in answer["explanation"] if s["step"] == "rule"] == [
        ("japan", False, "countries"), ("tokyo-evening", True, None)]


def test_route_without_a_matching_rule_keeps_the_links_own_target(db: list[str]) -> None:
    lines = linksvc("route", "ruleaaa", "--at", "2026-03-02T12:00:00+09:00", *db).stdout.splitlines()
    assert "client: the client is in unknown (give --country or --ip)" in lines
    assert "rules: none of the 3 rules matched: the link's own target" in lines
    assert lines[1].startswith("Location: https://shop.example/p?x=1&utm_source=linksvc")


@pytest.mark.parametrize(("option", "value"), [("--country", "France"), ("--ip", "1.2.3"), ("--at", "yesterday")])
def test_route_names_a_bad_option(db: list[str], option: str, value: str) -> None:
    run = linksvc("route", "ruleaaa", option, value, *db)
    assert run.returncode == 2 and run.stderr.startswith(f"error: {option} must be"), run.stderr
