"""A link's lifecycle and password on its dashboard page, in Chromium set to Tokyo's time zone: each field edited
and saved, checked in the link the admin API stores (times entered in the browser's zone, stored in UTC, shown
back in the zone), the clicks by people so far beside the click limit, the password set (never shown back: the
page says the link is protected) and removed; a refused value shows the API's own message beside its field."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import DESKTOP, DESKTOP_UA, Scene, Watched, open_page, sign_in, wait_for
from tests.browser.servers import call


@pytest.fixture
def in_tokyo(browser: Any, scene: Scene) -> Iterator[Watched]:
    context, watched = open_page(browser, scene, DESKTOP, timezone_id="Asia/Tokyo")
    yield watched
    context.close()
    assert not watched.unexpected(), watched.unexpected()


def test_lifecycle_and_password_are_edited_on_the_link_page(in_tokyo: Watched, scene: Scene) -> None:
    watched, page = in_tokyo, in_tokyo.page
    status, created = call(f"{scene.admin}/links", "POST", {
        "code": "life-page", "kind": "external", "destination_url": "https://shop.example/sale"})
    assert status == 201, created
    link = created["data"]
    stored = lambda: call(f"{scene.admin}/links/{link['id']}")[1]["data"]  # noqa: E731
    for agent in (DESKTOP_UA, DESKTOP_UA, "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"):
        assert call(f"{scene.base}/life-page", headers={"User-Agent": agent}, token=None)[0] == 302
    sign_in(watched, scene)
    page.goto(scene.dashboard(f"/links/{link['id']}"))
    section = page.locator("section.lifecycle-section")
    section.get_by_role("heading", name="Lifecycle and access").wait_for()
    state = section.locator(".lifecycle-state")
    state.filter(has_text="2 clicks by people so far.").wait_for()  # the bot's click is not counted
    assert "Open" in state.inner_text() and "No password" in section.locator(".password-state").text_content()

    # Every field at once: the times as read on a clock in Tokyo (UTC+9).
    section.get_by_label("Opens at (Asia/Tokyo)").fill("2025-01-02T09:30")
    section.get_by_label("Before it opens, send clicks to").fill("https://shop.example/soon")
    section.get_by_label("Expires at (Asia/Tokyo)").fill("2099-06-30T18:00")
    section.get_by_label("Click limit (people)").fill("5")
    section.get_by_label("Once expired or at its limit, send clicks to").fill("https://shop.example/over")
    section.get_by_label("New password").fill("open sesame")
    section.get_by_role("button", name="Save lifecycle and access").click()
    wait_for("the lifecycle saved", lambda: stored().get("password_protected"))
    saved = stored()
    assert (saved["valid_since"], saved["expires_at"]) == ("2025-01-02T00:30:00.000000Z", "2099-06-30T09:00:00.000000Z")
    assert (saved["pending_url"], saved["expired_url"], saved["max_clicks"]) == (
        "https://shop.example/soon", "https://shop.example/over", 5)
    assert "password" not in saved
    state.filter(has_text="2 clicks by people so far; 3 of 5 left.").wait_for()
    assert "Protected" in section.locator(".password-state").text_content()
    assert section.get_by_label("New password").input_value() == ""  # never shown back
    # The resolver asks for the password now.
    status, body = call(f"{scene.base}/life-page", headers={"User-Agent": DESKTOP_UA}, token=None)
    assert status == 200 and b"password" in body.lower()

    # Shown back in the browser's zone after a reload.
    page.reload()
    section = page.locator("section.lifecycle-section")
    assert section.get_by_label("Opens at (Asia/Tokyo)").input_value() == "2025-01-02T09:30"
    assert section.get_by_label("Expires at (Asia/Tokyo)").input_value() == "2099-06-30T18:00"
    assert section.get_by_label("Click limit (people)").input_value() == "5"

    # Refused values: the API's own message beside the field, nothing saved.
    expected = call(f"{scene.admin}/links/{link['id']}", "PATCH", {"max_clicks": 0})[1]["details"]["issues"][0]
    assert expected["path"] == "max_clicks"
    watched.expect(r"status of 400 \(Bad Request\)")
    section.get_by_label("Click limit (people)").fill("0")
    section.get_by_role("button", name="Save lifecycle and access").click()
    section.locator('[data-field="max_clicks"] .field-error').filter(has_text=expected["message"]).wait_for()
    assert section.get_by_label("Click limit (people)").get_attribute("aria-invalid") == "true"
    section.get_by_label("Click limit (people)").fill("5")
    section.get_by_label("Expires at (Asia/Tokyo)").fill("2024-12-31T09:00")  # before it opens
    section.get_by_role("button", name="Save lifecycle and access").click()
    section.locator('[data-field="expires_at"] .field-error').filter(has_text="must be after valid_since").wait_for()
    assert stored()["expires_at"] == "2099-06-30T09:00:00.000000Z" and stored()["max_clicks"] == 5

    # Cleared and removed: no opening time, no limit, no redirects, no password.
    for label in ("Opens at (Asia/Tokyo)", "Before it opens, send clicks to", "Expires at (Asia/Tokyo)",
                  "Click limit (people)", "Once expired or at its limit, send clicks to"):
        section.get_by_label(label).fill("")
    section.get_by_label("Remove the password").check()
    section.get_by_role("button", name="Save lifecycle and access").click()
    wait_for("the lifecycle cleared", lambda: not stored().get("password_protected"))
    saved = stored()
    assert [saved.get(name) for name in ("valid_since", "pending_url", "expires_at", "expired_url", "max_clicks")] \
        == [None] * 5
    state.filter(has_text="2 clicks by people so far.").wait_for()
    assert "No password" in section.locator(".password-state").text_content()
    assert call(f"{scene.base}/life-page", headers={"User-Agent": DESKTOP_UA}, token=None)[0] == 302
