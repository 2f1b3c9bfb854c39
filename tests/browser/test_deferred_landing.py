"""The iOS landing page of a deferred deep link in a real browser: an iPhone opens a link with
``ios.landing_page``, taps "Open in the app", and the pasteboard holds exactly the click's token while the
browser heads for the App Store (intercepted here: nothing leaves 127.0.0.1). The app's claim with that text
then answers the link's deeplink. With ``LINKSVC_SCREENSHOTS=1`` the page's picture is saved to
docs/screenshots/ (otherwise to a temporary folder)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from tests.browser.conftest import DEMO_SERVER_KEY, PHONE, USER_AGENTS, Scene
from tests.browser.servers import ROOT, call


def _landing_link(scene: Scene) -> dict[str, Any]:
    link = {"code": "get-the-app", "kind": "external",
            "destination_url": "https://democoffee.example.com/app?utm_source=instagram&utm_medium=social",
            "deeplink": "democoffee://menu/spring", "ios": {"app_store_id": "1234567890", "landing_page": True}}
    status, body = call(f"{scene.admin}/links", "POST", link)
    assert status == 201, body
    return dict(body["data"])


def test_open_in_the_app_copies_the_token_then_opens_the_app_store(browser: Any, scene: Scene,
                                                                   tmp_path: Path) -> None:
    link = _landing_link(scene)
    context = browser.new_context(viewport=PHONE, user_agent=USER_AGENTS["ios"], is_mobile=True, has_touch=True)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=scene.base)
    problems: list[str] = []
    store_visits: list[str] = []

    def to_the_store(route: Any) -> None:
        store_visits.append(route.request.url)
        route.abort()

    context.route(re.compile(r"^https://apps\.apple\.com/"), to_the_store)
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("console", lambda message: message.type == "error" and problems.append(message.text))
    page.on("request", lambda request: request.url.startswith(scene.base + "/") or request.url.startswith(
        "https://apps.apple.com/") or problems.append(f"request outside the service: {request.url}"))
    try:
        response = page.goto(f"{scene.base}/{link['code']}?utm_campaign=spring")
        assert response is not None and response.status == 200
        button = page.get_by_role("link", name="Open in the app")
        button.wait_for()
        assert page.get_by_role("link", name="Continue to the website").get_attribute("href", timeout=1000) \
            .startswith("https://democoffee.example.com/app?utm_source=instagram&utm_medium=social&utm_campaign=spring")
        folder = ROOT / "docs" / "screenshots" if os.environ.get("LINKSVC_SCREENSHOTS") == "1" else tmp_path
        folder.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(folder / "deferred-landing-phone.png"), full_page=True, animations="disabled")

        with page.expect_event("requestfailed", lambda request: request.url.startswith("https://apps.apple.com/")):
            button.tap()
        assert len(store_visits) == 1  # the navigation was stopped by the route, not sent
        tracking_id = re.search(r"[?&]tracking_id=([0-9a-f]{32})", store_visits[0])
        assert tracking_id is not None, store_visits
        assert store_visits[0] == ("https://apps.apple.com/app/id1234567890?utm_source=instagram&utm_medium=social"
                                   f"&utm_campaign=spring&tracking_id={tracking_id.group(1)}")
        # The pasteboard, read from a page of the service's origin (the tapped page has left for the store).
        reader = context.new_page()
        reader.goto(f"{scene.base}/healthz")
        reader.bring_to_front()
        copied = reader.evaluate("navigator.clipboard.readText()")
        assert copied == f"linksvc:deferred:{tracking_id.group(1)}"
    finally:
        context.close()
    assert not problems, problems

    status, token = call(f"{scene.base}/api/storefront/v1/auth/authorize", headers={"x-api-key": DEMO_SERVER_KEY},
                         token=None)
    assert status == 200, token
    claim = f"{scene.base}/api/storefront/v1/deferred-links/claim"
    status, body = call(claim, "POST", {"platform": "ios", "token": copied}, token=token["data"])
    assert status == 200, body
    assert body["data"]["deeplink"] == ("democoffee://menu/spring?utm_source=instagram&utm_medium=social"
                                        f"&utm_campaign=spring&tracking_id={tracking_id.group(1)}")
    assert call(claim, "POST", {"platform": "ios", "token": copied}, token=token["data"])[0] == 409
