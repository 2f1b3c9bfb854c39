"""Where a link leads, edited on its page: code, destination, deeplink and apps, the API's messages beside the
fields, the preview following the form; and a deeplink without apps of its own previewed as the account's apps
open it (the service's answer, through the preview endpoint)."""

from __future__ import annotations

import uuid

from tests.browser.conftest import DEMO_CAMPAIGN, USER_AGENTS, Scene, Watched, sign_in, wait_for
from tests.browser.servers import call


def test_edit_where_a_link_leads_with_the_apis_messages(watched: Watched, scene: Scene) -> None:
    code = f"edit-{uuid.uuid4().hex[:6]}"
    status, body = call(f"{scene.admin}/links", "POST", {"code": code, "kind": "external",
                                                          "destination_url": "https://democoffee.example.com/a"})
    assert status == 201, body
    link = body["data"]
    page = watched.page
    watched.expect("status of 400")  # the refused App Store id, from the preview and the save
    sign_in(watched, scene)
    page.goto(scene.dashboard(f"/links/{link['id']}"))
    form = page.get_by_role("form", name="Where the link leads")
    android = page.locator('.device[data-device="android"]')
    android.locator(".answer").filter(has_text="Redirects to the destination").wait_for()

    # A wrong App Store id: the API's message beside the field, nothing saved.
    form.get_by_label("App Store id").fill("not-a-number")
    form.get_by_role("button", name="Save where it leads").click()
    error = form.locator('[data-field="ios.app_store_id"] .field-error')
    error.filter(has_text="pattern").wait_for()
    assert call(f"{scene.admin}/links/{link['id']}")[1]["data"].get("ios") is None

    renamed = f"{code}-new"
    form.get_by_label("Code").fill(renamed)
    form.get_by_label("Destination URL").fill("https://democoffee.example.com/b?x=1#top")
    form.get_by_label("Deeplink").fill("democoffee://b")
    form.get_by_label("Android package").fill("com.democoffee.app")
    form.get_by_label("App Store id").fill("1234567890")
    form.get_by_label("Kind").select_option("email")
    form.get_by_label("Campaign").select_option(DEMO_CAMPAIGN)
    android.locator(".answer").filter(has_text="Opens the app").wait_for()  # the preview follows the form
    page.locator('[data-default-for="utm_medium"]').filter(has_text="default: email").wait_for()
    form.get_by_role("button", name="Save where it leads").click()
    page.get_by_role("heading", name=renamed, exact=True).wait_for()
    stored = call(f"{scene.admin}/links/{link['id']}")[1]["data"]
    assert (stored["code"], stored["destination_url"], stored["deeplink"]) == (
        renamed, "https://democoffee.example.com/b?x=1#top", "democoffee://b")
    assert stored["android"]["package"] == "com.democoffee.app" and stored["ios"]["app_store_id"] == "1234567890"
    assert (stored["kind"], stored["campaign_id"]) == ("email", DEMO_CAMPAIGN)
    campaign = call(f"{scene.admin}/campaigns/{DEMO_CAMPAIGN}")[1]["data"]["name"]
    page.locator(".facts dd").filter(has_text=campaign).first.wait_for()
    assert page.locator('input[name="short_url"]').input_value().endswith(f"/{renamed}")
    status, _ = call(f"{scene.base}/{renamed}", headers={"User-Agent": USER_AGENTS["android"]}, token=None)
    assert status == 302

    # Apps removed: the link goes to the web again.
    form.get_by_label("Android package").fill("")
    form.get_by_label("App Store id").fill("")
    form.get_by_role("button", name="Save where it leads").click()
    android.locator(".answer").filter(has_text="Redirects to the destination").wait_for()
    wait_for("the apps removed", lambda: call(f"{scene.admin}/links/{link['id']}")[1]["data"]["ios"] is None)
    assert call(f"{scene.admin}/links/{link['id']}")[1]["data"]["android"] is None


def test_a_deeplink_without_apps_previews_the_accounts_app(watched: Watched, scene: Scene) -> None:
    """The demo's punch-card link names a deeplink and no app; the demo's other links name its iPhone app (team
    and bundle ids), which the shared host's association file lists: an iPhone with the app opens it there."""
    punch = next(item for item in call(f"{scene.admin}/links/overview?q=punch-card")[1]["data"]
                 if item["code"] == "punch-card")
    page = watched.page
    sign_in(watched, scene)
    page.goto(scene.dashboard(f"/links/{punch['id']}"))
    ios = page.locator('.device[data-device="ios"]')
    app = ios.locator(".app-answer")
    app.filter(has_text="With the app installed: opens ABCDE12345.com.democoffee.app at the deeplink").wait_for()
    assert app.locator(".location").inner_text().startswith("democoffee://rewards/punch-card?")
    ios.locator(".answer").filter(has_text="Without the app: Redirects to the destination").wait_for()
    # Android: the app is known, but without its certificate's fingerprints no association file lists it.
    page.locator('.device[data-device="android"] .why').filter(has_text="com.democoffee.app is known").wait_for()
    assert page.locator('.device[data-device="android"] .app-answer').count() == 0
