"""The variant report on a link's dashboard page: a row per variant with the admin API's figures, sorted by a
column's header (and reversed by a second press)."""

from __future__ import annotations

import urllib.request
from datetime import date, timedelta

from tests.browser.conftest import Scene, Watched, sign_in
from tests.browser.servers import call


def _click(base: str, code: str, cookie: str) -> None:
    request = urllib.request.Request(f"{base}/{code}", headers={"Cookie": cookie, "User-Agent": "Variant/1"})

    class _Stay(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    try:
        urllib.request.build_opener(_Stay).open(request, timeout=10)
    except urllib.error.HTTPError as answer:
        assert answer.code == 302


def test_the_link_page_shows_the_variant_report_sortable(watched: Watched, scene: Scene) -> None:
    status, body = call(f"{scene.admin}/links", "POST", {
        "code": "split-page", "kind": "external", "destination_url": "https://shop.example/a",
        "variants": [{"name": "Control", "weight": 1},
                     {"name": "Bold", "weight": 3, "target": {"destination_url": "https://shop.example/b"}}]})
    assert status == 201, body
    link = body["data"]
    for name, times in (("Control", 1), ("Bold", 2)):
        for _ in range(times):
            _click(scene.base, "split-page", f"lsv_{link['id']}={name}")
    page = watched.page
    sign_in(watched, scene)
    page.goto(scene.dashboard(f"/links/{link['id']}"))
    table = page.locator("table.variants")
    table.wait_for()
    names = lambda: [cell.inner_text() for cell in table.locator("tbody tr td:first-child").all()]  # noqa: E731
    assert names() == ["Control (control)", "Bold"]
    assert table.locator("tbody tr").first.locator("td").nth(2).inner_text() == "1"
    table.get_by_role("button", name="Clicks").click()
    assert table.locator("th[aria-sort=descending]").inner_text().startswith("Clicks")
    assert names() == ["Bold", "Control (control)"]
    table.get_by_role("button", name="Clicks").click()
    assert names() == ["Control (control)", "Bold"]


def test_the_split_is_edited_on_the_link_page(watched: Watched, scene: Scene) -> None:
    """A split made, refused, saved and removed from the link's page; the resolver follows what was saved."""
    status, body = call(f"{scene.admin}/links", "POST", {
        "code": "split-editor", "kind": "external", "destination_url": "https://shop.example/a"})
    assert status == 201, body
    link = body["data"]
    page = watched.page
    sign_in(watched, scene)
    page.goto(scene.dashboard(f"/links/{link['id']}"))
    section = page.locator("section", has=page.get_by_role("heading", name="A/B split"))
    section.get_by_text("No split").wait_for()
    section.get_by_role("button", name="Add a variant").click()
    rows = section.locator("fieldset.variant-row")
    assert rows.count() == 2
    rows.nth(1).get_by_label("Name").fill("A")  # the same name twice: refused beside the field
    watched.expect(r"status of 400 \(Bad Request\)")
    section.get_by_role("button", name="Save split").click()
    refused = section.locator('[data-field="variants[1].name"] .field-error')
    refused.filter(has_text="another variant is named").wait_for()
    assert call(f"{scene.admin}/links/{link['id']}")[1]["data"].get("variants") is None

    rows.nth(1).get_by_label("Name").fill("Bold")
    rows.nth(1).get_by_label("Weight").fill("3")
    rows.nth(1).get_by_label("Destination").fill("https://shop.example/b")
    section.get_by_role("button", name="Save split").click()
    page.get_by_role("status").filter(has_text="Split saved.").wait_for()
    assert call(f"{scene.admin}/links/{link['id']}")[1]["data"]["variants"] == [
        {"name": "A", "weight": 50, "target": None},
        {"name": "Bold", "weight": 3, "target": {"destination_url": "https://shop.example/b"}}]
    page.reload()
    page.locator("table.variants").wait_for()  # the report of the split as saved

    section = page.locator("section", has=page.get_by_role("heading", name="A/B split"))
    for _ in range(2):
        section.locator("fieldset.variant-row").first.get_by_role("button", name="Remove variant").click()
    section.get_by_role("button", name="Save split").click()
    page.get_by_role("status").filter(has_text="Split removed").wait_for()
    assert call(f"{scene.admin}/links/{link['id']}")[1]["data"].get("variants") is None
    assert not watched.unexpected()


def test_the_variant_report_takes_a_period(watched: Watched, scene: Scene) -> None:
    """All time by default; a preset or a From and To (UTC days) asks the API for that range, whose figures the
    table then shows; a range the API refuses is named beside its field with the API's message."""
    status, body = call(f"{scene.admin}/links", "POST", {
        "code": "split-period", "kind": "external", "destination_url": "https://shop.example/a",
        "variants": [{"name": "Control", "weight": 1},
                     {"name": "Bold", "weight": 1, "target": {"destination_url": "https://shop.example/b"}}]})
    assert status == 201, body
    link = body["data"]
    for name in ("Control", "Bold", "Bold"):
        _click(scene.base, "split-period", f"lsv_{link['id']}={name}")
    page = watched.page
    sign_in(watched, scene)
    page.goto(scene.dashboard(f"/links/{link['id']}"))
    section = page.locator("section", has=page.get_by_role("heading", name="A/B split"))
    table = section.locator("table.variants")
    table.wait_for()
    clicks = lambda: [row.locator("td").nth(2).inner_text() for row in table.locator("tbody tr").all()]  # noqa: E731
    assert clicks() == ["1", "2"]
    assert "Figures of all time" in section.locator(".variant-period-shown").inner_text()

    section.get_by_role("button", name="Last week").click()  # Monday to Sunday before this week: not today
    section.locator(".variant-period-shown").filter(has_text=" to ").wait_for()
    section.locator("table.variants tbody tr").first.locator("td").nth(2).filter(has_text="0").wait_for()
    assert clicks() == ["0", "0"]
    assert section.get_by_role("button", name="Last week").get_attribute("aria-pressed") == "true"
    section.get_by_role("button", name="Last 7 days").click()
    section.locator("table.variants tbody tr").nth(1).locator("td").nth(2).filter(has_text="2").wait_for()
    assert clicks() == ["1", "2"]

    today = date.fromisoformat(section.get_by_label("To (UTC)").input_value())
    expected = call(f"{scene.admin}/links/{link['id']}/variants?from={today + timedelta(days=1)}&to={today}")[1]
    message = next(issue["message"] for issue in expected["details"]["issues"] if issue["path"] == "to")
    watched.expect(r"status of 400 \(Bad Request\)")
    section.get_by_label("From (UTC)").fill(str(today + timedelta(days=1)))
    section.get_by_label("From (UTC)").dispatch_event("change")
    section.locator('[data-field="to"] .field-error').filter(has_text=message).wait_for()
    assert section.get_by_text("No report for this period.").is_visible()
    section.get_by_role("button", name="All time").click()
    section.locator("table.variants").wait_for()
    assert clicks() == ["1", "2"]
