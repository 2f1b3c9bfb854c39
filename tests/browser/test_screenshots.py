"""Each page of the dashboard at desktop and phone widths. With ``LINKSVC_SCREENSHOTS=1`` the pictures are
saved to docs/screenshots/ (``LINKSVC_SCREENSHOTS=1 .venv/bin/pytest tests/browser`` refreshes them);
otherwise to a temporary folder, so a test run leaves the repository as it was.

Every page must show its heading and content without a script error, a console error or a request outside
the service, at both widths.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import (
    DEMO,
    DEMO_CAMPAIGN,
    DEMO_META,
    DEMO_WEBHOOK,
    DESKTOP,
    PHONE,
    USER_AGENTS,
    Scene,
    open_page,
    sign_in,
    sign_in_as,
)
from tests.browser.servers import ROOT, call
from tests.browser.test_click_webhooks import click, click_delivery, new_link, running_receiver, subscribed
from tests.browser.test_live import purchase

DOCS_SCREENSHOTS = ROOT / "docs" / "screenshots"


DEMO_CUSTOMERS = [f"3f6c1a52-0006-4000-8000-00000000000{n}" for n in range(2, 7)]  # the 1st gets the tests' events


def _customer_with_an_attributed_purchase(scene: Scene) -> tuple[str, dict[str, Any]]:
    for customer in DEMO_CUSTOMERS:
        status, body = call(f"{scene.admin}/customers/{customer}/path")
        assert status == 200, body
        for step in body["data"]:
            if step["event"]["type"] == "PURCHASE" and step["click"] is not None:
                return customer, step
    raise AssertionError("no demo customer has a purchase that followed a click")


@pytest.mark.parametrize(("width", "viewport"), [("desktop", DESKTOP), ("phone", PHONE)])
def test_screenshots_of_each_page(browser: Any, scene: Scene, width: str, viewport: dict[str, int],
                                  tmp_path: Path) -> None:
    SCREENSHOTS = DOCS_SCREENSHOTS if os.environ.get("LINKSVC_SCREENSHOTS") == "1" else tmp_path  # noqa: N806
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    context, watched = open_page(browser, scene, viewport)
    page = watched.page

    def shot(name: str) -> None:
        path: Path = SCREENSHOTS / f"{name}-{width}.png"
        page.screenshot(path=str(path), full_page=True, animations="disabled")
        assert path.stat().st_size > 5000

    try:
        page.goto(f"{scene.base}/dashboard")
        page.get_by_label("Email").fill("ana@example.com")
        shot("sign-in")
        sign_in(watched, scene)
        page.locator("tbody tr").first.wait_for()
        shot("links")

        link = scene.showcase
        page.goto(scene.dashboard(f"/links/{link['id']}"))
        page.locator('.device[data-device="ios"]').wait_for()
        page.locator("img.qr").wait_for()
        page.wait_for_function("document.querySelector('img.qr').complete")
        page.get_by_label("utm_term", exact=True).fill("cold brew")
        page.locator('.device[data-device="desktop"] .location').filter(has_text="utm_term=cold%20brew").wait_for()
        shot("link-editor")

        # A deeplink without apps of its own: an iPhone with the account's app opens it there.
        punch = next(item for item in call(f"{scene.admin}/links/overview?q=punch-card")[1]["data"]
                     if item["code"] == "punch-card")
        page.goto(scene.dashboard(f"/links/{punch['id']}"))
        page.locator('.device[data-device="ios"] .app-answer').wait_for()
        page.wait_for_function("document.querySelector('img.qr').complete")
        shot("link-deeplink-app")

        # The demo's week of clicks on its busiest link.
        welcome = next(item for item in call(f"{scene.admin}/links/overview?q=welcome")[1]["data"]
                       if item["code"] == "welcome")
        page.goto(scene.dashboard(f"/links/{welcome['id']}/clicks?days=7"))
        page.locator("svg.chart").wait_for()
        assert int(page.locator('[data-total="human"]').get_attribute("data-value") or 0) > 100
        assert int(page.locator('[data-total="bot"]').get_attribute("data-value") or 0) > 0
        shot("clicks")

        page.goto(scene.dashboard("/campaigns"))
        page.locator("tbody tr").first.wait_for()
        assert page.locator('tr[data-status="FINISHED"]').count() > 0
        assert page.locator('tr[data-status="RUNNING"]').count() > 0
        shot("campaigns")

        page.goto(scene.dashboard(f"/campaigns/{DEMO_CAMPAIGN}"))
        page.locator('[data-section="attributes"]').wait_for()
        shot("campaign")

        page.goto(scene.dashboard("/campaigns/new"))
        page.get_by_role("form", name="New campaign").get_by_label("Name").fill("Spring double points")
        shot("campaign-new")

        page.goto(scene.dashboard("/campaigns/catalog"))
        page.locator("tr[data-reward]").first.wait_for()
        shot("catalog")

        # The demo's webhook, answered by the service's own sink; Meta refusing the demo's expired token.
        page.goto(scene.dashboard(f"/deliveries?connection={DEMO_WEBHOOK}"))
        page.locator('tr[data-state="delivered"]').first.wait_for()
        shot("deliveries")
        page.goto(scene.dashboard(f"/deliveries?connection={DEMO_META}&state=failed"))
        page.locator('tr[data-state="failed"]').first.wait_for()
        shot("deliveries-failed")

        # A webhook sent the clicks of two links, two a webhook: its settings, its deliveries of clicks, one of them.
        with running_receiver() as receiver:
            links = [new_link(scene, f"shot-{width}"), new_link(scene, f"shot-{width}-b", ["autumn"])]
            connection = subscribed(scene, receiver, f"CRM clicks ({width})", {
                "link_ids": [links[0]["id"]], "tags": ["autumn"], "batch_size": 2})
            page.goto(scene.dashboard(f"/connections/{connection}"))
            page.locator(f'.picked-links li[data-code="{links[0]["code"]}"]').wait_for()
            shot("connection-clicks")
            for n, (code, platform) in enumerate([(links[0]["code"], "ios"), (links[1]["code"], "android")]):
                click(scene, code, f"shot-{width}-{n}", platform)
            delivery = click_delivery(scene, connection)
            call(f"{scene.admin}/connections/{connection}", "PATCH", {"enabled": False})
        page.goto(scene.dashboard(f"/deliveries?connection={connection}&kind=link.clicked"))
        page.locator(f'tr[data-delivery="{delivery["id"]}"]').wait_for()
        shot("deliveries-clicks")
        page.goto(scene.dashboard(f"/deliveries/{delivery['id']}"))
        page.locator("tr[data-click]").first.wait_for()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        shot("delivery-clicks")

        # The demo's conversions of the last 7 days by campaign; a demo customer whose purchase followed a
        # click, their path and that purchase's lineage.
        page.goto(scene.dashboard("/reports?group_by=campaign"))
        page.locator("tfoot tr").wait_for()
        page.locator('[data-chart="over-time"] g.day').first.wait_for()  # the charts of the chosen measure
        shot("reports")
        customer, step = _customer_with_an_attributed_purchase(scene)
        page.goto(scene.dashboard(f"/customers/{customer}"))
        page.locator(f'tr[data-event="{step["event"]["id"]}"]').wait_for()
        shot("customer-path")
        page.goto(scene.dashboard(f"/events/{step['event']['id']}"))
        page.locator('.field-path[data-field="utm_source"]').wait_for()
        shot("event-lineage")
        page.goto(scene.dashboard("/customers/contacts"))
        page.get_by_role("heading", name="Contacts", exact=True).wait_for()
        page.get_by_text("New contact", exact=True).click()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        shot("contacts")

        # The Live panel with a click from each platform and an event, as they arrive.
        page.goto(scene.dashboard("/live"))
        page.locator('.live-state[data-state="live"]').wait_for()
        for platform in ("desktop", "android", "ios", "bot"):
            status, _ = call(f"{scene.base}/spring-menu?tracking_id=shot-{width}-{platform}",
                             headers={"User-Agent": USER_AGENTS[platform]}, token=None)
            assert status == 302
        event_id = purchase(scene, f"live-shot-{width}")
        page.locator(f'li[data-event="{event_id}"]').wait_for()
        page.locator(f'li[data-tracking-id="shot-{width}-bot"]').wait_for()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        shot("live")
    finally:
        context.close()
    assert not watched.unexpected(), watched.unexpected()


@pytest.mark.parametrize(("width", "viewport"), [("desktop", DESKTOP), ("phone", PHONE)])
def test_screenshots_of_the_people_pages(browser: Any, scene: Scene, width: str, viewport: dict[str, int],
                                         tmp_path: Path) -> None:
    """An owner's Members, Tokens, Audit log and Profile pages, and the page an invitation's link opens; none is
    wider than the screen."""
    SCREENSHOTS = DOCS_SCREENSHOTS if os.environ.get("LINKSVC_SCREENSHOTS") == "1" else tmp_path  # noqa: N806
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    email = f"owner-{width}@democoffee.example"
    status, body = call(f"{scene.base}/api/admin/v1/people", "POST", {
        "email": email, "name": "Olive Owner", "password": "a long passphrase", "account_id": DEMO, "role": "owner"})
    assert status == 201, body
    context, watched = open_page(browser, scene, viewport)
    page = watched.page

    def shot(name: str) -> None:
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), name
        path: Path = SCREENSHOTS / f"{name}-{width}.png"
        page.screenshot(path=str(path), full_page=True, animations="disabled")
        assert path.stat().st_size > 5000

    try:
        sign_in_as(watched, scene, email, "a long passphrase")
        page.goto(scene.dashboard("/members"))
        form = page.get_by_role("form", name="Invite a person")
        form.get_by_label("Email").fill(f"ben-{width}@democoffee.example")
        form.get_by_role("button", name="Invite").click()
        invitation = page.locator('input[name="one-time-link"]')
        invitation.wait_for()
        link = invitation.input_value()
        shot("members")
        page.goto(scene.dashboard("/tokens"))
        token_form = page.get_by_role("form", name="Create a personal access token")
        token_form.get_by_label("Name").fill("nightly report")
        token_form.get_by_label("Role").select_option("analyst")
        token_form.get_by_role("button", name="Create token").click()
        page.locator('input[name="new-token"]').wait_for()
        shot("tokens")
        page.goto(scene.dashboard("/audit-log"))
        page.locator("tbody tr").first.wait_for()
        shot("audit-log")
        page.goto(scene.dashboard("/profile"))
        page.get_by_role("button", name="Set up a second factor").click()
        page.locator('input[name="otpauth-uri"]').wait_for()
        shot("profile")
        page.get_by_role("button", name="Sign out").click()
        page.get_by_role("heading", name="Sign in").wait_for()
        page.goto(link.replace(link.split("/dashboard/")[0], scene.base))
        page.get_by_role("heading", name="Accept an invitation").wait_for()
        shot("accept-invitation")
    finally:
        context.close()
    assert not watched.unexpected(), watched.unexpected()
