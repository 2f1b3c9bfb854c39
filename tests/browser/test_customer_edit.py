"""Customers and contacts created and edited in the dashboard: the API's message beside a refused field, what was
saved read back through the API. What the tests create is removed at the end, so the scene's other tests see the
customers and contacts they expect."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import Scene, Watched, sign_in, sign_in_as, wait_for
from tests.browser.servers import call


@pytest.fixture
def removed(scene: Scene) -> Iterator[list[str]]:
    """Paths under the account (``customers/<id>``) deleted through the API once the test is over."""
    paths: list[str] = []
    yield paths
    for path in paths:
        assert call(f"{scene.admin}/{path}", "DELETE")[0] in (200, 204, 404)


def _found(scene: Scene, kind: str, email: str) -> dict[str, Any] | None:
    items = call(f"{scene.admin}/{kind}?limit=500")[1]["data"]
    return next((item for item in items if item.get("email") == email), None)


def test_a_customer_created_then_edited(watched: Watched, scene: Scene, removed: list[str]) -> None:
    suffix = uuid.uuid4().hex[:6]
    name, email = f"Lucía Gómez {suffix}", f"lucia-{suffix}@democoffee.example"
    tier = call(f"{scene.admin}/tiers?limit=1")[1]["data"][0]
    page = watched.page
    watched.expect("status of 400")  # the refused e-mail
    sign_in(watched, scene)
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Customers").click()
    page.get_by_role("heading", name="Customers").wait_for()
    page.get_by_text("New customer", exact=True).click()
    form = page.get_by_role("form", name="New customer")
    before = call(f"{scene.admin}/customers?limit=1")[1]["count"]
    form.get_by_role("button", name="Create customer").click()  # nothing to find the customer by: not sent
    form.locator(".form-error").filter(has_text="Fill in at least one of: name, e-mail").wait_for()
    assert call(f"{scene.admin}/customers?limit=1")[1]["count"] == before
    form.get_by_label("Name").fill(name)
    form.get_by_label("E-mail").fill("lucia at democoffee")
    form.get_by_label("Tier").select_option(tier["id"])
    form.get_by_role("button", name="Create customer").click()
    form.locator('[data-field="email"] .field-error').filter(has_text="must be an e-mail address").wait_for()
    assert form.get_by_label("E-mail").get_attribute("aria-invalid") == "true"
    assert _found(scene, "customers", "lucia at democoffee") is None

    form.get_by_label("E-mail").fill(email)
    form.get_by_label("Document type").fill("CC")
    form.get_by_label("Document number").fill(f"CC{suffix}")
    form.get_by_role("button", name="Create customer").click()
    page.get_by_role("heading", name=name, exact=True).wait_for()
    created = _found(scene, "customers", email)
    assert created is not None
    removed.append(f"customers/{created['id']}")
    assert created["name"] == name and created["tier_id"] == tier["id"] and created["document_number"] == f"CC{suffix}"
    assert page.locator('dd[data-fact="tier"]').inner_text() == tier["name"]

    edit = page.get_by_role("form", name=f"Edit {name}")
    edit.get_by_label("Phone").fill("+57 300 765 4321")
    edit.get_by_label("Date of birth").fill("1990-05-17")
    edit.get_by_label("Tier").select_option("")
    edit.get_by_role("button", name="Save customer").click()
    page.locator('dd[data-fact="phone"]').filter(has_text="+57 300 765 4321").wait_for()
    stored = call(f"{scene.admin}/customers/{created['id']}")[1]["data"]
    assert stored["phone"] == "+57 300 765 4321" and stored["tier_id"] is None
    assert stored["dob"].startswith("1990-05-17")
    assert stored["email"] == email and stored["name"] == name  # what was not changed stays


def test_a_contact_created_then_edited(watched: Watched, scene: Scene, removed: list[str]) -> None:
    suffix = uuid.uuid4().hex[:6]
    email = f"mateo-{suffix}@democoffee.example"
    page = watched.page
    watched.expect("status of 400")  # the refused e-mail
    sign_in(watched, scene)
    page.goto(scene.dashboard("/customers"))
    page.get_by_role("link", name="Contacts", exact=True).click()
    page.get_by_role("heading", name="Contacts", exact=True).wait_for()
    page.get_by_text("New contact", exact=True).click()
    form = page.get_by_role("form", name="New contact")
    form.get_by_label("First name").fill("Mateo")
    form.get_by_label("Last name").fill(f"Ríos {suffix}")
    form.get_by_label("E-mail").fill("mateo@")
    form.get_by_role("button", name="Create contact").click()
    form.locator('[data-field="email"] .field-error').filter(has_text="must be an e-mail address").wait_for()

    form.get_by_label("E-mail").fill(email)
    form.get_by_role("button", name="Create contact").click()
    created = wait_for("the contact", lambda: _found(scene, "contacts", email))
    removed.append(f"contacts/{created['id']}")
    assert created["first_name"] == "Mateo" and created["last_name"] == f"Ríos {suffix}"
    row = page.locator(f'tr[data-contact="{created["id"]}"]')
    row.wait_for()

    row.get_by_role("button", name=f"Edit Mateo Ríos {suffix}").click()
    edit = page.get_by_role("form", name=f"Edit Mateo Ríos {suffix}")
    edit.get_by_label("City").fill("Medellín")
    edit.get_by_label("Status").select_option("INACTIVE")
    edit.get_by_role("button", name="Save contact").click()
    row.filter(has_text="Inactive").wait_for()
    stored = call(f"{scene.admin}/contacts/{created['id']}")[1]["data"]
    assert stored["city"] == "Medellín" and stored["status"] == "INACTIVE" and stored["email"] == email


def test_customers_read_only_for_a_role_without_the_right(watched: Watched, scene: Scene) -> None:
    status, body = call(f"{scene.base}/api/admin/v1/accounts", "POST", {"name": f"Shop {uuid.uuid4().hex[:6]}"})
    assert status == 201, body
    account = body["data"]["id"]
    admin = f"{scene.base}/api/admin/v1/accounts/{account}"
    status, body = call(f"{admin}/customers", "POST", {"name": "Ana Ruiz", "email": "ana@shop.example"})
    assert status == 201, body
    customer = body["data"]["id"]
    email, password = f"marketer-{uuid.uuid4().hex[:8]}@example.com", "correct horse battery staple 9"
    status, body = call(f"{scene.base}/api/admin/v1/people", "POST", {"email": email, "name": "Max Marketer",
                        "password": password, "account_id": account, "role": "marketer"})
    assert status == 201, body
    page = watched.page
    sign_in_as(watched, scene, email, password)

    page.goto(f"{scene.base}/dashboard/{account}/customers")
    page.get_by_role("heading", name="Customers").wait_for()
    assert page.get_by_text("New customer", exact=True).count() == 0
    page.goto(f"{scene.base}/dashboard/{account}/customers/{customer}")
    page.get_by_role("heading", name="Ana Ruiz", exact=True).wait_for()
    form = page.get_by_role("form", name="Edit Ana Ruiz")
    assert form.get_by_label("E-mail").is_disabled() and form.get_by_label("E-mail").input_value() == "ana@shop.example"
    assert form.get_by_role("button").count() == 0

    page.goto(f"{scene.base}/dashboard/{account}/customers/contacts")
    page.get_by_role("heading", name="Contacts", exact=True).wait_for()
    assert page.get_by_text("New contact", exact=True).count() == 0
