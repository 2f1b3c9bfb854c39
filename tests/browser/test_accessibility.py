"""axe-core on every page of the dashboard, at desktop and phone widths: no serious or critical violation.

axe-core comes from the npm registry, pinned in ``tests/browser/axe/package-lock.json`` (``npm ci --prefix
tests/browser/axe``, which ``.ci/run`` runs); the tests inject it into each page once the page has drawn its
content, so the check sees what a person sees (forms, tables, the errors a form shows).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from tests.browser.conftest import (
    DEMO,
    DEMO_CAMPAIGN,
    DEMO_CUSTOMER,
    DEMO_WEBHOOK,
    DESKTOP,
    PHONE,
    Scene,
    axe_violations,
    open_page,
    sign_in,
    sign_in_as,
)
from tests.browser.servers import call

Ready = Callable[[Any], None]
PASSWORD = "a long passphrase"


def _pages(scene: Scene) -> list[tuple[str, str, Ready]]:
    """Each page's path under the account, what to wait for before checking it."""
    link = scene.showcase
    event = call(f"{scene.admin}/customers/{DEMO_CUSTOMER}/path")[1]["data"][0]["event"]["id"]

    def heading(name: str) -> Ready:
        return lambda page: page.get_by_role("heading", name=name, exact=True).first.wait_for()

    def rows(page: Any) -> None:
        page.locator("tbody tr").first.wait_for()

    def refused(button: str) -> Ready:  # the form sent empty: the API's messages beside the fields
        def ready(page: Any) -> None:
            page.get_by_role("button", name=button).click()
            page.locator(".field-error:not(:empty)").first.wait_for()
        return ready

    def refused_email(summary: str, button: str) -> Ready:  # a folded form opened, a wrong e-mail refused
        def ready(page: Any) -> None:
            page.get_by_text(summary, exact=True).click()
            page.locator('[name="email"]').first.fill("not an address")
            page.get_by_role("button", name=button).click()
            page.locator(".field-error:not(:empty)").first.wait_for()
        return ready

    def refused_conditions(page: Any) -> None:  # a new reward's condition sent empty, its conditions' editor shown
        form = page.get_by_role("form", name="Rewards: reward")
        form.get_by_role("button", name="Add a condition", exact=True).click()
        form.get_by_role("button", name="Add another group (or)").click()
        form.get_by_role("button", name="Create reward").click()
        form.locator('[data-field="conditions[0][0].value"] .field-error:not(:empty)').wait_for()

    status, body = call(f"{scene.admin}/domains", "POST", {"host": "a11y.democoffee.example"})
    assert status in (201, 409), body  # a pending domain: its DNS record is on the page

    return [
        ("links", "/links", rows),
        ("new link", "/links/new", heading("New link")),
        ("new link, refused", "/links/new", refused("Create link")),
        ("import", "/links/import", heading("Import links")),
        ("link", f"/links/{link['id']}", lambda page: page.locator('.device[data-device="ios"]').wait_for()),
        ("clicks", f"/links/{link['id']}/clicks", lambda page: page.locator("svg.chart").wait_for()),
        ("campaigns", "/campaigns", rows),
        ("campaign", f"/campaigns/{DEMO_CAMPAIGN}", lambda page: page.locator('[data-section="attributes"]')
         .wait_for()),
        ("new campaign", "/campaigns/new", heading("New campaign")),
        ("catalog", "/campaigns/catalog", heading("Brands, tiers and rewards")),
        ("catalog, conditions refused", "/campaigns/catalog", refused_conditions),
        ("new campaign, refused", "/campaigns/new", refused("Create campaign")),
        ("reports", "/reports?group_by=campaign", lambda page: page.locator("tfoot tr").wait_for()),
        ("deliveries", f"/deliveries?connection={DEMO_WEBHOOK}", rows),
        ("live", "/live", lambda page: page.locator('.live-state[data-state="live"]').wait_for()),
        ("domains", "/domains", lambda page: page.locator('[data-role="dns"]').first.wait_for()),
        ("link preview", "/link-preview", heading("Link previews")),
        ("customers", "/customers", heading("Customers")),
        ("customer", f"/customers/{DEMO_CUSTOMER}", rows),
        ("new customer, refused", "/customers", refused_email("New customer", "Create customer")),
        ("contacts", "/customers/contacts", heading("Contacts")),
        ("new contact, refused", "/customers/contacts", refused_email("New contact", "Create contact")),
        ("event", f"/events/{event}", lambda page: page.locator('.field-path').first.wait_for()),
        ("connections", "/connections", rows),
        ("new connection", "/connections/new", heading("New connection")),
        ("connection", f"/connections/{DEMO_WEBHOOK}", lambda page: page.locator("main form").first.wait_for()),
        ("api keys", "/api-keys", rows),
        ("event types", "/event-types", heading("Event types")),
        ("members", "/members", heading("Members")),
        ("account", "/account", lambda page: page.get_by_role("form", name="New account").wait_for()),
        ("audit log", "/audit-log", heading("Audit log")),
    ]


@pytest.mark.parametrize(("width", "viewport"), [("desktop", DESKTOP), ("phone", PHONE)])
def test_no_serious_accessibility_violation_on_any_page(browser: Any, scene: Scene, width: str,
                                                        viewport: dict[str, int]) -> None:
    context, watched = open_page(browser, scene, viewport, bypass_csp=True)  # axe-core is injected inline
    page = watched.page
    watched.expect("status of 400")  # the forms sent empty
    found: dict[str, list[str]] = {}
    try:
        page.goto(f"{scene.base}/dashboard")
        page.get_by_label("Email").wait_for()
        found["sign-in"] = axe_violations(page)
        page.get_by_role("button", name="Sign in with the operator token").click()
        page.get_by_label("Operator token").wait_for()
        found["sign-in with the token"] = axe_violations(page)
        sign_in(watched, scene)
        for name, path, ready in _pages(scene):
            page.goto(scene.dashboard(path))
            ready(page)
            found[name] = axe_violations(page)
    finally:
        context.close()
    assert not watched.unexpected(), watched.unexpected()
    failing = {name: lines for name, lines in found.items() if lines}
    assert not failing, "\n".join(f"{name}: {line}" for name, lines in failing.items() for line in lines)


@pytest.mark.parametrize(("width", "viewport"), [("desktop", DESKTOP), ("phone", PHONE)])
def test_no_serious_accessibility_violation_on_a_persons_pages(browser: Any, scene: Scene, width: str,
                                                               viewport: dict[str, int]) -> None:
    """A person's own pages (personal tokens, profile with a second factor being set up) and the page an
    invitation's link opens."""
    email = f"a11y-{width}-{uuid.uuid4().hex[:6]}@democoffee.example"
    status, body = call(f"{scene.base}/api/admin/v1/people", "POST", {
        "email": email, "name": "Ada Access", "password": PASSWORD, "account_id": DEMO, "role": "owner"})
    assert status == 201, body
    status, invited = call(f"{scene.admin}/invitations", "POST", {"email": f"new-{email}", "role": "analyst"})
    assert status == 201, invited
    context, watched = open_page(browser, scene, viewport, bypass_csp=True)
    page = watched.page
    found: dict[str, list[str]] = {}
    try:
        sign_in_as(watched, scene, email, PASSWORD)
        page.goto(scene.dashboard("/tokens"))
        page.get_by_role("heading", name="Personal tokens").wait_for()
        found["tokens"] = axe_violations(page)
        page.goto(scene.dashboard("/profile"))
        page.get_by_role("button", name="Set up a second factor").click()
        page.locator('input[name="otpauth-uri"]').wait_for()
        found["profile"] = axe_violations(page)
        page.get_by_role("button", name="Sign out").click()
        page.get_by_role("heading", name="Sign in").wait_for()
        link = invited["data"]["link"]
        page.goto(scene.base + link[link.index("/dashboard/"):])
        page.get_by_role("heading", name="Accept an invitation").wait_for()
        found["accept an invitation"] = axe_violations(page)
    finally:
        context.close()
    assert not watched.unexpected(), watched.unexpected()
    failing = {name: lines for name, lines in found.items() if lines}
    assert not failing, "\n".join(f"{name}: {line}" for name, lines in failing.items() for line in lines)
