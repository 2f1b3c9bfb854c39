"""Link previews in the dashboard: the account's defaults page and a link's own preview fields, each with its
mock of the card, saved through the admin API and shown as a field error when refused. With
``LINKSVC_SCREENSHOTS=1`` the pages are saved to docs/screenshots/link-preview-*.png (as test_screenshots)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.browser.conftest import Scene, Watched, sign_in
from tests.browser.servers import ROOT, call

IMAGE = "https://cdn.democoffee.example/cards/coffee.png"  # never loaded: the mock names its host


def _shot(watched: Watched, name: str, tmp_path: Path) -> None:
    folder = ROOT / "docs" / "screenshots" if os.environ.get("LINKSVC_SCREENSHOTS") == "1" else tmp_path
    path = folder / f"link-preview-{name}.png"
    watched.page.screenshot(path=str(path), full_page=True, animations="disabled")
    assert path.stat().st_size > 5000


def test_account_defaults_and_a_links_own_preview(watched: Watched, scene: Scene, tmp_path: Path) -> None:
    page = watched.page
    link: dict[str, Any] = scene.showcase
    try:
        sign_in(watched, scene)
        page.get_by_role("link", name="Link previews").click()
        page.get_by_role("heading", name="Link previews").wait_for()
        card = page.locator(".preview-card")
        assert "Nothing set" in card.inner_text()

        # A refused image address is named beside its field; nothing is saved.
        page.get_by_label("Title").fill("Demo Coffee Co.")
        page.get_by_label("Image URL (https)").fill("http://cdn.democoffee.example/logo.png")
        watched.expect(r"status of 400 \(Bad Request\)")  # the refused save below
        page.get_by_role("button", name="Save defaults").click()
        page.locator('[data-field="image_url"] .field-error').filter(has_text="https").wait_for()
        assert call(f"{scene.admin}/link-preview")[1]["data"]["title"] is None

        page.get_by_label("Image URL (https)").fill(IMAGE)
        page.get_by_label("Description").fill("Coffee roasted every morning, delivered by noon.")
        page.get_by_label("Site name").fill("Demo Coffee")
        card.locator(".preview-title").filter(has_text="Demo Coffee Co.").wait_for()
        assert card.locator(".preview-site").inner_text().upper() == "DEMO COFFEE"
        assert card.locator(".preview-image").inner_text() == "Image from cdn.democoffee.example"
        page.get_by_role("button", name="Save defaults").click()
        page.get_by_role("status").filter(has_text="Link preview defaults saved.").wait_for()
        saved = call(f"{scene.admin}/link-preview")[1]["data"]
        assert (saved["title"], saved["image_url"], saved["site_name"]) == ("Demo Coffee Co.", IMAGE, "Demo Coffee")
        _shot(watched, "settings-desktop", tmp_path)

        # The link's own title wins over the account's; the rest comes from the defaults.
        page.goto(scene.dashboard(f"/links/{link['id']}"))
        section = page.locator("section.link-preview")
        section.wait_for()
        assert "the account's default" in section.locator('[data-field="preview.title"] .hint').inner_text()
        section.get_by_label("Title").fill("The spring menu is here")
        mock = section.locator(".preview-card")
        mock.locator(".preview-title").filter(has_text="The spring menu is here").wait_for()
        assert mock.locator(".preview-description").inner_text() == "Coffee roasted every morning, delivered by noon."
        section.get_by_role("button", name="Save preview").click()
        page.get_by_role("status").filter(has_text="Preview saved.").wait_for()
        stored = call(f"{scene.admin}/links/{link['id']}")[1]["data"]
        assert stored["preview"] == {"title": "The spring menu is here", "description": None, "image_url": None}
        section.scroll_into_view_if_needed()
        _shot(watched, "link-desktop", tmp_path)

        # What a preview fetcher now gets from the resolver: the same card.
        status, body = call(f"{scene.base}/spring-menu", headers={"User-Agent": "WhatsApp/2.23.20.0 A"}, token=None)
        assert status == 200
        text = body.decode() if isinstance(body, bytes) else str(body)
        assert '<meta property="og:title" content="The spring menu is here">' in text
        assert f'<meta property="og:image" content="{IMAGE}">' in text
    finally:  # the scene is shared: leave the demo account as it was
        call(f"{scene.admin}/links/{link['id']}", "PATCH", {"preview": None})
        call(f"{scene.admin}/link-preview", "PUT", {})
