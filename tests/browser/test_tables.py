"""Tables that answer questions (issue 36), in Chromium: every table sorts by a click on a header (numbers as
numbers, dates as dates, aria-sort saying which) and filters its rows; the report draws the chosen measure by its
first dimension and over its days; money reads by its currency's rules; a link's browsers and systems are grouped
by family with the versions on demand, the bots in their own table; a new link's period starts when it was made;
at 390 px the navigation and the selectors fit the screen."""

from __future__ import annotations

import datetime
from typing import Any

from tests.browser.conftest import (
    DEMO_CUSTOMER,
    DEMO_SERVER_KEY,
    DESKTOP_UA,
    PHONE,
    Scene,
    Watched,
    open_page,
    sign_in,
    wait_for,
)
from tests.browser.servers import call

INSTAGRAM = ("Mozilla/5.0 (Linux; Android 13; SM-S901B Build/TP1A.220624.014; wv) AppleWebKit/537.36 (KHTML, like "
             "Gecko) Version/4.0 Chrome/118.0.0.0 Mobile Safari/537.36 Instagram {} Android")
APPLEBOT = ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 "
            "Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)")


def _dollars(amount: str) -> str:
    """An amount of USD as en-US writes it: "$1,234.50"."""
    return f"${float(amount):,.2f}"


def _last_week() -> tuple[str, str]:
    today = datetime.datetime.now(datetime.UTC).date()
    monday = today - datetime.timedelta(days=today.weekday())
    return str(monday - datetime.timedelta(days=7)), str(monday - datetime.timedelta(days=1))


def _numbers(texts: list[str]) -> list[float]:
    return [float(t.replace(",", "").replace("$", "")) for t in texts]


def test_tables_sort_numbers_and_dates_and_filter_their_rows(watched: Watched, scene: Scene) -> None:
    status, body = call(f"{scene.admin}/links", "POST", {"code": "filter-me-7q", "kind": "external",
                                                         "destination_url": "https://shop.example/filter"})
    assert status == 201, body
    page = watched.page
    sign_in(watched, scene)

    # The links list is paged: a column the API cannot order by (the last 7 days' clicks) is not offered as a sort.
    rows = page.locator("tr[data-code]")
    rows.first.wait_for()
    assert page.get_by_role("button", name="Clicks (7 days)").count() == 0
    assert page.locator("th", has_text="Clicks (7 days)").get_attribute("aria-sort") is None
    assert page.locator("th", has=page.get_by_role("button", name="Created")).get_attribute("aria-sort") == (
        "descending")  # the API's own order, newest first

    # The filter box keeps the rows holding the words.
    before = rows.count()
    page.get_by_label("Filter rows").fill("FILTER-me-7Q")
    wait_for("the filtered rows", lambda: rows.count() == 1)
    assert rows.first.get_attribute("data-code") == "filter-me-7q"
    page.get_by_text(f"1 of {before} rows").wait_for()
    page.get_by_label("Filter rows").fill("no such words anywhere")
    page.get_by_text("No row holds these words.").wait_for()

    # The campaigns by their start: as dates (the API's times in order), not as the words shown.
    page.goto(scene.dashboard("/campaigns"))
    page.locator("tbody tr").first.wait_for()
    names = page.locator('tbody td[data-label="Name"]')
    page.get_by_role("button", name="Starts").click()
    page.locator("th[aria-sort=ascending]", has_text="Starts").wait_for()  # the API's answer, page 1 again
    status, body = call(f"{scene.admin}/campaigns?limit=100")
    assert status == 200, body
    shown_names = names.all_inner_texts()
    starts = {c["name"]: c.get("starts_at") for c in body["data"]}
    dated = [starts[name] for name in shown_names if starts.get(name)]
    assert dated == sorted(dated) and len(dated) >= 3
    assert page.locator("th[aria-sort=ascending]").inner_text().startswith("Starts")


def test_the_links_list_sorts_every_page_by_clicks_through_the_api(watched: Watched, scene: Scene) -> None:
    """More links than a page holds, the most clicked made first (so the last page by creation): sorted by clicks,
    it is the first row of page 1, and page 2 goes on in that order. The links are deleted after, so that the
    other tests find the demo's links on the list's first page."""
    clicks = [7, *([0, 1, 2, 3] * 5), 5]  # 22 links, a page holds 20
    made: list[str] = []
    try:
        for n, times in enumerate(clicks):
            code = f"sortclk-{n:02d}"
            status, body = call(f"{scene.admin}/links", "POST", {"code": code, "kind": "external",
                                                                 "destination_url": f"https://shop.example/{code}"})
            assert status == 201, body
            made.append(body["data"]["id"])
            for _ in range(times):
                assert call(f"{scene.base}/{code}", headers={"User-Agent": DESKTOP_UA}, token=None)[0] == 302
        _sorted_by_clicks(watched, scene)
    finally:
        for link_id in made:
            assert call(f"{scene.admin}/links/{link_id}", "DELETE")[0] == 204


def _sorted_by_clicks(watched: Watched, scene: Scene) -> None:
    page = watched.page
    sign_in(watched, scene)
    page.goto(scene.dashboard("/links?q=sortclk-"))
    rows = page.locator("tbody tr[data-code]")
    wait_for("the first page", lambda: rows.count() == 20)
    assert "sortclk-00" not in rows.evaluate_all("rows => rows.map(r => r.dataset.code)")  # newest first: page 2

    button = page.get_by_role("button", name="Clicks", exact=True)
    header = page.locator("th", has=button)
    assert header.get_attribute("aria-sort") == "none"
    button.click()
    page.locator("th[aria-sort=descending]", has=page.get_by_role("button", name="Clicks", exact=True)).wait_for()
    wait_for("the most clicked link first", lambda: rows.first.get_attribute("data-code") == "sortclk-00")
    assert "sort=-clicks" in page.url and "offset" not in page.url
    shown = _numbers(page.locator('tbody td[data-label="Clicks"]').all_inner_texts())
    assert shown[:2] == [7, 5] and shown == sorted(shown, reverse=True) and len(shown) == 20
    assert page.get_by_role("button", name="Clicks", exact=True).evaluate("b => b === document.activeElement")
    page.get_by_role("button", name="Next").click()
    wait_for("page 2", lambda: rows.count() == 2)
    assert _numbers(page.locator('tbody td[data-label="Clicks"]').all_inner_texts()) == [0, 0]
    assert page.locator("th", has=page.get_by_role("button", name="Clicks", exact=True)).get_attribute(
        "aria-sort") == "descending"

    # Again: the fewest first, from page 1.
    page.get_by_role("button", name="Clicks", exact=True).click()
    page.locator("th[aria-sort=ascending]", has=page.get_by_role("button", name="Clicks", exact=True)).wait_for()
    wait_for("the fewest first", lambda: rows.count() == 20)
    shown = _numbers(page.locator('tbody td[data-label="Clicks"]').all_inner_texts())
    assert shown == sorted(shown) and shown[0] == 0


def test_the_report_charts_the_chosen_measure_and_writes_money_by_its_currency(watched: Watched,
                                                                                scene: Scene) -> None:
    page = watched.page
    sign_in(watched, scene)
    start, end = _last_week()
    status, body = call(f"{scene.admin}/reports/conversions?from={start}&to={end}&group_by=campaign")
    assert status == 200, body
    report = body["data"]
    # The demo's campaigns brought revenue last week (whatever the weekday), written as dollars are.
    ours = max((r for r in report["rows"] if r["key"]["campaign"]),
               key=lambda r: float(r["revenue"].get("USD", 0)))
    assert ours["revenue"].get("USD")
    page.goto(scene.dashboard(f"/reports?from={start}&to={end}&group_by=campaign"))
    row = page.locator(f'tbody tr[data-key="{ours["key"]["campaign"]}"]')
    row.wait_for()
    assert row.locator('td[data-label="Revenue"]').inner_text() == _dollars(ours["revenue"]["USD"])
    assert "USD" not in page.locator("tbody").inner_text()

    # The chart of revenue (the first measure when there is some) by campaign, the largest first, and by day.
    by_campaign = page.locator('[data-chart="by-dimension"] g.bar-group')
    by_campaign.first.wait_for()
    assert page.locator("[data-measure]").get_attribute("data-measure") == "revenue:USD"
    values = [float(v) for v in by_campaign.evaluate_all("bars => bars.map(b => b.dataset.value)")]
    expected = sorted((float(r["revenue"].get("USD", 0)) for r in report["rows"]), reverse=True)[:12]
    assert values == expected
    first = by_campaign.first
    assert first.locator("title").text_content() == (
        f"{first.get_attribute('data-label')}: {_dollars(str(values[0]))}")
    days = page.locator('[data-chart="over-time"] g.day')
    assert days.evaluate_all("bars => bars.map(b => b.dataset.date)") == [
        str(datetime.date.fromisoformat(start) + datetime.timedelta(days=n)) for n in range(7)]
    status, body = call(f"{scene.admin}/reports/conversions?from={start}&to={end}&group_by=day")
    revenue_by_day = {r["key"]["day"]: float(r["revenue"].get("USD", 0)) for r in body["data"]["rows"]}
    assert [float(v) for v in days.evaluate_all("bars => bars.map(b => b.dataset.value)")] == [
        revenue_by_day.get(str(datetime.date.fromisoformat(start) + datetime.timedelta(days=n)), 0.0)
        for n in range(7)]

    # Another measure: the clicks, grouped by two dimensions, charted by the first alone.
    page.get_by_label("Then by").select_option("platform")
    page.locator("th", has_text="Platform").wait_for()
    page.get_by_label("Chart of").select_option("clicks")
    page.locator('[data-measure="clicks"]').wait_for()
    assert "measure=clicks" in page.url
    charted = dict(zip(by_campaign.evaluate_all("bars => bars.map(b => b.dataset.label)"),
                       [int(v) for v in by_campaign.evaluate_all("bars => bars.map(b => b.dataset.value)")],
                       strict=True))
    assert charted[ours["key"]["campaign_name"]] == ours["clicks"]["human"]

    # The table sorts by revenue as amounts of money.
    page.get_by_label("Then by").select_option("")
    row.wait_for()
    page.get_by_role("button", name="Revenue").click()
    shown = [float(t.replace("$", "").replace(",", "") or 0) if t != "—" else 0.0
             for t in page.locator('tbody td[data-label="Revenue"]').all_inner_texts()]
    assert shown == sorted(shown, reverse=True)


def _click(scene: Scene, code: str, user_agent: str) -> None:
    assert call(f"{scene.base}/{code}", headers={"User-Agent": user_agent}, token=None)[0] == 302


def test_browsers_by_family_with_versions_on_demand_and_the_bots_apart(watched: Watched, scene: Scene) -> None:
    status, body = call(f"{scene.admin}/links", "POST", {"code": "family-test", "kind": "external",
                                                         "destination_url": "https://shop.example/family"})
    assert status == 201, body
    link = body["data"]
    for agent in (INSTAGRAM.format("330.0.0.40.92"), INSTAGRAM.format("334.0.0.42.95"),
                  INSTAGRAM.format("334.0.0.42.95"), APPLEBOT):
        _click(scene, "family-test", agent)
    wait_for("the clicks stored", lambda: call(f"{scene.admin}/links/{link['id']}/clicks")[1]["data"]["bot"] == 1)
    page = watched.page
    sign_in(watched, scene)
    page.goto(scene.dashboard(f"/links/{link['id']}/clicks"))
    page.get_by_role("heading", name="Clicks of family-test").wait_for()

    # A new link's period starts on the day it was made: one day drawn, not a month of empty ones.
    assert page.get_by_label("Period").locator("option:checked").inner_text().startswith("Since it was created")
    assert page.locator("svg.chart g.day").count() == 1

    browsers = page.locator('[data-section="browsers"]')
    family = browsers.locator('tr', has_text="Instagram")
    assert family.locator('td[data-label="Clicks"]').inner_text() == "3"
    assert browsers.locator("tbody tr").count() == 1
    versions = family.locator("details.versions")
    assert not versions.locator("li").first.is_visible()
    versions.locator("summary").click()
    assert versions.locator("li").all_inner_texts() == ["Instagram 334: 2", "Instagram 330: 1"]
    assert "Applebot" not in browsers.inner_text()
    systems = page.locator('[data-section="systems"]')
    assert systems.locator("tbody tr").count() == 1 and "Android" in systems.inner_text()

    bots = page.locator('[data-section="bots"]')
    assert bots.locator("tbody tr").all_inner_texts() == ["Applebot\t1"]
    assert "Applebot 0" not in page.locator("main").inner_text()

    # A chosen period is the whole of it.
    page.get_by_label("Period").select_option("7")
    page.locator('svg.chart g.day').nth(7).wait_for()
    assert page.locator("svg.chart g.day").count() == 8  # the day seven days back, then to today


def _fits(page: Any, selector: str) -> list[Any]:
    """The text width of each select's chosen option against the room its box gives it."""
    return page.locator(selector).evaluate_all("""selects => selects.map((s) => {
        const style = getComputedStyle(s);
        const probe = document.createElement('span');
        probe.style.cssText = 'position:absolute;white-space:pre;visibility:hidden';
        probe.style.font = style.font;
        probe.textContent = s.options[s.selectedIndex].text;
        document.body.append(probe);
        const needed = probe.getBoundingClientRect().width;
        probe.remove();
        const room = s.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 16;
        return [s.options[s.selectedIndex].text, needed <= room, Math.round(needed), Math.round(room)];
    })""")


def test_at_390_px_the_navigation_and_the_selectors_fit(browser: Any, scene: Scene) -> None:
    context, watched = open_page(browser, scene, PHONE)
    page = watched.page
    try:
        sign_in(watched, scene)
        width = page.evaluate("document.documentElement.clientWidth")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        # Every section's link is on the screen (the navigation wraps), none cut at its edge.
        links = [link for link in page.locator("#top nav a").all() if link.is_visible()]
        assert len(links) >= 10
        for link in links:
            box = link.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, link.inner_text()
        header = page.locator("#top").bounding_box()
        assert header is not None and header["height"] < 300  # a few rows, not a column of twelve
        page.get_by_role("link", name="Deliveries").click()
        page.get_by_role("heading", name="Deliveries").wait_for()
        fits = _fits(page, "#account, select[name=connection]")
        assert len(fits) == 2 and all(fit[1] for fit in fits), fits
        for name in [o for o in page.locator("select[name=connection] option").all_inner_texts()]:
            page.get_by_label("Connection").select_option(label=name)
            shown = wait_for(f"the deliveries of {name}", lambda name=name: [
                fit for fit in _fits(page, "select[name=connection]") if fit[0] == name and fit[3] == fit[3]])
            assert shown[0][1], shown
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert not watched.unexpected(), watched.unexpected()
    finally:
        context.close()


def _purchase(scene: Scene, order: str, currency: str, value: float) -> str:
    status, body = call(f"{scene.base}/api/storefront/v1/auth/authorize", headers={"x-api-key": DEMO_SERVER_KEY},
                        token=None)
    assert status == 200, body
    status, answer = call(f"{scene.base}/api/storefront/v1/behavior/events", "POST", {
        "type": "PURCHASE", "customer_id": DEMO_CUSTOMER, "order_id": order, "currency": currency, "value": value,
        "products": [{"sku": "LATTE-12"}]}, token=body["data"])
    assert status == 202, answer
    return str(answer["data"]["id"])


def test_money_follows_its_currency_on_the_event_and_the_customer_pages(watched: Watched, scene: Scene) -> None:
    """"5 USD" reads "$5.00" (two minor units), 850 yen "¥850" (none), wherever an amount is shown."""
    dollars = _purchase(scene, "money-usd", "USD", 5)
    yen = _purchase(scene, "money-jpy", "JPY", 850)
    page = watched.page
    sign_in(watched, scene)
    for event_id, shown in ((dollars, "$5.00"), (yen, "¥850")):
        page.goto(scene.dashboard(f"/events/{event_id}"))
        page.get_by_role("heading", name="PURCHASE event").wait_for()
        value = page.locator("dt", has_text="Value").locator("xpath=following-sibling::dd[1]")
        assert value.inner_text() == shown
    page.goto(scene.dashboard(f"/customers/{DEMO_CUSTOMER}"))
    page.locator(f'tr[data-event="{yen}"]').wait_for()
    assert page.locator(f'tr[data-event="{yen}"] td[data-label="Value"]').inner_text() == "¥850"
    assert page.locator(f'tr[data-event="{dollars}"] td[data-label="Value"]').inner_text() == "$5.00"
    assert " USD" not in page.locator("main").inner_text()
