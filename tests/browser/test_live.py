"""The Live panel (issue 37): a click made through the redirect and an event sent to the storefront appear on
the page as they are stored, through the live feed opened with a feed ticket (an EventSource sends no header),
the newest first; the filters start the stream afresh."""

from __future__ import annotations

import uuid

from tests.browser.conftest import DEMO_CUSTOMER, DEMO_SERVER_KEY, USER_AGENTS, Scene, Watched, sign_in
from tests.browser.servers import call


def click(scene: Scene, tracking_id: str, agent: str = "ios") -> None:
    status, _ = call(f"{scene.base}/spring-menu?tracking_id={tracking_id}",
                     headers={"User-Agent": USER_AGENTS[agent]}, token=None)
    assert status == 302


def purchase(scene: Scene, order_id: str) -> str:
    status, body = call(f"{scene.base}/api/storefront/v1/auth/authorize", headers={"x-api-key": DEMO_SERVER_KEY},
                        token=None)
    assert status == 200, body
    event = {"type": "PURCHASE", "customer_id": DEMO_CUSTOMER, "order_id": order_id, "currency": "USD",
             "value": 4.5, "products": [{"sku": "LATTE-12"}]}
    status, body = call(f"{scene.base}/api/storefront/v1/behavior/events", "POST", event, token=body["data"])
    assert status == 202, body
    return str(body["data"]["id"])


def test_a_click_and_an_event_appear_live(watched: Watched, scene: Scene) -> None:
    page = watched.page
    sign_in(watched, scene)
    page.locator("#nav-live").click()
    page.get_by_role("heading", name="Live").wait_for()
    page.locator('.live-state[data-state="live"]').wait_for()
    tracking_id = f"live-{uuid.uuid4().hex[:8]}"
    click(scene, tracking_id)
    item = page.locator(f'li[data-kind="click"][data-tracking-id="{tracking_id}"]')
    item.wait_for()
    assert "spring-menu" in item.inner_text()
    event_id = purchase(scene, f"live-{tracking_id}")
    page.locator(f'li[data-kind="event"][data-event="{event_id}"]').wait_for()
    first = page.locator(".live-list li").first
    assert first.get_attribute("data-event") == event_id  # the newest first
    # bots left out: a bot's click does not show, the next person's does
    page.get_by_label("Bots").select_option("exclude")
    page.locator('.live-state[data-state="live"]').wait_for()
    page.locator(".live-empty").wait_for()
    click(scene, f"{tracking_id}-bot", "bot")
    click(scene, f"{tracking_id}-person")
    page.locator(f'li[data-tracking-id="{tracking_id}-person"]').wait_for()
    assert page.locator(f'li[data-tracking-id="{tracking_id}-bot"]').count() == 0
    # the ticket rides in the stream's address only: never in a request the page made with its header
    tickets = page.evaluate("performance.getEntriesByType('resource').map(e => e.name)"
                            ".filter(n => n.includes('/feed?'))")
    assert tickets and all("ticket=lft_" in name for name in tickets)
