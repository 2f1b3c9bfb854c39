"""Clicks sent to a webhook, from the dashboard (issue 37): a webhook connection subscribed to one link's clicks on
the Connections page (the link found by its code, the API's message beside a field first), clicks made through the
real redirect, and on the Deliveries page the delivery of clicks, filtered by kind, that reads as clicks (how many,
the link, the first tracking id) and whose page shows each click it carried; a marketer sees the settings without
being able to change them."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from tests.browser.conftest import DEMO, SECRET, USER_AGENTS, Scene, Watched, sign_in, sign_in_as, wait_for
from tests.browser.servers import call
from tests.browser.test_back_office import Receiver


@contextmanager
def running_receiver() -> Iterator[Receiver]:
    """A webhook receiver checking signatures (``test_back_office.Receiver``), serving while the block runs."""
    found = Receiver()
    thread = threading.Thread(target=found.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        found.server.shutdown()
        found.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as found:
        yield found


def new_link(scene: Scene, prefix: str, tags: list[str] | None = None) -> dict[str, Any]:
    code = f"{prefix}-{uuid.uuid4().hex[:6]}"
    status, body = call(f"{scene.admin}/links", "POST", {"code": code, "kind": "email", "tags": tags or [],
                                                         "destination_url": f"{scene.landing.base}/{prefix}"})
    assert status == 201, body
    return dict(body["data"])


def click(scene: Scene, code: str, tracking_id: str, agent: str = "ios") -> None:
    status, _ = call(f"{scene.base}/{code}?tracking_id={tracking_id}", headers={"User-Agent": USER_AGENTS[agent]},
                     token=None)
    assert status == 302


def click_delivery(scene: Scene, connection: str) -> dict[str, Any]:
    """The connection's first delivery of clicks once it was sent."""
    def sent() -> dict[str, Any] | None:
        status, body = call(f"{scene.admin}/connections/{connection}/deliveries?kind=link.clicked")
        assert status == 200, body
        return next((d for d in body["data"] if d["state"] != "pending"), None)

    return dict(wait_for("a delivery of clicks", sent, seconds=30))


def subscribed(scene: Scene, receiver: Receiver, name: str, clicks: dict[str, Any]) -> str:
    """A webhook connection to ``receiver`` sent the clicks ``clicks`` says, made through the admin API."""
    receiver.secret = SECRET
    status, body = call(f"{scene.admin}/connections", "POST", {
        "destination": "webhook", "name": name, "event_types": ["PURCHASE"],
        "config": {"endpoint_url": receiver.url, "secret": SECRET, "clicks": clicks}})
    assert status == 201, body
    return str(body["data"]["id"])


def test_a_webhook_subscribed_to_a_links_clicks_from_the_dashboard(watched: Watched, scene: Scene,
                                                                   receiver: Receiver) -> None:
    page = watched.page
    link = new_link(scene, "hooked")
    other = new_link(scene, "unhooked")
    sign_in(watched, scene)
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Connections").click()
    page.get_by_role("link", name="New connection").click()
    form = page.get_by_role("form", name="Create a connection")
    form.get_by_label("Name").fill("Clicks to the CRM")
    form.get_by_label("Endpoint URL").fill(receiver.url)
    settings = form.locator(".click-settings")
    assert not settings.is_visible()  # off until asked for
    form.get_by_label("Send clicks to this webhook").check()
    form.get_by_label("Only these links").check()
    form.get_by_label("Find a link by its code").fill(link["code"][:10])
    form.get_by_role("button", name=f"Add {link['code']}").click()
    picked = form.locator(f'.picked-links li[data-link-id="{link["id"]}"]')
    assert picked.inner_text().startswith(link["code"])
    assert form.get_by_role("radio", name="Leave bots out").is_checked()

    # The API's own words, beside the field.
    watched.expect("400")
    form.get_by_label("Clicks per webhook").fill("0")
    form.get_by_role("button", name="Create connection").click()
    size = form.locator('[name="config.clicks.batch_size"]')
    wait_for("the field's error", lambda: size.get_attribute("aria-invalid") == "true")
    status, body = call(f"{scene.admin}/connections", "POST", {"destination": "webhook", "event_types": ["*"],
                                                               "config": {"endpoint_url": receiver.url,
                                                                          "clicks": {"batch_size": 0}}})
    assert status == 400
    message = next(i["message"] for i in body["details"]["issues"] if i["path"] == "config.clicks.batch_size")
    assert form.locator('[data-field="config.clicks.batch_size"] .field-error').inner_text() == message

    # Two clicks a webhook; a lone click waits for its pair long enough that the two go together.
    form.get_by_label("Clicks per webhook").fill("2")
    form.get_by_label("Wait for more clicks (seconds)").fill("30")
    form.get_by_role("button", name="Create connection").click()
    page.get_by_role("heading", name="Clicks to the CRM").wait_for()
    receiver.secret = page.locator('input[name="new-secret"]').input_value()
    connection = page.url.rsplit("/", 1)[1]
    stored = call(f"{scene.admin}/connections/{connection}")[1]["data"]
    assert stored["config"]["clicks"] == {"link_ids": [link["id"]], "tags": [], "bots": "exclude", "batch_size": 2,
                                          "batch_seconds": 30}

    # Read back as saved.
    page.reload()
    edit = page.get_by_role("form", name="Edit the connection")
    assert edit.get_by_label("Send clicks to this webhook").is_checked()
    assert edit.get_by_label("Only these links").is_checked()
    edit.locator(f'.picked-links li[data-link-id="{link["id"]}"]').wait_for()
    assert edit.get_by_label("Clicks per webhook").input_value() == "2"

    # Clicks through the real redirect: a bot's and another link's are not sent.
    run = uuid.uuid4().hex[:6]
    click(scene, link["code"], f"{run}-bot", "bot")
    click(scene, other["code"], f"{run}-other")
    click(scene, link["code"], f"{run}-1", "ios")
    click(scene, link["code"], f"{run}-2", "android")
    delivery = click_delivery(scene, connection)
    assert delivery["state"] == "delivered", delivery
    assert "link.clicked" in receiver.accepted

    # The Deliveries page: the delivery reads as clicks, and only clicks once the kind is chosen.
    page.get_by_role("link", name="Its deliveries").click()
    page.get_by_role("heading", name="Deliveries").wait_for()
    summary = page.get_by_label("Forwarding summary")
    assert summary.locator('[data-fact="clicks"]').inner_text() == ("The clicks of 1 link (bots left out), up to 2 "
                                                                    "per webhook")
    page.get_by_label("What was sent").select_option(label="Clicks")
    row = page.locator(f'tr[data-delivery="{delivery["id"]}"]')
    row.wait_for()
    assert page.locator('tbody tr:not([data-kind="link.clicked"])').count() == 0
    carried = row.locator('td[data-label="What it carried"]').inner_text()
    assert "2 clicks" in carried and f"Link {link['code']}" in carried and f"First tracking id {run}-1" in carried
    assert row.locator('td[data-label="Kind"]').inner_text() == "Clicks"

    # Its page: each click it carried, as the webhook sent it.
    row.get_by_role("link", name="2 clicks").click()
    page.get_by_role("heading", name="2 clicks sent").wait_for()
    clicks = page.locator("tr[data-click]")
    assert [clicks.nth(i).get_attribute("data-click") for i in range(clicks.count())] == [f"{run}-1", f"{run}-2"]
    first = page.locator(f'tr[data-click="{run}-1"]')
    assert first.locator('td[data-label="Link"]').inner_text() == link["code"]
    assert "iPhone & iPad" in first.locator('td[data-label="Device"]').inner_text()
    assert "Android" in page.locator(f'tr[data-click="{run}-2"] td[data-label="Device"]').inner_text()
    assert page.locator('[data-fact="state"] .badge').inner_text() == "delivered"
    # Back to the list of the same connection.
    page.get_by_role("navigation", name="Breadcrumb").get_by_role("link", name="Deliveries").click()
    page.locator(f'tr[data-delivery="{delivery["id"]}"]').wait_for()
    assert page.get_by_label("Connection").input_value() == connection

    # Gone again: the scene's connection selector stays as the other tests know it.
    assert call(f"{scene.admin}/connections/{connection}", "DELETE")[0] == 204


def test_clicks_settings_are_read_only_for_a_marketer(watched: Watched, scene: Scene, receiver: Receiver) -> None:
    page = watched.page
    link = new_link(scene, "seen", ["autumn"])
    connection = subscribed(scene, receiver, "Marketer's view",
                            {"link_ids": [link["id"]], "tags": ["autumn"], "bots": "include", "batch_size": 5})
    email = f"marketer-{uuid.uuid4().hex[:6]}@democoffee.example"
    status, body = call(f"{scene.base}/api/admin/v1/people", "POST", {
        "email": email, "name": "Mia Marketer", "password": "a long passphrase", "account_id": DEMO,
        "role": "marketer"})
    assert status == 201, body
    sign_in_as(watched, scene, email, "a long passphrase")
    page.goto(scene.dashboard(f"/connections/{connection}"))
    form = page.get_by_role("form", name="Edit the connection")
    on = form.get_by_label("Send clicks to this webhook")
    assert on.is_checked() and on.is_disabled()
    assert form.get_by_role("radio", name="Include bots").is_checked()
    assert form.get_by_role("checkbox", name="autumn").is_checked()
    form.locator(f'.picked-links li[data-code="{link["code"]}"]').wait_for()
    assert form.get_by_label("Find a link by its code").count() == 0
    assert form.get_by_role("button").count() == 0
    assert call(f"{scene.admin}/connections/{connection}", "DELETE")[0] == 204
