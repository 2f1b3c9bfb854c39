"""The back office's pages in the dashboard: a webhook connection created (the API's validation message shown at
the field, the signing secret shown once), edited with its secret kept, tested against a local receiver that
checks the signature, disabled and enabled; a failed delivery that asks for a new token leads to its connection's
form, where the stored token is never shown; an API key created (shown once, used), then revoked; a demo customer
found by name and by phone, and their page (tier, wallet, path from clicks); a custom event type created (the
API's message at the field first) and made inactive."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook

from tests.browser.conftest import DEMO_CUSTOMER, DEMO_META, Scene, Watched, sign_in, wait_for
from tests.browser.servers import call


class Receiver:
    """A webhook receiver on a free loopback port: 204 to a message whose signature holds with ``secret``, 401
    otherwise; it keeps the type of each message it accepted."""

    def __init__(self) -> None:
        self.secret = ""
        self.accepted: list[str] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    message = Webhook(receiver.secret).verify(body, dict(self.headers))
                except Exception:  # any refusal of the signature (or no secret yet)
                    status = 401
                else:
                    receiver.accepted.append(message["type"])
                    status = 204
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    thread = threading.Thread(target=found.server.serve_forever, daemon=True)
    thread.start()
    yield found
    found.server.shutdown()
    found.server.server_close()


def test_a_webhook_connection_created_tested_disabled_and_enabled(watched: Watched, scene: Scene,
                                                                  receiver: Receiver) -> None:
    page = watched.page
    sign_in(watched, scene)
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Connections").click()
    page.get_by_role("heading", name="Connections").wait_for()
    page.get_by_role("link", name="New connection").click()
    page.get_by_role("heading", name="New connection").wait_for()
    form = page.get_by_role("form", name="Create a connection")
    form.get_by_label("Name").fill("Back office hook")
    form.get_by_label("Destination").select_option("webhook")
    form.get_by_label("Endpoint URL").fill("ftp://127.0.0.1/hooks")

    # The API's own words, at the field.
    watched.expect("400")
    status, body = call(f"{scene.admin}/connections", "POST", {"destination": "webhook", "event_types": ["*"],
                                                               "config": {"endpoint_url": "ftp://127.0.0.1/hooks"}})
    assert status == 400
    message = next(i["message"] for i in body["details"]["issues"] if i["path"] == "config.endpoint_url")
    form.get_by_role("button", name="Create connection").click()
    endpoint = form.locator('[name="config.endpoint_url"]')
    wait_for("the field's error", lambda: endpoint.get_attribute("aria-invalid") == "true")
    assert form.locator('[data-field="config.endpoint_url"] .field-error').inner_text() == message

    form.get_by_label("Endpoint URL").fill(receiver.url)
    form.get_by_role("button", name="Create connection").click()
    page.get_by_role("heading", name="Back office hook").wait_for()
    secret = page.locator('input[name="new-secret"]').input_value()
    assert secret.startswith("whsec_")
    receiver.secret = secret
    connection = page.url.rsplit("/", 1)[1]
    stored = call(f"{scene.admin}/connections/{connection}")[1]["data"]
    assert secret not in str(stored) and stored["event_types"] == ["*"] and stored["enabled"] is True

    # An edit leaves the secret blank: the stored one is kept (the receiver still accepts the signature).
    page.reload()
    page.get_by_role("heading", name="Back office hook").wait_for()
    assert page.locator('input[name="new-secret"]').count() == 0  # shown once
    edit = page.get_by_role("form", name="Edit the connection")
    assert edit.get_by_label("Signing secret").input_value() == ""
    assert edit.get_by_label("Signing secret").get_attribute("placeholder") == "stored: leave blank to keep it"
    edit.get_by_label("Name").fill("Back office webhook")
    edit.get_by_role("button", name="Save").click()
    page.get_by_role("heading", name="Back office webhook").wait_for()
    page.get_by_role("button", name="Test connection").click()
    verdict = page.locator(".test-verdict")
    wait_for("the test's verdict", lambda: verdict.get_attribute("data-outcome"))
    assert verdict.inner_text().startswith("delivered: HTTP 204"), verdict.inner_text()
    assert "connection.test" in receiver.accepted

    page.get_by_role("button", name="Disable").click()
    page.get_by_role("button", name="Enable").wait_for()
    assert call(f"{scene.admin}/connections/{connection}")[1]["data"]["enabled"] is False
    page.get_by_role("button", name="Enable").click()
    page.get_by_role("button", name="Disable").wait_for()
    assert call(f"{scene.admin}/connections/{connection}")[1]["data"]["enabled"] is True

    # The list: its state and a switch per row (left disabled, so that other tests' events do not reach it).
    page.get_by_role("link", name="Connections", exact=True).first.click()
    row = page.locator(f'tr[data-connection="{connection}"]')
    assert row.locator(".badge").inner_text() == "Enabled"
    row.get_by_role("button", name="Disable Back office webhook").click()
    page.locator(f'tr[data-connection="{connection}"][data-enabled="false"]').wait_for()
    assert call(f"{scene.admin}/connections/{connection}")[1]["data"]["enabled"] is False


def test_a_failed_delivery_that_asks_for_a_token_leads_to_the_connection(watched: Watched, scene: Scene) -> None:
    page = watched.page
    sign_in(watched, scene)
    page.goto(scene.dashboard(f"/deliveries?connection={DEMO_META}&state=failed"))
    fix = page.locator('tr[data-state="failed"] a[data-fix="connection"]').first
    fix.wait_for()
    fix.click()
    page.get_by_role("form", name="Edit the connection").wait_for()
    assert page.url.endswith(f"/connections/{DEMO_META}")
    token = page.get_by_label("Access token")
    assert token.input_value() == "" and token.get_attribute("type") == "password"
    assert token.get_attribute("placeholder") == "stored: leave blank to keep it"


def test_an_api_key_shown_once_then_revoked(watched: Watched, scene: Scene) -> None:
    page = watched.page
    sign_in(watched, scene)
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="API keys").click()
    page.get_by_role("heading", name="API keys").wait_for()
    form = page.get_by_role("form", name="Create an API key")
    form.get_by_label("Name").fill("Kiosk app")
    form.get_by_label("Kind").select_option("CLIENT")
    form.get_by_role("button", name="Create key").click()
    key = page.locator('input[name="new-key"]')
    key.wait_for()
    secret = key.input_value()
    page.get_by_role("button", name="Copy the new api key").click()
    assert page.evaluate("navigator.clipboard.readText()") == secret
    authorize = f"{scene.base}/api/storefront/v1/auth/authorize"
    assert call(authorize, headers={"x-api-key": secret}, token=None)[0] == 200
    row = page.locator('tr[data-name="Kiosk app"]')
    assert row.get_attribute("data-status") == "active" and secret not in row.inner_text()

    page.once("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name="Revoke Kiosk app").click()
    page.locator('tr[data-name="Kiosk app"][data-status="revoked"]').wait_for()
    assert call(authorize, headers={"x-api-key": secret}, token=None)[0] == 401
    page.reload()
    page.get_by_role("heading", name="API keys").wait_for()
    assert page.locator('input[name="new-key"]').count() == 0 and secret not in page.content()


def test_a_customer_found_and_their_page(watched: Watched, scene: Scene) -> None:
    page = watched.page
    customer = call(f"{scene.admin}/customers/{DEMO_CUSTOMER}")[1]["data"]
    tier = call(f"{scene.admin}/tiers/{customer['tier_id']}")[1]["data"]["name"]
    sign_in(watched, scene)
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Customers").click()
    page.get_by_role("heading", name="Customers").wait_for()
    search = page.get_by_role("search", name="Search customers")
    search.get_by_label("Name, e-mail, phone or document number").fill("300 123 4567")
    search.get_by_role("button", name="Search").click()
    row = page.locator(f'tr[data-customer="{DEMO_CUSTOMER}"]')
    row.wait_for()
    assert row.locator('td[data-label="Tier"]').inner_text() == tier
    search.get_by_label("Name, e-mail, phone or document number").fill(customer["name"].split()[-1])  # the surname
    search.get_by_role("button", name="Search").click()
    page.wait_for_url(lambda url: "q=" in url and "300" not in url)
    row.get_by_role("link", name=customer["name"]).click()

    page.get_by_role("heading", name=customer["name"], exact=True).wait_for()
    assert DEMO_CUSTOMER not in page.locator("main").inner_text()  # by name, never a bare id
    assert page.locator('dd[data-fact="tier"]').inner_text() == tier
    totals = customer["wallet"]["totals"]
    assert totals, customer["wallet"]
    for total in totals:
        held = page.locator(f'tr[data-reward="{total["reward_id"]}"]')
        assert held.locator('td[data-label="Reward"]').inner_text() == total["reward"]["name"]
    page.get_by_role("heading", name="Customer path").wait_for()
    path = call(f"{scene.admin}/customers/{DEMO_CUSTOMER}/path")[1]
    assert page.locator("tr[data-event]").count() == min(path["count"], 50)


def test_a_custom_event_type_created_and_edited(watched: Watched, scene: Scene) -> None:
    page = watched.page
    sign_in(watched, scene)
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Event types").click()
    page.get_by_role("heading", name="Event types").wait_for()
    form = page.get_by_role("form", name="Event type")
    form.get_by_label("Name").fill("1-signup")
    watched.expect("400")
    form.get_by_role("button", name="Create event type").click()
    status, body = call(f"{scene.admin}/custom-event-types", "POST", {"name": "1-signup"})
    assert status == 400
    error = form.locator('[data-field="name"] .field-error')
    wait_for("the field's error", lambda: error.inner_text())
    assert error.inner_text() == body["details"]["message"]

    form.get_by_label("Name").fill("loyalty_signup")
    form.get_by_label("Description").fill("The customer joined the loyalty programme.")
    form.get_by_role("button", name="Create event type").click()
    row = page.locator('tr[data-type="loyalty_signup"]')
    row.wait_for()
    assert row.get_attribute("data-active") == "true"
    row.get_by_role("button", name="Edit loyalty_signup").click()
    form.get_by_role("heading", name="Edit loyalty_signup").wait_for()
    form.get_by_label("Active: the API accepts events of this type").uncheck()
    form.get_by_role("button", name="Save event type").click()
    page.locator('tr[data-type="loyalty_signup"][data-active="false"]').wait_for()
    types = call(f"{scene.admin}/custom-event-types?limit=500")[1]["data"]
    stored = [t for t in types if t["name"] == "loyalty_signup"]
    assert [(t["active"], t["description"]) for t in stored] == [(False, "The customer joined the loyalty programme.")]
