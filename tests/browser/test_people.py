"""People in the dashboard: sign-in with an email and a password (and a second factor), pages and buttons that
follow the role, the Members page (invite, accept in another browser, change a role, reset a password, cancel
an invitation), personal tokens (created, used against the admin API, revoked) and the audit log of it all."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pyotp

from linksvc.redaction import SECRET_MASK
from tests.browser.conftest import DEMO, DESKTOP, Scene, Watched, open_page, sign_in_as, wait_for
from tests.browser.servers import call

PASSWORD = "correct horse battery"

# Every control on the page has a name a screen reader says: its <label>, aria-label(ledby), or its text.
UNLABELLED = """() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea, button')]
  .filter((el) => el.offsetParent !== null)
  .filter((el) => !((el.labels && el.labels.length) || el.getAttribute('aria-label')
    || el.getAttribute('aria-labelledby') || (el.tagName === 'BUTTON' && el.textContent.trim())))
  .map((el) => el.outerHTML.slice(0, 160))"""


def _email(who: str) -> str:
    return f"{who}-{uuid.uuid4().hex[:8]}@example.com"


def _account(scene: Scene, name: str) -> str:
    status, body = call(f"{scene.base}/api/admin/v1/accounts", "POST", {"name": name})
    assert status == 201, body
    return str(body["data"]["id"])


def _person(scene: Scene, account: str, role: str, who: str = "person", name: str = "Pat Example") -> dict[str, Any]:
    email = _email(who)
    status, body = call(f"{scene.base}/api/admin/v1/people", "POST",
                        {"email": email, "name": name, "password": PASSWORD, "account_id": account, "role": role})
    assert status == 201, body
    return {**body["data"], "password": PASSWORD}


def _labelled(watched: Watched) -> None:
    assert watched.page.evaluate(UNLABELLED) == []


def _api(scene: Scene, account: str) -> str:
    return f"{scene.base}/api/admin/v1/accounts/{account}"


def test_email_sign_in_and_a_second_factor_enrolled_on_the_profile(watched: Watched, scene: Scene) -> None:
    page = watched.page
    person = _person(scene, DEMO, "marketer", "factor", "Fay Factor")
    sign_in_as(watched, scene, person["email"], PASSWORD)
    page.get_by_role("link", name="Profile").click()
    page.get_by_role("heading", name="Your profile").wait_for()
    _labelled(watched)
    page.get_by_role("button", name="Set up a second factor").click()
    secret = page.locator('input[name="totp-secret"]').input_value()
    assert page.locator('input[name="otpauth-uri"]').input_value().startswith("otpauth://totp/")
    qr = page.get_by_role("img", name="QR code of the authenticator URI")
    wait_for("the QR code to be drawn", lambda: qr.evaluate("(img) => img.complete && img.naturalWidth > 100"))
    page.get_by_label("Code from the app").fill(pyotp.TOTP(secret).now())
    page.get_by_role("button", name="Confirm").click()
    page.get_by_text("On: sign-in asks for the code").wait_for()

    page.get_by_role("button", name="Sign out").click()
    page.get_by_role("heading", name="Sign in").wait_for()
    # Each step's code counts once: the step after the one confirmed (accepted as well) signs in.
    sign_in_as(watched, scene, person["email"], PASSWORD, code=pyotp.TOTP(secret).at(time.time() + 30))
    status, body = call(f"{scene.base}/api/admin/v1/people/{person['id']}")
    assert status == 200 and body["data"]["totp_enabled"] is True


def test_a_wrong_password_is_said_beside_the_field(watched: Watched, scene: Scene) -> None:
    page = watched.page
    person = _person(scene, DEMO, "analyst", "wrong")
    watched.expect("401")
    page.goto(f"{scene.base}/dashboard")
    page.get_by_label("Email").fill(person["email"])
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.get_by_text("The email or the password is not right.").wait_for()
    _labelled(watched)


def test_an_analyst_sees_no_edit_controls_and_the_owner_does(watched: Watched, scene: Scene) -> None:
    page = watched.page
    account = _account(scene, "Roles shop")
    status, body = call(f"{_api(scene, account)}/links", "POST",
                        {"code": f"roles-{uuid.uuid4().hex[:6]}", "kind": "external",
                         "destination_url": "https://shop.example/roles"})
    assert status == 201, body
    link = body["data"]
    status, body = call(f"{_api(scene, account)}/domains", "POST", {"host": f"r{uuid.uuid4().hex[:6]}.example.com"})
    assert status == 201, body
    analyst = _person(scene, account, "analyst", "analyst", "Ann Analyst")
    owner = _person(scene, account, "owner", "owner", "Otto Owner")

    sign_in_as(watched, scene, analyst["email"], PASSWORD)
    # The switcher holds the person's one account, not the demo's.
    assert page.locator("#account option").all_inner_texts() == ["Roles shop (sandbox)"]
    nav = page.get_by_role("navigation", name="Sections")
    assert nav.get_by_role("link", name="Members").is_visible()
    assert not nav.get_by_role("link", name="Audit log").is_visible()
    page.locator(f'tr[data-code="{link["code"]}"]').wait_for()
    assert page.get_by_role("link", name="New link").count() == 0
    page.goto(f"{scene.base}/dashboard/{account}/links/{link['id']}")
    page.get_by_role("heading", name="Routing rules").wait_for()
    page.get_by_role("heading", name="Link preview").wait_for()
    for name in ("Disable", "Save UTM", "Save rules", "Add a rule", "Save split", "Add a variant", "Save preview"):
        assert page.get_by_role("button", name=name).count() == 0, name
    page.get_by_role("button", name="Copy").wait_for()  # reading tools stay
    page.goto(f"{scene.base}/dashboard/{account}/domains")
    page.locator("tr[data-domain]").wait_for()
    for name in ("Add domain", "Verify", "Delete", "Save patterns"):
        assert page.get_by_role("button", name=name).count() == 0, name
    page.goto(f"{scene.base}/dashboard/{account}/link-preview")
    page.get_by_role("heading", name="Link previews").wait_for()
    assert page.get_by_role("button", name="Save defaults").count() == 0
    page.goto(f"{scene.base}/dashboard/{account}/members")
    page.locator(f'tr[data-email="{owner["email"]}"]').wait_for()
    assert page.get_by_role("button", name="Invite").count() == 0
    assert page.get_by_role("button", name="Remove").count() == 0
    page.goto(f"{scene.base}/dashboard/{account}/links/new")
    page.get_by_role("heading", name="Not for your role").wait_for()
    _labelled(watched)
    page.get_by_role("button", name="Sign out").click()
    page.get_by_role("heading", name="Sign in").wait_for()

    sign_in_as(watched, scene, owner["email"], PASSWORD)
    page.get_by_role("link", name="New link").wait_for()
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Audit log").wait_for()
    page.goto(f"{scene.base}/dashboard/{account}/links/{link['id']}")
    for name in ("Disable", "Save UTM", "Save rules", "Save split", "Save preview"):
        page.get_by_role("button", name=name).wait_for()
    page.goto(f"{scene.base}/dashboard/{account}/members")
    page.get_by_role("button", name="Invite").wait_for()
    _labelled(watched)


def test_a_refused_call_shows_the_api_s_message(watched: Watched, scene: Scene) -> None:
    """A marketer's page is open when the owner makes them an analyst: the Disable button's call is refused
    by the API, and the page says the API's words."""
    page = watched.page
    account = _account(scene, "Refusals shop")
    status, body = call(f"{_api(scene, account)}/links", "POST",
                        {"code": f"refused-{uuid.uuid4().hex[:6]}", "kind": "external",
                         "destination_url": "https://shop.example/refused"})
    assert status == 201, body
    link = body["data"]
    marketer = _person(scene, account, "marketer", "marketer")
    sign_in_as(watched, scene, marketer["email"], PASSWORD)
    page.goto(f"{scene.base}/dashboard/{account}/links/{link['id']}")
    page.get_by_role("button", name="Disable").wait_for()
    status, body = call(f"{_api(scene, account)}/members/{marketer['id']}", "PATCH", {"role": "analyst"})
    assert status == 200, body
    watched.expect("403")
    page.get_by_role("button", name="Disable").click()
    page.locator("#toast").filter(has_text="the role analyst may not do this").wait_for()
    assert call(f"{_api(scene, account)}/links/{link['id']}")[1]["data"]["disabled"] is False


def test_members_invite_accept_elsewhere_change_role_reset_and_cancel(watched: Watched, scene: Scene,
                                                                     browser: Any) -> None:
    page = watched.page
    page.on("dialog", lambda dialog: dialog.accept())
    account = _account(scene, "Members shop")
    owner = _person(scene, account, "owner", "boss", "Bea Boss")
    sign_in_as(watched, scene, owner["email"], PASSWORD)
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Members").click()
    page.get_by_role("heading", name="Members").wait_for()
    _labelled(watched)

    invited = _email("newcomer")
    form = page.get_by_role("form", name="Invite a person")
    form.get_by_label("Email").fill(invited)
    form.get_by_label("Role").select_option("marketer")
    form.get_by_role("button", name="Invite").click()
    link = page.locator('input[name="one-time-link"]')
    link.wait_for()
    url = link.input_value()
    assert "/dashboard/accept-invitation#token=" in url
    page.get_by_text(f"No letter was sent: no mail server is configured (LINKSVC_SMTP_URL). Pass the link on to "
                     f"{invited} yourself.").wait_for()
    page.locator(f'tr[data-email="{invited}"][data-status="pending"]').wait_for()

    # The invited person opens the link in a browser of their own, sets a name and a password, and is in.
    context, other = open_page(browser, scene, DESKTOP)
    try:
        other.page.goto(url.replace(url.split("/dashboard/")[0], scene.base))
        other.page.get_by_role("heading", name="Accept an invitation").wait_for()
        _labelled(other)
        other.page.get_by_label("Your name").fill("Nia Newcomer")
        other.page.get_by_label("Choose a password").fill(PASSWORD)
        other.page.get_by_role("button", name="Accept and sign in").click()
        other.page.get_by_role("heading", name="Links", exact=True).wait_for()
        assert other.page.locator("#account option").all_inner_texts() == ["Members shop (sandbox)"]
        assert "#token" not in other.page.url
        assert not other.unexpected(), other.unexpected()
    finally:
        context.close()

    page.reload()
    row = page.locator(f'tr[data-email="{invited}"]').first
    row.get_by_label(f"Role of {invited}").wait_for()
    assert row.get_by_label(f"Role of {invited}").input_value() == "marketer"
    row.get_by_label(f"Role of {invited}").select_option("analyst")
    wait_for("the new role", lambda: any(m["email"] == invited and m["role"] == "analyst"
                                         for m in call(f"{_api(scene, account)}/members")[1]["data"]))

    # A password-reset link for the member, used in another browser.
    page.get_by_role("button", name=f"Password reset link for {invited}").click()
    reset = page.locator('input[name="one-time-link"]')
    wait_for("the reset link", lambda: "/dashboard/reset-password#token=" in reset.input_value())
    reset_url = reset.input_value()
    context, other = open_page(browser, scene, DESKTOP)
    try:
        other.page.goto(reset_url.replace(reset_url.split("/dashboard/")[0], scene.base))
        other.page.get_by_role("heading", name="Set a new password").wait_for()
        _labelled(other)
        other.page.get_by_label("Your email").fill(invited)
        other.page.get_by_label("New password").fill("another long password")
        other.page.get_by_role("button", name="Set password and sign in").click()
        other.page.get_by_role("heading", name="Links", exact=True).wait_for()
        assert not other.unexpected(), other.unexpected()
    finally:
        context.close()

    # A second invitation, cancelled.
    cancelled = _email("never")
    form.get_by_label("Email").fill(cancelled)
    form.get_by_role("button", name="Invite").click()
    page.get_by_role("button", name=f"Cancel the invitation of {cancelled}").click()
    wait_for("the cancelled invitation", lambda: not any(
        i["email"] == cancelled and i["status"] == "pending"
        for i in call(f"{_api(scene, account)}/invitations")[1]["data"]))

    # Ownership goes to the newcomer; the old owner is an admin and no longer manages members.
    page.get_by_role("button", name=f"Make {invited} the owner").click()
    wait_for("the transfer", lambda: {m["email"]: m["role"] for m in call(f"{_api(scene, account)}/members")[1]["data"]}
             == {invited: "owner", owner["email"]: "admin"})
    page.get_by_role("heading", name="Members").wait_for()
    wait_for("the invite form to go", lambda: page.get_by_role("button", name="Invite").count() == 0)


def test_a_personal_token_is_shown_once_works_and_is_revoked(watched: Watched, scene: Scene) -> None:
    page = watched.page
    page.on("dialog", lambda dialog: dialog.accept())
    account = _account(scene, "Tokens shop")
    developer = _person(scene, account, "developer", "dev", "Dev Eloper")
    sign_in_as(watched, scene, developer["email"], PASSWORD)
    page.get_by_role("link", name="Tokens").click()
    page.get_by_role("heading", name="Personal tokens").wait_for()
    _labelled(watched)
    form = page.get_by_role("form", name="Create a personal access token")
    # A developer's token may be a developer's or an analyst's, never a marketer's or an owner's.
    assert sorted(form.get_by_label("Role").locator("option").all_inner_texts()) == ["analyst", "developer"]
    form.get_by_label("Name").fill("ci deploys")
    form.get_by_label("Role").select_option("analyst")
    form.get_by_label("Expires in (days)").fill("7")
    form.get_by_role("button", name="Create token").click()
    shown = page.locator('input[name="new-token"]')
    shown.wait_for()
    token = shown.input_value()
    row = page.locator('tr[data-name="ci deploys"]')
    row.wait_for()
    assert "never" in row.inner_text() and "analyst" in row.inner_text()

    # The token works against the admin API, as an analyst of its one account.
    status, _ = call(f"{_api(scene, account)}/links", token=token)
    assert status == 200
    status, _ = call(f"{_api(scene, account)}/links", "POST", {"code": "nope", "kind": "external",
                                                                "destination_url": "https://shop.example/"},
                     token=token)
    assert status == 403
    assert call(f"{_api(scene, DEMO)}/links", token=token)[0] == 404
    page.reload()
    row.wait_for()
    assert "never" not in row.inner_text()  # its last use is listed
    assert page.locator('input[name="new-token"]').count() == 0  # shown once

    row.get_by_role("button", name="Revoke ci deploys").click()
    page.locator('tr[data-name="ci deploys"][data-status="revoked"]').wait_for()
    assert call(f"{_api(scene, account)}/links", token=token)[0] == 401


def test_the_audit_log_shows_the_changes_made_here(watched: Watched, scene: Scene) -> None:
    page = watched.page
    account = _account(scene, "Audit shop")
    owner = _person(scene, account, "owner", "auditor", "Aud Itor")
    sign_in_as(watched, scene, owner["email"], PASSWORD)
    # A change in the dashboard (an invitation) and one through the API with the owner's token.
    page.goto(f"{scene.base}/dashboard/{account}/members")
    invited = _email("audited")
    form = page.get_by_role("form", name="Invite a person")
    form.get_by_label("Email").fill(invited)
    form.get_by_role("button", name="Invite").click()
    page.locator('input[name="one-time-link"]').wait_for()
    page.goto(f"{scene.base}/dashboard/{account}/tokens")
    token_form = page.get_by_role("form", name="Create a personal access token")
    token_form.get_by_label("Name").fill("audit script")
    token_form.get_by_role("button", name="Create token").click()
    token = page.locator('input[name="new-token"]')
    token.wait_for()
    secret = "whsec_" + uuid.uuid4().hex
    status, body = call(f"{_api(scene, account)}/connections", "POST", {
        "name": "Audited hook", "destination": "webhook", "event_types": ["PURCHASE"],
        "config": {"endpoint_url": "http://127.0.0.1:9/hooks", "secret": secret}}, token=token.input_value())
    assert status == 201, body

    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Audit log").click()
    page.get_by_role("heading", name="Audit log").wait_for()
    _labelled(watched)
    rows = page.locator("tbody tr")
    rows.first.wait_for()
    # Newest first: the connection, then the invitation.
    assert rows.nth(0).get_attribute("data-kind") == "connections"
    assert rows.nth(0).get_attribute("data-action") == "create"
    assert "Audited hook" in rows.nth(0).inner_text()
    assert "(token " in rows.nth(0).inner_text() and "Aud Itor" in rows.nth(0).inner_text()
    assert SECRET_MASK in rows.nth(0).inner_text() and secret not in page.content()
    page.locator("tbody tr", has_text=invited).wait_for()

    # Filters: the operator made the owner (the password masked); the owner's connections are the token's one.
    filters = page.get_by_role("form", name="Filters")
    filters.get_by_label("Who").select_option("operator")
    filters.get_by_role("button", name="Filter").click()
    kinds = lambda: page.eval_on_selector_all("tbody tr", "rows => rows.map((r) => r.dataset.kind)")  # noqa: E731
    wait_for("the operator's entry", lambda: kinds() == ["people"])
    assert PASSWORD not in page.content()
    filters.get_by_label("Who").select_option(owner["id"])
    filters.get_by_label("Object kind").fill("connections")
    filters.get_by_role("button", name="Filter").click()
    wait_for("the connection's entry", lambda: kinds() == ["connections"])
    filters.get_by_label("Object kind").fill("domains")
    filters.get_by_role("button", name="Filter").click()
    page.get_by_text("No entry matches.").wait_for()


def test_a_person_of_another_account_joins_with_their_own_password(watched: Watched, scene: Scene) -> None:
    """Invited to a second account, a person who signs in here already gives their own password (a wrong one is
    said beside the field); the switcher then holds both accounts, with the role of each."""
    page = watched.page
    first, second = _account(scene, "First shop"), _account(scene, "Second shop")
    person = _person(scene, first, "marketer", "twice", "Tom Twice")
    status, body = call(f"{_api(scene, second)}/invitations", "POST", {"email": person["email"], "role": "analyst"})
    assert status == 201, body
    link = body["data"]["link"]
    page.goto(link.replace(link.split("/dashboard/")[0], scene.base))
    page.get_by_role("heading", name="Accept an invitation").wait_for()
    watched.expect("401")
    page.get_by_label("Choose a password").fill("not my password at all")
    page.get_by_role("button", name="Accept and sign in").click()
    page.get_by_text("has an account here: send its password to join").wait_for()
    page.get_by_label("Choose a password").fill(PASSWORD)
    page.get_by_role("button", name="Accept and sign in").click()
    page.get_by_role("heading", name="Links", exact=True).wait_for()
    assert page.locator("#account option").all_inner_texts() == ["First shop (sandbox)", "Second shop (sandbox)"]
    assert page.locator("#account").input_value() == second
    assert page.get_by_role("link", name="New link").count() == 0  # an analyst there
    page.locator("#account").select_option(first)
    page.get_by_role("link", name="New link").wait_for()  # a marketer here


# What each role may do, as issue 35 words it (not read from the code): links (their UTM, rules, split, preview)
# for owner, admin and marketer; domains for owner and admin; members for the owner; the audit log for owner and
# admin; a personal token for everyone.
ROLES = {
    "owner": {"links": True, "domains": True, "members": True, "audit": True},
    "admin": {"links": True, "domains": True, "members": False, "audit": True},
    "marketer": {"links": True, "domains": False, "members": False, "audit": False},
    "analyst": {"links": False, "domains": False, "members": False, "audit": False},
    "developer": {"links": False, "domains": False, "members": False, "audit": False},
}


def test_each_role_signs_in_and_works_as_its_role(browser: Any, scene: Scene) -> None:
    """Invited by the owner, each role accepts, signs in, and finds the controls its role allows; where the role
    may change a link it saves one (the change is stored and in the audit log under its name), and every role
    makes itself a personal token."""
    account = _account(scene, "Every role")
    owner = _person(scene, account, "owner", "owner", "Olive Owner")
    status, body = call(f"{_api(scene, account)}/links", "POST", {"code": f"each-{uuid.uuid4().hex[:6]}",
                                                                    "kind": "external",
                                                                    "destination_url": "https://shop.example/each"})
    assert status == 201, body
    link = body["data"]
    stored = f"{_api(scene, account)}/links/{link['id']}"
    for role, may in ROLES.items():
        who = owner if role == "owner" else None
        context, watched = open_page(browser, scene, DESKTOP)
        try:
            page = watched.page
            if who is None:  # the owner invites through the API as the dashboard does; the person accepts
                email = _email(role)
                status, body = call(f"{_api(scene, account)}/invitations", "POST", {"email": email, "role": role})
                assert status == 201, body
                page.goto(body["data"]["link"].replace(body["data"]["link"].split("/dashboard/")[0], scene.base))
                page.get_by_label("Your name").fill(f"{role.title()} Person")
                page.get_by_label("Choose a password").fill(PASSWORD)
                page.get_by_role("button", name="Accept and sign in").click()
                page.get_by_role("navigation", name="Sections").wait_for()
            else:
                sign_in_as(watched, scene, owner["email"], PASSWORD)
            nav = page.get_by_role("navigation", name="Sections")
            assert nav.get_by_role("link", name="Audit log").is_visible() is may["audit"], role
            page.goto(f"{scene.base}/dashboard/{account}/links/{link['id']}")
            page.get_by_role("heading", name="Routing rules").wait_for()
            assert (page.get_by_role("button", name="Save UTM").count() == 1) is may["links"], role
            if may["links"]:
                page.get_by_label("utm_campaign").fill(f"by-{role}")
                page.get_by_role("button", name="Save UTM").click()
                wait_for(f"the {role}'s UTM stored",
                         lambda r=role: f"utm_campaign=by-{r}" in call(stored)[1]["data"]["destination_url"])
            page.goto(f"{scene.base}/dashboard/{account}/domains")
            page.get_by_role("heading", name="Domains").wait_for()
            assert (page.get_by_role("button", name="Add domain").count() == 1) is may["domains"], role
            page.goto(f"{scene.base}/dashboard/{account}/members")
            page.locator(f'tr[data-email="{owner["email"]}"]').wait_for()
            assert (page.get_by_role("button", name="Invite").count() == 1) is may["members"], role
            page.goto(f"{scene.base}/dashboard/{account}/tokens")
            page.get_by_role("heading", name="Personal tokens").wait_for()
            form = page.get_by_role("form", name="Create a personal access token")
            form.get_by_label("Name").fill(f"{role} script")
            form.get_by_role("button", name="Create token").click()
            page.locator('input[name="new-token"]').wait_for()
            _labelled(watched)
            assert watched.unexpected() == [], role
        finally:
            context.close()
    status, body = call(f"{_api(scene, account)}/audit-log?action=update-utm")
    assert status == 200, body
    assert sorted(e["fields"].get("utm_campaign", "") for e in body["data"]) == ["by-admin", "by-marketer", "by-owner"]
