"""Clicks through the resolver with real user agents: the writer stores each click's browser, OS and
device, and the admin API's clicks answer breaks them down with bots apart."""

from __future__ import annotations

import time
from typing import Any

from aiohttp.test_utils import TestClient

from api.appkeys import CLICKS, DB
from linksvc.links.clicks import Click
from storage.db import fetch_all
from tests.conftest import ADMIN
from tests.factories import A, ids

CHROME_ANDROID = ("Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) "
                  "Chrome/120.0.6099.144 Mobile Safari/537.36")
IPHONE_SAFARI = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                 "Version/17.1 Mobile/15E148 Safari/604.1")
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
CODE = f"lnk{A[:4]}"


async def click(client: TestClient, user_agent: str) -> None:
    response = await client.get(f"/{CODE}", headers={"User-Agent": user_agent}, allow_redirects=False)
    assert response.status == 302


def counts(entries: list[dict[str, Any]], *names: str) -> dict[tuple[Any, ...], tuple[int, int]]:
    return {tuple(e[name] for name in names): (e["human"], e["bot"]) for e in entries}


async def test_the_clicks_answer_breaks_clicks_down_by_browser_os_and_device(seeded: TestClient) -> None:
    for user_agent in (CHROME_ANDROID, CHROME_ANDROID, IPHONE_SAFARI, GOOGLEBOT, "garbage"):
        await click(seeded, user_agent)
    response = await seeded.get(f"/api/admin/v1/accounts/{A}/links/{ids(A)['links']}/clicks", headers=ADMIN)
    assert response.status == 200
    data = (await response.json())["data"]
    assert (data["human"], data["bot"]) == (4, 1)
    assert counts(data["by_browser"], "browser", "major") == {
        ("Chrome Mobile", "120"): (2, 0), ("Mobile Safari", "17"): (1, 0), ("Googlebot", "2"): (0, 1),
        (None, None): (1, 0)}
    assert data["by_browser"][0]["browser"] == "Chrome Mobile"  # the most clicked first
    assert counts(data["by_os"], "os", "major") == {
        ("Android", "14"): (2, 0), ("iOS", "17"): (1, 0), (None, None): (1, 1)}
    assert counts(data["by_device"], "brand", "model") == {
        ("Samsung", "SM-S918B"): (2, 0), ("Apple", "iPhone"): (1, 0), ("Spider", "Desktop"): (0, 1),
        (None, None): (1, 0)}
    rows = await fetch_all(seeded.app[DB].reader, "SELECT browser_version, os_version FROM clicks ORDER BY id")
    assert (rows[0]["browser_version"], rows[0]["os_version"]) == ("120.0.6099", "14")


INSTAGRAM = ("Mozilla/5.0 (Linux; Android 13; SM-S901B Build/TP1A.220624.014; wv) AppleWebKit/537.36 (KHTML, like "
             "Gecko) Version/4.0 Chrome/118.0.0.0 Mobile Safari/537.36 Instagram {} Android")
APPLEBOT = ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 "
            "Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)")


async def test_browsers_and_oses_by_family_whatever_the_version_and_the_bots_by_name_alone(seeded: TestClient) -> None:
    for user_agent in (INSTAGRAM.format("330.0.0.40.92"), INSTAGRAM.format("334.0.0.42.95"),
                       INSTAGRAM.format("334.0.0.42.95"), IPHONE_SAFARI, APPLEBOT, APPLEBOT, GOOGLEBOT):
        await click(seeded, user_agent)
    response = await seeded.get(f"/api/admin/v1/accounts/{A}/links/{ids(A)['links']}/clicks", headers=ADMIN)
    data = (await response.json())["data"]
    assert counts(data["by_browser"], "browser", "major")[("Instagram", "334")] == (2, 0)
    assert counts(data["by_browser_family"], "browser") == {
        ("Instagram",): (3, 0), ("Mobile Safari",): (1, 0), ("Applebot",): (0, 2), ("Googlebot",): (0, 1)}
    assert data["by_browser_family"][0]["browser"] == "Instagram"
    assert counts(data["by_os_family"], "os") == {("Android",): (3, 0), ("iOS",): (1, 0), ("Mac OS X",): (0, 2),
                                                  (None,): (0, 1)}
    assert data["by_bot"] == [{"name": "Applebot", "human": 0, "bot": 2}, {"name": "Googlebot", "human": 0, "bot": 1}]

    response = await seeded.get(f"/api/admin/v1/accounts/{A}/links/{ids(A)['links']}/clicks?limit=1", headers=ADMIN)
    data = (await response.json())["data"]
    assert data["by_bot"] == [{"name": "Applebot", "human": 0, "bot": 2}]
    assert data["other"]["by_bot"] == {"groups": 1, "human": 0, "bot": 1}
    assert data["other"]["by_browser_family"] == {"groups": 3, "human": 1, "bot": 3}


async def test_a_poison_click_is_set_aside_and_the_others_of_its_batch_keep_their_details(seeded: TestClient) -> None:
    recorder = seeded.app[CLICKS]
    link = ids(A)["links"]
    for n, (agent, utm) in enumerate([(IPHONE_SAFARI, {}), (CHROME_ANDROID, {"utm_source": object()}),
                                      (CHROME_ANDROID, {})]):
        recorder.record(Click(A, link, f"t{n}", time.time(), "ios", False, "web", agent, "", utm))
    await recorder.flush()
    rows = await fetch_all(seeded.app[DB].reader, "SELECT tracking_id, browser_family, device_model FROM clicks "
                                                  "ORDER BY id")
    assert [tuple(row) for row in rows] == [("t0", "Mobile Safari", "iPhone"), ("t2", "Chrome Mobile", "SM-S918B")]
    letters = await (await seeded.get(f"/api/admin/v1/accounts/{A}/dead-letters", headers=ADMIN)).json()
    assert [letter["payload"]["tracking_id"] for letter in letters["data"]] == ["t1"]


async def test_a_click_whose_user_agent_is_not_text_fails_alone(seeded: TestClient) -> None:
    """A click read back from a spill file holds whatever JSON held: its parse does not fail the batch."""
    recorder = seeded.app[CLICKS]
    recorder.record(Click(A, ids(A)["links"], "t", time.time(), "desktop", False, "web", None, "", {}))  # type: ignore[arg-type]
    recorder.record(Click(A, ids(A)["links"], "u", time.time(), "ios", False, "web", IPHONE_SAFARI, "", {}))
    await recorder.flush()
    rows = await fetch_all(seeded.app[DB].reader, "SELECT tracking_id, os_family FROM clicks ORDER BY id")
    assert [tuple(row) for row in rows] == [("u", "iOS")]
    letters = await (await seeded.get(f"/api/admin/v1/accounts/{A}/dead-letters", headers=ADMIN)).json()
    assert [letter["payload"]["tracking_id"] for letter in letters["data"]] == ["t"]
