"""From click to revenue in the dashboard: the conversion report answers "which campaign brought last week's
revenue", its CSV is the same table, an event's lineage is drawn from its click, and a customer's path lists
the clicks behind their events. On top of the demo's week, one click on the showcase link (an email link of
the demo campaign) and, last Wednesday, a purchase that carries its tracking id: the demo's week may not reach
into last week (on a Sunday it does not)."""

from __future__ import annotations

import csv
import datetime
import io
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import (
    DEMO_CAMPAIGN,
    DEMO_CUSTOMER,
    DEMO_SERVER_KEY,
    USER_AGENTS,
    Scene,
    Watched,
    sign_in,
    wait_for,
)
from tests.browser.servers import call
from tests.browser.test_dashboard import _tab_to


def last_week() -> tuple[str, str]:
    """Monday to Sunday before the current week, UTC."""
    today = datetime.datetime.now(datetime.UTC).date()
    monday = today - datetime.timedelta(days=today.weekday())
    return (monday - datetime.timedelta(days=7)).isoformat(), (monday - datetime.timedelta(days=1)).isoformat()


def _event(base: str, event: dict[str, Any]) -> str:
    status, body = call(f"{base}/api/storefront/v1/auth/authorize", headers={"x-api-key": DEMO_SERVER_KEY}, token=None)
    assert status == 200, body
    status, answer = call(f"{base}/api/storefront/v1/behavior/events", "POST", event, token=body["data"])
    assert status == 202, answer
    return str(answer["data"]["id"])


@pytest.fixture(scope="module")
def bought(scene: Scene) -> dict[str, str]:
    """A click on the showcase link, then last Wednesday's purchase with its tracking id (top level) and UTM
    (in its attribution object): utm_source as the link gave it, utm_medium another one. And a purchase
    without a tracking id (a PURCHASE: the scene's connections forward only those, so the deliveries the
    other tests read keep their reasons)."""
    link = scene.showcase
    clicks = f"{scene.admin}/links/{link['id']}/clicks?days=7"
    before = call(clicks)[1]["data"]["human"]
    tracking_id = f"browser-{uuid.uuid4().hex}"
    status, _ = call(f"{scene.base}/{link['code']}?tracking_id={tracking_id}",
                     headers={"User-Agent": USER_AGENTS["desktop"]}, token=None)
    assert status == 302
    wait_for("the click to be stored", lambda: call(clicks)[1]["data"]["human"] > before)
    wednesday = datetime.date.fromisoformat(last_week()[0]) + datetime.timedelta(days=2)
    purchase = _event(scene.base, {
        "type": "PURCHASE", "customer_id": DEMO_CUSTOMER, "order_id": tracking_id, "currency": "USD", "value": 40.25,
        "issued_at": f"{wednesday.isoformat()}T12:00:00Z", "tracking_id": tracking_id,
        "attribution": {"utm_source": "newsletter", "utm_medium": "social"}, "products": [{"sku": "LATTE-12"}]})
    clickless = _event(scene.base, {"type": "PURCHASE", "customer_id": DEMO_CUSTOMER, "order_id": f"{tracking_id}-2",
                                    "currency": "USD", "value": 3.5, "products": [{"sku": "LATTE-12"}]})
    return {"tracking_id": tracking_id, "purchase": purchase, "clickless": clickless}


def _report(scene: Scene, start: str, end: str, group_by: str, fmt: str = "") -> Any:
    status, body = call(f"{scene.admin}/reports/conversions?from={start}&to={end}&group_by={group_by}"
                        + (f"&format={fmt}" if fmt else ""))
    assert status == 200, body
    return body


def test_last_weeks_revenue_by_campaign_and_its_csv(watched: Watched, scene: Scene, bought: dict[str, str],
                                                    tmp_path: Path) -> None:
    page = watched.page
    sign_in(watched, scene)
    page.get_by_role("link", name="Reports").click()
    page.get_by_role("heading", name="Conversion report").wait_for()
    page.get_by_role("button", name="Last week").click()
    page.get_by_label("Group by").select_option("campaign")
    start, end = last_week()
    assert (page.get_by_label("From").input_value(), page.get_by_label("To").input_value()) == (start, end)
    row = page.locator(f'tbody tr[data-key="{DEMO_CAMPAIGN}"]')
    row.wait_for()
    assert f"from={start}" in page.url and f"to={end}" in page.url and "group_by=campaign" in page.url

    # The table is the API's: the same rows in the same order, the campaign's revenue (with the purchase of
    # last Wednesday) in its revenue column, and the totals.
    report = _report(scene, start, end, "campaign")["data"]
    assert page.locator("tbody tr").evaluate_all("rows => rows.map(r => r.dataset.key)") == [
        r["key"]["campaign"] for r in report["rows"]]
    ours = next(r for r in report["rows"] if r["key"]["campaign"] == DEMO_CAMPAIGN)
    assert ours["purchases"] >= 1 and float(ours["revenue"]["USD"]) >= 40.25
    assert row.locator('td[data-label="Campaign"]').inner_text() == "Earn 1 point per dollar"
    assert row.locator('td[data-label="Revenue"]').inner_text() == f"${float(ours['revenue']['USD']):,.2f}"
    assert row.locator('td[data-label="Purchases"]').inner_text() == f"{ours['purchases']:,}"
    totals = page.locator("tfoot tr")
    assert totals.locator("td").first.inner_text() == "Total"
    assert totals.locator('td[data-label="Purchases"]').inner_text() == f"{report['totals']['purchases']:,}"
    assert totals.locator('td[data-label="Clicks"]').inner_text() == f"{report['totals']['clicks']['human']:,}"

    # The CSV link downloads the same query's rows.
    with page.expect_download() as download:
        page.get_by_role("link", name="Download CSV").click()
    assert download.value.suggested_filename == f"conversions-{start}-{end}.csv"
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    assert saved.read_bytes() == _report(scene, start, end, "campaign", "csv")
    rows = list(csv.reader(io.StringIO(saved.read_text())))
    assert len(rows) == 1 + len(report["rows"]) and rows[0][:2] == ["campaign", "campaign_name"]
    assert DEMO_CAMPAIGN in rows[1 + [r["key"]["campaign"] for r in report["rows"]].index(DEMO_CAMPAIGN)]

    # Two dimensions; the campaign leads to its page.
    page.get_by_label("Then by").select_option("utm_source")
    page.locator("th", has_text="utm_source").wait_for()
    assert "group_by=campaign%2Cutm_source" in page.url or "group_by=campaign,utm_source" in page.url
    # Grouped by a UTM field, the page says whose UTM the events count under, and the other choice is one select.
    page.locator('p[data-utm-from="click"]').wait_for()
    page.get_by_label("Events’ UTM").select_option("event")
    page.locator('p[data-utm-from="event"]').wait_for()
    assert "utm_from=event" in page.url
    page.get_by_label("Events’ UTM").select_option("click")
    page.locator('p[data-utm-from="click"]').wait_for()
    page.locator(f'tbody tr[data-key="{DEMO_CAMPAIGN}|newsletter"]').get_by_role("link").first.click()
    page.get_by_role("heading", name="Earn 1 point per dollar").wait_for()


def test_a_customers_path_and_an_events_lineage(watched: Watched, scene: Scene, bought: dict[str, str]) -> None:
    page = watched.page
    sign_in(watched, scene)
    page.goto(scene.dashboard(f"/customers/{DEMO_CUSTOMER}"))
    page.get_by_role("heading", name="Customer path").wait_for()
    row = page.locator(f'tr[data-event="{bought["purchase"]}"]')
    assert row.locator('td[data-label="Link"]').inner_text() == scene.showcase["code"]
    assert row.locator('td[data-label="Campaign"]').inner_text() == "Earn 1 point per dollar"
    assert "utm_source=newsletter" in row.locator('td[data-label="UTM"]').inner_text()
    assert page.locator(f'tr[data-event="{bought["clickless"]}"] td[data-label="Link"]').inner_text() == "no click"
    dates = page.locator('tbody td[data-label="When"]').all_inner_texts()
    assert len(dates) >= 2
    newest = page.locator("tbody tr[data-event]").first
    assert newest.get_attribute("data-event") == bought["clickless"]  # newest first

    row.get_by_role("link", name="PURCHASE").click()
    page.get_by_role("heading", name="PURCHASE event").wait_for()
    assert page.url.endswith(f"/events/{bought['purchase']}")
    click = page.locator('[data-node="click"]')
    assert click.get_by_role("link", name=scene.showcase["code"]).count() == 1
    assert click.get_by_role("link", name="Earn 1 point per dollar").count() == 1
    assert bought["tracking_id"] in click.inner_text()

    def field(name: str) -> Any:
        return page.locator(f'.field-path[data-field="{name}"]')

    # The click's origins as the API stored them, in words (clicks record them since the click writer does).
    lineage = call(f"{scene.admin}/events/{bought['purchase']}")[1]["data"]["lineage"]
    origins = {"destination": "from the link’s destination",
               "defaults": "from the defaults of this kind of link", "unknown": "origin not recorded"}
    tracking = field("tracking_id")
    assert "from the event’s top level" in tracking.locator('[data-side="event"]').inner_text()
    assert tracking.locator('[data-side="click"] code').inner_text() == bought["tracking_id"]
    assert tracking.locator(".badge").inner_text() == "Agrees"
    source = field("utm_source")
    assert source.locator('[data-side="event"] code').inner_text() == "newsletter"
    assert "from the event’s attribution object" in source.locator('[data-side="event"]').inner_text()
    assert lineage["utm_source"]["click"]["origin"] in ("destination", "unknown")
    assert origins[lineage["utm_source"]["click"]["origin"]] in source.locator('[data-side="click"]').inner_text()
    assert source.locator(".badge").inner_text() == "Agrees"
    medium = field("utm_medium")
    assert medium.locator('[data-side="event"] code').inner_text() == "social"
    assert medium.locator('[data-side="click"] code').inner_text() == "email"
    assert lineage["utm_medium"]["click"]["origin"] in ("defaults", "unknown")
    assert origins[lineage["utm_medium"]["click"]["origin"]] in medium.locator('[data-side="click"]').inner_text()
    assert medium.locator(".badge").inner_text() == "Differs"
    for name in ("utm_source", "utm_medium", "tracking_id"):
        rules = field(name).locator(".rule").all_inner_texts()
        assert rules == [lineage[name]["click"]["rule"], lineage[name]["rule"]]

    # The event without a click says so; its customer, named, leads back to their page and path.
    page.goto(scene.dashboard(f"/events/{bought['clickless']}"))
    page.get_by_role("heading", name="PURCHASE event").wait_for()
    assert page.url.endswith(f"/events/{bought['clickless']}")
    assert page.locator('[data-node="click"] h3').inner_text() == "No click behind this event"
    name = call(f"{scene.admin}/customers/{DEMO_CUSTOMER}")[1]["data"]["name"]
    page.locator("dl.facts").first.get_by_role("link", name=name).click()
    page.get_by_role("heading", name=name, exact=True).wait_for()
    page.get_by_role("heading", name="Customer path").wait_for()


def test_the_report_is_used_with_the_keyboard_and_labelled(watched: Watched, scene: Scene) -> None:
    page = watched.page
    sign_in(watched, scene)
    _tab_to(watched, "Reports")
    page.keyboard.press("Enter")
    page.get_by_role("heading", name="Conversion report").wait_for()
    for name in ("From", "To", "Group by", "Then by", "Last 7 days", "Last week", "Last 30 days", "Download CSV"):
        _tab_to(watched, name)
    assert page.evaluate("document.activeElement.getAttribute('href')").endswith("format=csv")
    assert page.locator("table caption").inner_text().startswith("Conversions by Campaign")
    assert page.locator('thead th:not([scope="col"])').count() == 0
    assert page.locator('#nav-reports[aria-current="page"]').count() == 1
    # A range the API refuses is said beside the form, not as a broken page.
    watched.expect(r"status of 400")
    page.goto(scene.dashboard("/reports?from=2020-01-01&to=2026-01-01"))
    page.get_by_role("heading", name="Conversion report").wait_for()
    page.locator(".form-error:not(:empty), .field-error:not(:empty)").first.wait_for()
    assert page.get_by_text("No report for these settings.").count() == 1


def test_the_report_by_the_clicks_country_and_variant(watched: Watched, scene: Scene, bought: dict[str, str]) -> None:
    """Issue 34: the click's country, referrer, rule and A/B variant are dimensions of the report; a missing one
    reads in words, the second choice offers only what the first goes with, and a variant comes with its link."""
    page = watched.page
    sign_in(watched, scene)
    page.get_by_role("link", name="Reports").click()
    page.get_by_role("heading", name="Conversion report").wait_for()
    page.get_by_role("button", name="Last 7 days").click()
    page.get_by_label("Group by").select_option("country")
    page.locator("th", has_text="Country").wait_for()
    assert "group_by=country" in page.url
    start, end = page.get_by_label("From").input_value(), page.get_by_label("To").input_value()
    report = _report(scene, start, end, "country")["data"]
    cells = page.locator('tbody tr td[data-label="Country"]').all_inner_texts()
    assert cells == [row["key"]["country"] or "(unknown)" for row in report["rows"]] and cells
    # With a country: the day only; with a rule, the day, the link or the campaign.
    then_by = page.get_by_label("Then by")
    disabled = then_by.locator("option:disabled").evaluate_all("options => options.map(o => o.value)")
    assert set(disabled) == {"campaign", "link", "country", "utm_source", "utm_medium", "utm_campaign", "platform",
                             "referrer_host", "rule", "variant", "tag", "folder"}
    page.get_by_label("Group by").select_option("rule")
    page.locator("th", has_text="Rule").wait_for()
    disabled = then_by.locator("option:disabled").evaluate_all("options => options.map(o => o.value)")
    assert set(disabled) == {"country", "utm_source", "utm_medium", "utm_campaign", "platform", "referrer_host",
                             "rule", "variant", "tag", "folder"}  # a tag or folder is the link's, not the click's
    # A variant is named per link: choosing it groups by the link too.
    page.get_by_label("Group by").select_option("variant")
    page.locator("th", has_text="A/B variant").wait_for()
    assert then_by.input_value() == "link"
    assert "group_by=variant%2Clink" in page.url or "group_by=variant,link" in page.url
    assert page.get_by_text("No report for these settings.").count() == 0
