"""Answers whose rows would grow with values an anonymous click chooses (issue 32, finding 5): the link's clicks
answer holds the ``limit`` most clicked groups of each such breakdown (utm_source, browser, OS, device) and sums
the rest in ``other``, whatever the number of distinct values; the groups bounded by the calendar or the
platforms stay whole. (The conversion report's cap: tests/http/test_conversion_report.py and the reconciliation.)"""

from __future__ import annotations

import json
from typing import Any

from aiohttp.test_utils import TestClient

from tests.conftest import ADMIN
from tests.factories import A, ids

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
