"""Answers whose rows would grow with values an anonymous click chooses (issue 32, finding 5): the link's clicks
answer holds the ``limit`` most clicked groups of each such breakdown (utm_source, browser, OS, device) and sums
the rest in ``other``, whatever the number of distinct values; the groups bounded by the calendar or the
platforms stay whole. (The conversion report's cap: tests/http/test_conversion_report.py and the reconciliation.)"""

from __future__ import annotations

import json
import re
from typing import Any

from aiohttp.test_utils import TestClient

from tests.conftest import ADMIN, bearer, token_for
from tests.factories import A, ids
from tests.http.test_forwarding import settled

CODE = f"lnk{A[:4]}"
CLICKS = f"/api/admin/v1/accounts/{A}/links/{ids(A)['links']}/clicks"
ANDROID = "Mozilla/5.0 (Linux; Android 14; {model} Build/UP1A) AppleWebKit/537.36 (KHTML, like Gecko) " \
          "Chrome/120.0.0.0 Mobile Safari/537.36"


async def click(client: TestClient, source: str, model: str) -> None:
    response = await client.get(f"/{CODE}?utm_source={source}", allow_redirects=False,
                                headers={"User-Agent": ANDROID.format(model=model)})
    assert response.status == 302


async def clicks(client: TestClient, query: str = "") -> tuple[dict[str, Any], int]:
    response = await client.get(f"{CLICKS}{query}", headers=ADMIN)
    assert response.status == 200, await response.text()
    text = await response.text()
    return json.loads(text)["data"], len(text)


async def test_the_clicks_answer_shows_the_most_clicked_groups_and_sums_the_rest(seeded: TestClient) -> None:
    for n in range(40):
        for _ in range(1 + 2 * (n == 9)):  # "s09" is clicked three times: it comes first
            await click(seeded, f"s{n:02d}{'v' * 1000}", f"Model-{n:02d}")
    data, size = await clicks(seeded, "?limit=5")
    assert data["limit"] == 5 and (data["human"], data["bot"]) == (42, 0)
    sources = [row["utm_source"][:3] for row in data["by_utm_source"]]
    assert sources == ["s09", "s00", "s01", "s02", "s03"]
    assert data["by_utm_source"][0]["human"] == 3
    assert data["other"]["by_utm_source"] == {"groups": 35, "human": 35, "bot": 0}
    assert len(data["by_device"]) == 5 and data["other"]["by_device"]["groups"] == 35
    assert data["other"]["by_device"]["human"] == 42 - sum(row["human"] for row in data["by_device"])
    assert "by_browser" not in data["other"] and len(data["by_browser"]) == 1  # one browser: nothing left out
    assert len(data["by_day"]) == 1 and data["by_day"][0]["human"] == 42
    assert size < 5 * 1100 + 3000  # five 1,000-character values and the figures
    whole, whole_size = await clicks(seeded)
    assert whole["limit"] == 100 and whole["other"] == {} and len(whole["by_utm_source"]) == 40
    assert whole_size > 40 * 1000
    for bad in ("0", "1001", "many"):
        response = await seeded.get(f"{CLICKS}?limit={bad}", headers=ADMIN)
        assert response.status == 400
        body = await response.json()
        assert set(body) == {"error", "details"} and body["details"]["field"] == "limit"


# Lists and groupings a storefront client or any client grows (issue 32, "Every answer bounded") ----------------

STOREFRONT_EVENTS = "/api/storefront/v1/behavior/events"
ADMIN_API = f"/api/admin/v1/accounts/{A}"
CUSTOMER = ids(A)["customers"]


async def send_bulk(client: TestClient, events: list[dict[str, Any]]) -> list[str]:
    response = await client.post(f"{STOREFRONT_EVENTS}/bulk", json={"events": events},
                                 headers=bearer(await token_for(client, A)))
    body = await response.json()
    assert response.status == 200 and body["data"]["rejected"] == 0, body
    return [result["id"] for result in body["data"]["results"]]


async def meta_connection(client: TestClient) -> str:
    doc = {"destination": "meta", "enabled": True, "forward_events": True, "forward_purchases": True,
           "event_types": ["*"], "config": {"endpoint_url": "http://127.0.0.1:9/graph", "pixel_id": "1234",
                                            "access_token": "EAAB"}}
    response = await client.post(f"{ADMIN_API}/connections", json=doc, headers=ADMIN)
    assert response.status == 201, await response.text()
    return str((await response.json())["data"]["id"])


async def test_delivery_counts_show_the_most_frequent_reasons_and_sum_the_rest(service: TestClient) -> None:
    """Meta's skip reason names the event's own time: a storefront client sending events of many past times
    made the counts answer one row per time it chose."""
    connection = await meta_connection(service)
    issued = [f"2020-01-{1 + n // 3:02d}T10:00:0{n % 3}Z" for n in range(30)]
    issued += [issued[4]] * 2  # one time sent three times: its reason comes first
    event_ids = await send_bulk(service, [{"type": "page_view", "customer_id": CUSTOMER, "issued_at": at}
                                          for at in issued])
    for event_id in event_ids:
        [delivery] = await settled(service, event_id)
        assert delivery["state"] == "skipped", delivery
    url = f"{ADMIN_API}/connections/{connection}/deliveries/counts"
    response = await service.get(f"{url}?limit=5", headers=ADMIN)
    body = await response.json()
    assert response.status == 200, body
    counts = body["data"]
    assert counts["by_state"]["skipped"] == 32 and counts["limit"] == 5
    assert len(counts["skipped"]) == 5 and counts["skipped"][0]["deliveries"] == 3
    assert issued[4].replace("Z", "") in counts["skipped"][0]["reason"]
    assert counts["other"] == {"skipped": {"groups": 25, "deliveries": 25}}
    assert counts["filtered"] == []
    whole = (await (await service.get(url, headers=ADMIN)).json())["data"]
    assert whole["limit"] == 100 and whole["other"] == {} and len(whole["skipped"]) == 30
    for bad in ("0", "1001", "x"):
        response = await service.get(f"{url}?limit={bad}", headers=ADMIN)
        assert response.status == 400
        refused = await response.json()
        assert set(refused) == {"error", "details"} and refused["details"]["field"] == "limit"


async def test_the_customer_path_is_paged_and_counts_every_event(seeded: TestClient) -> None:
    event_ids = await send_bulk(seeded, [{"type": "page_view", "customer_id": CUSTOMER,
                                          "issued_at": f"2026-01-{n + 1:02d}T10:00:00Z"} for n in range(7)])
    newest_first = event_ids[::-1]
    url = f"{ADMIN_API}/customers/{CUSTOMER}/path"
    response = await seeded.get(f"{url}?limit=3&offset=3", headers=ADMIN)
    body = await response.json()
    assert response.status == 200, body
    assert (body["count"], body["limit"], body["offset"]) == (7, 3, 3)
    assert [step["event"]["id"] for step in body["data"]] == newest_first[3:6]
    last = await (await seeded.get(f"{url}?limit=3&offset=6", headers=ADMIN)).json()
    assert [step["event"]["id"] for step in last["data"]] == newest_first[6:] and last["count"] == 7
    for bad in ("-1", "1000000001", "x"):
        response = await seeded.get(f"{url}?offset={bad}", headers=ADMIN)
        assert response.status == 400
        assert (await response.json())["details"]["field"] == "offset"


async def test_metrics_label_only_the_methods_the_service_answers(client: TestClient) -> None:
    """The HTTP parser passes WebDAV's and other methods (any token without its C extension): each one was a
    label of its own on every route it was sent to."""
    for method in ("PROPFIND", "MKCOL", "PURGE", "SOURCE"):
        response = await client.request(method, "/api/admin/v1/accounts", headers=ADMIN)
        assert response.status == 405
        body = await response.json()
        assert set(body) == {"error", "details"}
    text = await (await client.get("/metrics")).text()
    methods = set(re.findall(r'linksvc_http_requests_total\{method="([^"]*)"', text))
    assert methods <= {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "OTHER"}, methods
    assert 'linksvc_http_requests_total{method="OTHER",route="unmatched",status="405"} 4.0' in text
