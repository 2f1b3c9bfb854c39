"""A link's lifecycle and its password (issue 34), over HTTP on the store of the run: valid_since with and
without pending_url, expires_at with and without expired_url, max_clicks (people, not bots), what the admin
API accepts and refuses, and the password flow (page, wrong, throttled, right, cookie, bot, removed)."""

from __future__ import annotations

import io
import logging
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.access_log import AccessLogger
from api.appkeys import CLICKS, DB
from linksvc.app import create_app
from linksvc.errors import InvalidField
from linksvc.links.urls import query_values
from linksvc.seed import load_seed
from linksvc.settings import Settings
from storage.db import fetch_all, fetch_one
from tests.conftest import ADMIN, service_server
from tests.factories import A, B, two_accounts
from tests.http import test_access_log
from tests.http.test_access_log import access_lines
from tests.http.test_fast_lane import _get as fast_get
from tests.http.test_fast_lane import converse, lane
from tests.http.test_resolver import DESKTOP, GOOGLEBOT

LINKS = f"/api/admin/v1/accounts/{A}/links"
log_text = test_access_log.log_text  # the fixture: the service's log lines, in a buffer
DESTINATION = "https://shop.example/spring?x=1"
SLACKBOT = "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"
SECRET = "correct horse battery staple"


def at(days: float) -> str:
    return (datetime.now(UTC) + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


async def make(client: TestClient, **fields: Any) -> dict[str, Any]:
    response = await client.post(LINKS, json={"kind": "external", "destination_url": DESTINATION, **fields},
                                 headers=ADMIN)
    assert response.status == 201, await response.text()
    return dict((await response.json())["data"])


async def click(client: TestClient, path: str, ua: str = DESKTOP, method: str = "GET", **kwargs: Any) -> Any:
    return await client.request(method, path, headers={"User-Agent": ua, **kwargs.pop("headers", {})},
                                allow_redirects=False, **kwargs)


async def stored_clicks(client: TestClient, link_id: str) -> list[tuple[Any, ...]]:
    await client.app[CLICKS].flush()
    return [tuple(row) for row in await fetch_all(
        client.app[DB].reader, "SELECT bot, answer FROM clicks WHERE link_id = ? ORDER BY id", (link_id,))]


# --- lifecycle ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("fields", "status", "location"), [
    ({"valid_since": at(1)}, 404, None),
    ({"valid_since": at(1), "pending_url": "https://shop.example/soon"}, 302, "https://shop.example/soon"),
    ({"valid_since": at(-1)}, 302, DESTINATION),
    ({"expires_at": at(-1)}, 410, None),
    ({"expires_at": at(-1), "expired_url": "https://shop.example/over"}, 302, "https://shop.example/over"),
    ({"expires_at": at(1), "expired_url": "https://shop.example/over"}, 302, DESTINATION),
    ({"valid_since": at(-2), "expires_at": at(-1), "expired_url": "https://shop.example/over"}, 302,
     "https://shop.example/over"),
])
async def test_the_lifecycle_answers(seeded: TestClient, fields: dict[str, Any], status: int,
                                     location: str | None) -> None:
    link = await make(seeded, **fields)
    for ua in (DESKTOP, GOOGLEBOT):
        response = await click(seeded, f"/{link['code']}", ua)
        assert response.status == status
        if location == DESTINATION:  # the link's own answer: tagged, its click recorded
            assert response.headers["Location"].startswith(DESTINATION + "&tracking_id=")
        else:
            assert response.headers.get("Location") == location
            assert response.headers["Cache-Control"] == "no-store"
    if status == 404:
        page = await (await click(seeded, f"/{link['code']}")).text()
        opens = datetime.strptime(fields["valid_since"], "%Y-%m-%dT%H:%M:%SZ").strftime("%Y-%m-%d %H:%M UTC")
        assert "not available yet" in page and opens in page
    recorded = await stored_clicks(seeded, link["id"])
    assert len(recorded) == (2 if location == DESTINATION else 0)  # no click for a link that is not open


async def test_max_clicks_counts_people_not_bots_then_leads_to_expired_url(seeded: TestClient) -> None:
    link = await make(seeded, max_clicks=2, expired_url="https://shop.example/sold-out")
    path = f"/{link['code']}"
    for ua in (DESKTOP, GOOGLEBOT, GOOGLEBOT, DESKTOP):
        response = await click(seeded, path, ua)
        assert response.headers["Location"].startswith(DESTINATION)
    for ua in (DESKTOP, GOOGLEBOT):
        response = await click(seeded, path, ua)
        assert response.status == 302 and response.headers["Location"] == "https://shop.example/sold-out"
    assert await stored_clicks(seeded, link["id"]) == [(0, "destination"), (1, "destination"), (1, "destination"),
                                                       (0, "destination")]
    row = await fetch_one(seeded.app[DB].reader, "SELECT sum(clicks) FROM link_human_clicks WHERE link_id = ?",
                          (link["id"],))
    assert row is not None and int(row[0]) == 2
    # Raising the limit opens the link again: the count is kept, not the verdict.
    await seeded.patch(f"{LINKS}/{link['id']}", json={"max_clicks": 3}, headers=ADMIN)
    assert (await click(seeded, path)).headers["Location"].startswith(DESTINATION)
    assert (await click(seeded, path)).headers["Location"] == "https://shop.example/sold-out"


async def test_max_clicks_without_expired_url_is_410_and_counts_stored_clicks(seeded: TestClient,
                                                                              aiohttp_client: Any,
                                                                              settings: Settings) -> None:
    link = await make(seeded, max_clicks=1)
    path = f"/{link['code']}"
    assert (await click(seeded, path)).status == 302
    assert (await click(seeded, path)).status == 410
    await seeded.app[CLICKS].flush()
    # Another worker on the same store, which never took a click: it reads the stored count once.
    other = await aiohttp_client(service_server(create_app(settings)))
    assert (await click(other, path)).status == 410


async def test_a_limit_set_on_a_link_with_clicks_counts_them(seeded: TestClient) -> None:
    link = await make(seeded)
    path = f"/{link['code']}"
    for _ in range(2):
        assert (await click(seeded, path)).status == 302
    await seeded.app[CLICKS].flush()
    await seeded.patch(f"{LINKS}/{link['id']}", json={"max_clicks": 2}, headers=ADMIN)
    assert (await click(seeded, path)).status == 410


@pytest.mark.parametrize(("fields", "path", "rule"), [
    ({"max_clicks": 0}, "max_clicks", "range"),
    ({"max_clicks": "many"}, "max_clicks", None),
    ({"valid_since": "tomorrow"}, "valid_since", None),
    ({"valid_since": "2030-01-02T00:00:00Z", "expires_at": "2030-01-01T00:00:00Z"}, "expires_at", "invalid"),
    ({"pending_url": "https://shop.example/soon"}, "pending_url", "requires"),
    ({"expired_url": "https://shop.example/over"}, "expired_url", "requires"),
    ({"expires_at": at(1), "expired_url": "javascript:alert(1)"}, "expired_url", None),
    ({"password": ""}, "password", None),
    ({"password": "x" * 129}, "password", None),
])
async def test_invalid_lifecycle_fields_are_named(seeded: TestClient, fields: dict[str, Any], path: str,
                                                  rule: str | None) -> None:
    response = await seeded.post(LINKS, json={"kind": "external", "destination_url": DESTINATION, **fields},
                                 headers=ADMIN)
    assert response.status == 400
    body = await response.json()
    assert set(body) == {"error", "details"}
    issues = body["details"]["issues"]
    assert path in [issue["path"] for issue in issues], body
    if rule is not None:
        assert rule in [issue["type"] for issue in issues if issue["path"] == path], body
    if "password" in fields:
        assert fields["password"][:20] not in str(body) or not fields["password"]


async def test_seed_files_take_the_same_fields(client: TestClient) -> None:
    doc = two_accounts()
    doc["accounts"][0]["links"].append({
        "id": "aaaaaaaa-0008-4000-8000-0000000000a1", "code": "seed-life", "kind": "external",
        "destination_url": DESTINATION, "valid_since": at(3), "pending_url": "https://shop.example/soon",
        "password": SECRET})
    await load_seed(client.app[DB], doc, allow_private=True)
    response = await click(client, "/seed-life")
    assert response.headers["Location"] == "https://shop.example/soon"
    stored = await fetch_one(client.app[DB].reader, "SELECT body FROM links WHERE code = 'seed-life'")
    assert stored is not None and SECRET not in str(stored[0])
    before = str(stored[0])
    await load_seed(client.app[DB], doc, allow_private=True)  # loaded again: the same password keeps its hash
    again = await fetch_one(client.app[DB].reader, "SELECT body FROM links WHERE code = 'seed-life'")
    assert again is not None and str(again[0]) == before
    bad = two_accounts()
    bad["accounts"][0]["links"].append({"id": "aaaaaaaa-0008-4000-8000-0000000000a2", "kind": "external",
                                        "destination_url": DESTINATION, "max_clicks": -1})
    with pytest.raises(InvalidField) as refused:
        await load_seed(client.app[DB], bad, allow_private=True)
    assert "accounts[0].links[1].max_clicks" in str(refused.value.details)


async def test_route_command_says_why(seeded: TestClient) -> None:
    from linksvc.links.overview import route_of_code
    cases = [({"valid_since": at(1)}, "not yet valid"), ({"expires_at": at(-1)}, "expired"),
             ({"max_clicks": 1}, "click limit reached")]
    for fields, reason in cases:
        link = await make(seeded, **fields)
        if "max_clicks" in fields:
            await click(seeded, f"/{link['code']}")
            await seeded.app[CLICKS].flush()
        answer = await route_of_code(seeded.app[DB].reader, link["code"], DESKTOP, {}, False,
                                     "http://127.0.0.1:8080", "linksvc", datetime.now(UTC).timestamp())
        assert answer is not None and answer["reason"] == reason
        assert reason in answer["explanation"][1]["text"]


# --- passwords ---------------------------------------------------------------------------------------------------

async def test_a_protected_link_asks_then_answers_as_the_link_with_a_cookie(seeded: TestClient) -> None:
    link = await make(seeded, password=SECRET, fallback_url="https://shop.example/fallback")
    assert link["password_protected"] is True and "password" not in link
    path = f"/{link['code']}?utm_source=ig"
    page = await click(seeded, path)
    text = await page.text()
    assert page.status == 200 and "Location" not in page.headers
    assert "shop.example" not in text and 'lang=en' in text and "<label for=password>" in text
    assert "<form method=post>" in text and "<script" not in text
    wrong = await click(seeded, path, method="POST", data={"password": "wrong"})
    assert wrong.status == 401 and "not right" in await wrong.text() and "Location" not in wrong.headers
    right = await click(seeded, path, method="POST", data={"password": SECRET})
    assert right.status == 302
    location = right.headers["Location"]
    assert location.startswith(DESTINATION) and query_values(location)["utm_source"] == "ig"
    assert query_values(location)["tracking_id"]
    cookie = right.cookies[f"linksvc_pw_{link['code']}"]
    assert cookie["httponly"] and cookie["path"] == f"/{link['code']}" and int(cookie["max-age"]) == 43200
    # The same browser (its cookie jar) is not asked again.
    again = await click(seeded, path)
    assert again.status == 302 and again.headers["Location"].startswith(DESTINATION)
    assert await stored_clicks(seeded, link["id"]) == [(0, "destination"), (0, "destination")]


async def test_a_forged_or_old_cookie_is_not_taken(seeded: TestClient) -> None:
    link = await make(seeded, password=SECRET)
    path = f"/{link['code']}"
    await click(seeded, path, method="POST", data={"password": SECRET})
    name = f"linksvc_pw_{link['code']}"
    value = seeded.session.cookie_jar.filter_cookies(seeded.make_url(path))[name].value
    seeded.session.cookie_jar.clear()
    until, signature = value.split(".")
    forged = f"{int(until) + 999}.{signature}"
    assert (await click(seeded, path, headers={"Cookie": f"{name}={forged}"})).status == 200
    # A new password voids the cookies given for the old one.
    await seeded.patch(f"{LINKS}/{link['id']}", json={"password": "another one"}, headers=ADMIN)
    assert (await click(seeded, path, headers={"Cookie": f"{name}={value}"})).status == 200


@pytest.mark.parametrize("ua", [GOOGLEBOT, SLACKBOT])
async def test_bots_and_preview_fetchers_get_nothing_of_the_target(seeded: TestClient, ua: str) -> None:
    await seeded.put(f"/api/admin/v1/accounts/{A}/link-previews", json={"title": "Shop"}, headers=ADMIN)
    link = await make(seeded, password=SECRET, preview={"title": "Spring sale", "description": "All of it"})
    path = f"/{link['code']}"
    for method, data in (("GET", None), ("POST", {"password": SECRET})):
        response = await click(seeded, path, ua, method=method, data=data)
        text = await response.text()
        assert response.status == 200 and "Location" not in response.headers
        assert "shop.example" not in text and "Spring sale" not in text and "og:" not in text
        assert f"linksvc_pw_{link['code']}" not in response.cookies
    assert await stored_clicks(seeded, link["id"]) == []


async def test_wrong_guesses_are_throttled_per_link_and_client(aiohttp_client: Any, settings: Settings) -> None:
    client = await aiohttp_client(service_server(create_app(replace(settings, auth_failure_limit=3))))
    await load_seed(client.app[DB], two_accounts(), allow_private=True)
    link = await make(client, password=SECRET)
    other = await make(client, password=SECRET)
    path = f"/{link['code']}"
    for _ in range(3):
        assert (await click(client, path, method="POST", data={"password": "guess"})).status == 401
    refused = await click(client, path, method="POST", data={"password": SECRET})
    assert refused.status == 429 and int(refused.headers["Retry-After"]) >= 1
    assert "Location" not in refused.headers and "Too many" in await refused.text()
    # Another link of the same client is not throttled by these guesses.
    assert (await click(client, f"/{other['code']}", method="POST", data={"password": SECRET})).status == 302


async def test_removing_the_password_makes_the_link_public(seeded: TestClient) -> None:
    link = await make(seeded, password=SECRET)
    path = f"/{link['code']}"
    assert (await click(seeded, path)).status == 200
    # A PUT of what a read shows (without the password) keeps it.
    read = (await (await seeded.get(f"{LINKS}/{link['id']}", headers=ADMIN)).json())["data"]
    whole = {k: v for k, v in read.items() if k not in ("created_at", "updated_at")}
    put = await seeded.put(f"{LINKS}/{link['id']}", json=whole, headers=ADMIN)
    assert put.status == 200, await put.text()
    assert (await put.json())["data"]["password_protected"] is True
    assert (await click(seeded, path)).status == 200
    patched = await seeded.patch(f"{LINKS}/{link['id']}", json={"password": None}, headers=ADMIN)
    assert (await patched.json())["data"]["password_protected"] is False
    response = await click(seeded, path)
    assert response.status == 302 and response.headers["Location"].startswith(DESTINATION)
    # POST to a public link sends the browser back to GET.
    assert (await click(seeded, path, method="POST", data={"password": "x"})).status == 303


async def test_a_link_of_another_account_is_not_unlocked_on_its_domain(seeded: TestClient) -> None:
    doc = two_accounts()
    doc["accounts"][1]["links"].append({"id": "bbbbbbbb-0008-4000-8000-0000000000b1", "code": "b-secret",
                                        "kind": "external", "destination_url": DESTINATION, "password": SECRET})
    await load_seed(seeded.app[DB], doc, allow_private=True)
    response = await click(seeded, "/b-secret", method="POST", data={"password": SECRET})
    assert response.status == 302  # shared host: every account's links
    assert B  # the account exists; its password works only for its own link


async def test_the_password_is_never_shown_logged_or_stored_in_clear(
        aiohttp_client: Any, settings: Settings, log_text: io.StringIO) -> None:
    server = service_server(create_app(settings))
    await server.start_server(access_log_class=AccessLogger, access_log=logging.getLogger("linksvc.access"))
    client = await aiohttp_client(server)
    await load_seed(client.app[DB], two_accounts(), allow_private=True)
    link = await make(client, password=SECRET)
    listed = await (await client.get(LINKS, headers=ADMIN)).text()
    one = await (await client.get(f"{LINKS}/{link['id']}", headers=ADMIN)).text()
    path = f"/{link['code']}"
    await click(client, path, method="POST", data={"password": SECRET + "?"})
    await click(client, path, method="POST", data={"password": SECRET})
    await client.patch(f"{LINKS}/{link['id']}", json={"password": SECRET, "max_clicks": 0}, headers=ADMIN)
    refused = await (await client.patch(f"{LINKS}/{link['id']}", json={"password": SECRET, "max_clicks": 0},
                                        headers=ADMIN)).text()
    stored = await fetch_one(client.app[DB].reader, "SELECT body FROM links WHERE id = ?", (link["id"],))
    assert stored is not None
    body = stored[0] if isinstance(stored[0], str) else bytes(stored[0]).decode()
    assert '"password":"$argon2id$' in body.replace(" ", "")
    lines = access_lines(log_text)
    assert any(line["method"] == "POST" and line["path"] == path for line in lines)
    for text in (listed, one, refused, body, log_text.getvalue()):
        assert SECRET not in text
    assert "argon2" not in listed + one + refused


async def test_the_fast_lane_counts_limited_links_and_leaves_protected_ones_to_the_handler(
        seeded: TestClient) -> None:
    limited = await make(seeded, max_clicks=3, expired_url="https://shop.example/sold-out")
    locked = await make(seeded, password=SECRET)
    before = lane(seeded).answered
    sends = [fast_get(f"/{limited['code']}", DESKTOP) for _ in range(4)]
    replies = await converse(seeded, sends)
    # The first click of the connection and of the link takes the handler (which reads the count once); the next
    # two take the lane, which counts them; the fourth is over the limit: the handler answers expired_url.
    assert lane(seeded).answered - before == 2
    assert [reply.headers["location"].startswith(DESTINATION) for reply in replies] == [True, True, True, False]
    assert replies[3].headers["location"] == "https://shop.example/sold-out"
    before = lane(seeded).answered
    replies = await converse(seeded, [fast_get(f"/{locked['code']}", DESKTOP) for _ in range(3)])
    assert lane(seeded).answered == before and [reply.status for reply in replies] == [200] * 3
    assert all("location" not in reply.headers for reply in replies)


async def test_the_lifecycle_endpoint_says_where_a_link_stands(seeded: TestClient) -> None:
    """``GET .../links/{id}/lifecycle``: open or why not, the clicks by people so far (bots not counted, clicks
    still buffered included) and how many the limit leaves; another account's link is 404."""
    link = await make(seeded, max_clicks=2, expired_url="https://shop.example/sold-out", password=SECRET)
    state = await (await seeded.get(f"{LINKS}/{link['id']}/lifecycle", headers=ADMIN)).json()
    assert state["data"] == {"link_id": link["id"], "open": True, "reason": None, "text": "open", "status": None,
                             "location": None, "human_clicks": 0, "max_clicks": 2, "clicks_left": 2,
                             "password_protected": True}
    await seeded.patch(f"{LINKS}/{link['id']}", json={"password": None}, headers=ADMIN)
    for ua in (DESKTOP, GOOGLEBOT, DESKTOP):
        await click(seeded, f"/{link['code']}", ua)
    state = (await (await seeded.get(f"{LINKS}/{link['id']}/lifecycle", headers=ADMIN)).json())["data"]
    assert (state["open"], state["reason"], state["status"], state["location"]) == (
        False, "click limit reached", 302, "https://shop.example/sold-out")
    assert (state["human_clicks"], state["clicks_left"], state["password_protected"]) == (2, 0, False)
    other = await seeded.get(f"/api/admin/v1/accounts/{B}/links/{link['id']}/lifecycle", headers=ADMIN)
    assert other.status == 404 and set(await other.json()) == {"error", "details"}
