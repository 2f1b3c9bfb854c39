"""The dashboard as a marketer uses it, in headless Chromium against the real service."""

from __future__ import annotations

import datetime
import re
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from tests.browser.conftest import DEMO, DEMO_CAMPAIGN, DEMO_META, DEMO_WEBHOOK, Scene, Watched, sign_in, wait_for
from tests.browser.servers import call


def _stored_destination(scene: Scene, link_id: str) -> str:
    status, body = call(f"{scene.admin}/links/{link_id}")
    assert status == 200, body
    return str(body["data"]["destination_url"])


def _show_connection(watched: Watched, connection_id: str) -> None:
    """Picks a connection on the Deliveries page and waits for that connection's page: the choice draws it anew,
    and until then the previous connection's rows, forms and buttons are still on the screen (its delivered
    rows would satisfy a wait, and its Send again would replay the previous connection)."""
    watched.page.get_by_label("Connection").select_option(connection_id)
    watched.page.locator(f'#main:not([aria-busy]) a[href$="/connections/{connection_id}"]',
                         has_text="Edit this connection").wait_for()


def _desktop_preview(watched: Watched) -> str:
    return str(watched.page.locator('.device[data-device="desktop"] .location').inner_text())


def test_create_edit_follow_and_count_a_link(watched: Watched, scene: Scene, tmp_path: Path) -> None:
    page = watched.page
    sign_in(watched, scene)
    page.get_by_label("Account").select_option(label="Demo Coffee Co. (production)")
    assert page.url.endswith(f"/dashboard/{DEMO}/links")

    # Create an email link whose destination has other parameters and a fragment, with UTM from the builder.
    page.get_by_role("link", name="New link").click()
    page.get_by_label("Kind").select_option("email")
    page.get_by_label("Code").fill("latte-launch")
    landing = f"{scene.landing.base}/landing?x=1&y=2#frag"
    page.get_by_label("Destination URL").fill(landing)
    page.locator('[data-default-for="utm_medium"]').filter(has_text="default: email").wait_for()
    assert page.locator('[data-default-for="utm_source"]').inner_text() == "default: linksvc"
    for label, value in (("utm_source", "newsletter"), ("utm_medium", "email"), ("utm_campaign", "spring"),
                         ("utm_term", "latte"), ("utm_content", "hero")):
        page.get_by_label(label, exact=True).fill(value)
    page.locator('.device[data-device="desktop"] .location').filter(has_text="utm_content=hero").wait_for()
    assert _desktop_preview(watched).endswith("#frag")
    why = page.locator('.device[data-device="desktop"] .why')
    assert why.locator('[data-step="route"]').inner_text() == "desktop and unknown platforms get the destination"
    assert "utm_content=hero (from the link's destination)" in why.inner_text()
    page.get_by_role("button", name="Create link").click()
    page.get_by_role("heading", name="latte-launch").wait_for()
    link_id = page.url.rsplit("/", 1)[1]
    assert _stored_destination(scene, link_id) == (
        f"{scene.landing.base}/landing?x=1&y=2&utm_source=newsletter&utm_medium=email&utm_campaign=spring"
        "&utm_term=latte&utm_content=hero#frag")

    # Edit its UTM: change the source, clear the term. Only utm_* change; x, y, their order and #frag stay.
    assert page.get_by_label("utm_source", exact=True).input_value() == "newsletter"
    page.get_by_label("utm_source", exact=True).fill("instagram")
    page.get_by_label("utm_term", exact=True).fill("")
    preview = page.locator('.device[data-device="desktop"] .location').filter(has_text="utm_source=instagram")
    preview.wait_for()
    assert "utm_term" not in preview.inner_text()
    page.get_by_role("button", name="Save UTM").click()
    page.get_by_role("status").filter(has_text="UTM saved.").wait_for()
    stored = _stored_destination(scene, link_id)
    assert stored == (f"{scene.landing.base}/landing?x=1&y=2&utm_source=instagram&utm_medium=email"
                      "&utm_campaign=spring&utm_content=hero#frag")
    expected_location = _desktop_preview(watched)

    # The copy button puts the short link on the clipboard.
    short_url = f"{scene.base}/latte-launch"
    assert page.get_by_label("Short link").input_value() == short_url
    page.get_by_role("button", name="Copy").click()
    page.get_by_role("status").filter(has_text="Short link copied.").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == short_url

    # The QR code downloads as SVG and as PNG.
    for label, magic in (("Download SVG", b"<svg"), ("Download PNG", b"\x89PNG")):
        with page.expect_download() as download:
            page.get_by_role("button", name=label).click()
        saved = tmp_path / download.value.suggested_filename
        download.value.save_as(saved)
        assert saved.name.startswith("latte-launch.") and saved.read_bytes().startswith(magic)

    # Disabled, the short link answers 410; enabled again, it redirects.
    page.get_by_role("button", name="Disable").click()
    page.locator(".badge", has_text="Disabled").wait_for()
    assert call(short_url, token=None)[0] == 410
    page.get_by_role("button", name="Enable").click()
    page.locator(".badge", has_text="Active").wait_for()

    # Follow the short link as a desktop browser: the landing page gets the UTM and a tracking id.
    page.goto(short_url)
    page.get_by_role("heading", name="Landing page").wait_for()
    assert page.url.endswith("#frag")
    received = [r for r in scene.landing.requests if r["path"].startswith("/landing")]
    assert len(received) == 1
    query = parse_qsl(urlsplit(received[0]["path"]).query)
    tracking_id = dict(query)["tracking_id"]
    assert re.fullmatch(r"[0-9a-f]{32}", tracking_id)
    assert query == [("x", "1"), ("y", "2"), ("utm_source", "instagram"), ("utm_medium", "email"),
                     ("utm_campaign", "spring"), ("utm_content", "hero"), ("tracking_id", tracking_id)]
    # ...exactly where the preview said the click would go.
    assert page.url == expected_location.replace("‹click id›", tracking_id)

    # The click is in today's bar of the chart, as a human click from a desktop with utm_source instagram.
    page.goto(scene.dashboard(f"/links/{link_id}"))
    page.get_by_role("link", name="Clicks", exact=True).click()
    page.get_by_role("heading", name="Clicks of latte-launch").wait_for()
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    bar = page.locator(f'svg.chart g.day[data-date="{today}"]')
    assert (bar.get_attribute("data-human"), bar.get_attribute("data-bot")) == ("1", "0")
    assert float(bar.locator("rect.human").get_attribute("height") or 0) > 0
    assert page.locator('[data-total="human"]').inner_text() == "1"
    assert page.get_by_role("row", name="Desktop 1 0").count() == 1
    assert page.get_by_role("row", name="instagram 1 0").count() == 1

    # The list shows it with its click of the last 7 days, and finds it by a piece of its destination.
    page.get_by_role("link", name="Links", exact=True).first.click()
    page.get_by_label("Search links").fill("LANDING?X=1")
    page.locator('tr[data-code="welcome"]').wait_for(state="detached")
    row = page.locator('tr[data-code="latte-launch"]')
    assert page.locator("tbody tr").count() == 1
    assert row.locator('td[data-label="Clicks (7 days)"]').inner_text() == "1"


def test_a_bad_destination_is_shown_beside_its_field(watched: Watched, scene: Scene) -> None:
    watched.expect(r"status of (400|409)")  # the service's answers to the bad URL and the taken code
    page = watched.page
    sign_in(watched, scene)
    before = call(f"{scene.admin}/links")[1]["count"]
    page.goto(scene.dashboard("/links/new"))
    destination = page.get_by_label("Destination URL")
    destination.fill("not-a-url")
    page.get_by_label("Deeplink").focus()  # leaving the field shows its error while typing elsewhere
    error = page.locator('[data-field="destination_url"] .field-error')
    error.filter(has_text="https").wait_for()
    assert destination.get_attribute("aria-invalid") == "true"
    assert error.get_attribute("id") in (destination.get_attribute("aria-describedby") or "")
    page.get_by_role("button", name="Create link").click()
    error.filter(has_text="must be an https URL with a host").wait_for()
    assert page.evaluate("document.activeElement.name") == "destination_url"
    assert call(f"{scene.admin}/links")[1]["count"] == before
    destination.fill("https://democoffee.example.com/ok")
    page.locator('.device[data-device="desktop"]').wait_for()
    assert error.inner_text() == "" and destination.get_attribute("aria-invalid") is None

    # A code another link has: the create call's error stands beside the code, also after the preview runs.
    page.get_by_label("Code").fill("welcome")
    page.get_by_role("button", name="Create link").click()
    code_error = page.locator('[data-field="code"] .field-error')
    code_error.filter(has_text="another link has this code").wait_for()
    page.get_by_label("utm_source").fill("x")
    page.locator('.device[data-device="desktop"] .location').filter(has_text="utm_source=x").wait_for()
    assert code_error.inner_text() == "another link has this code"
    assert call(f"{scene.admin}/links")[1]["count"] == before


FOCUSED_NAME = """(() => {
  const el = document.activeElement;
  const text = ['INPUT', 'SELECT', 'TEXTAREA'].includes(el.tagName)
    ? (el.labels && el.labels[0] ? el.labels[0].innerText : el.getAttribute('aria-label'))
    : (el.getAttribute('aria-label') || el.innerText);
  return (text || '').trim();
})()"""


def _tab_to(watched: Watched, name: str, presses: int = 80) -> None:
    """Press Tab until the focused element has this accessible text (a page of links has two stops a row: its
    checkbox and its code)."""
    page = watched.page
    for _ in range(presses):
        page.keyboard.press("Tab")
        focused = page.evaluate(FOCUSED_NAME)
        if focused == name:
            return
    raise AssertionError(f"Tab never reached {name!r}")


def test_the_main_actions_are_reached_with_the_keyboard(watched: Watched, scene: Scene) -> None:
    page = watched.page
    sign_in(watched, scene)
    page.goto(scene.dashboard("/links"))
    page.get_by_role("heading", name="Links", exact=True).wait_for()
    for name in ("Skip to content", "Campaigns", "Deliveries", "Account", "Sign out", "New link", "Search links",
                 "spring-menu"):
        _tab_to(watched, name)
    page.keyboard.press("Enter")
    page.get_by_role("heading", name="spring-menu").wait_for()
    for name in ("Copy", "Clicks", "Disable", "Download SVG", "Download PNG", "utm_source", "Save UTM"):
        _tab_to(watched, name)
    page.goto(scene.dashboard("/links"))
    page.get_by_role("heading", name="Links", exact=True).wait_for()
    _tab_to(watched, "New link")
    page.keyboard.press("Enter")
    page.get_by_role("heading", name="New link").wait_for()
    for name in ("Kind", "Destination URL", "utm_source", "Create link"):
        _tab_to(watched, name)


def test_deliveries_show_their_states_and_a_dead_one_is_retried(watched: Watched, scene: Scene) -> None:
    page = watched.page
    sign_in(watched, scene)
    page.get_by_role("link", name="Deliveries").click()
    page.get_by_role("heading", name="Deliveries").wait_for()

    _show_connection(watched, scene.connections["GA4 web stream (local)"])
    filtered = page.locator('tr[data-state="filtered"]')
    filtered.first.wait_for()
    assert "no analytics identity" in filtered.first.inner_text()
    # The connection's choice of event types, and its filtered deliveries counted by reason.
    summary = page.get_by_label("Forwarding summary")
    assert summary.locator('[data-fact="event-types"]').inner_text() == "PURCHASE"
    reasons = summary.locator('[data-fact="filtered"] li').all_inner_texts()
    assert reasons and any("no analytics identity" in reason for reason in reasons), reasons

    _show_connection(watched, scene.connections["Order webhook (local)"])
    page.locator('tr[data-state="delivered"]').first.wait_for()
    assert page.locator('tr[data-state="delivered"] button').count() == 0

    _show_connection(watched, scene.connections["Broken webhook"])
    dead = page.locator('tr[data-state="dead"]')
    dead.first.wait_for()
    delivery_id = dead.first.get_attribute("data-delivery")
    status, before = call(f"{scene.admin}/connections/{scene.connections['Broken webhook']}/deliveries")
    tries = next(d["tries"] for d in before["data"] if d["id"] == delivery_id)
    page.get_by_label("State").select_option("dead")
    page.locator(f'tr[data-delivery="{delivery_id}"]').get_by_role("button", name="Retry").click()
    page.get_by_role("status").filter(has_text="Delivery queued again").wait_for()
    # The row now reads pending, or dead again if the dispatcher already tried it (it is due at once): what tells
    # the retry happened is its tries, below.
    assert page.locator(f'tr[data-delivery="{delivery_id}"]').get_attribute("data-state") in {"pending", "dead"}

    def tried_again() -> bool:
        answer = call(f"{scene.admin}/connections/{scene.connections['Broken webhook']}/deliveries")[1]["data"]
        return any(d["id"] == delivery_id and d["tries"] == tries + 1 and d["state"] == "dead" for d in answer)

    wait_for("the retried delivery to be sent again", tried_again)


def test_a_connection_is_sent_a_range_again_and_shows_the_replay(watched: Watched, scene: Scene) -> None:
    page = watched.page
    sign_in(watched, scene)
    page.get_by_role("link", name="Deliveries").click()
    page.get_by_role("heading", name="Deliveries").wait_for()
    _show_connection(watched, scene.connections["Order webhook (local)"])
    page.locator('tr[data-state="delivered"]').first.wait_for()
    # The form's range is the last day, which holds the scene's events: sent again, and counted as such.
    page.get_by_role("button", name="Send again").click()
    page.get_by_role("status").filter(has_text="Replay of").wait_for()
    done = page.locator('tr[data-replay][data-state="done"]')
    done.wait_for(timeout=90_000)  # the dispatcher's turns, which a loaded machine (the suite beside) stretches
    assert re.search(r"100%: (\d+) of \1 events; [1-9]\d* sent", done.inner_text()), done.inner_text()
    # A range that is not one is refused beside its field.
    watched.expect(r"status of 400")
    page.get_by_label("To", exact=True).fill("2020-01-01T00:00")
    page.get_by_role("button", name="Send again").click()
    page.locator('[data-field="to"] .field-error').filter(has_text="later than from").wait_for()


def test_campaigns_filter_show_the_detail_with_its_form_and_follow_the_account(watched: Watched, scene: Scene) -> None:
    page = watched.page
    sign_in(watched, scene)
    page.get_by_role("link", name="Campaigns").click()
    page.get_by_role("heading", name="Campaigns").wait_for()
    page.get_by_label("Brand").select_option(label="Bean & Leaf Tea Bar")
    page.locator('tr:has-text("Earn 1 point per dollar")').wait_for(state="detached")
    assert sorted(page.locator("tbody tr td:first-child").all_inner_texts()) == [
        "Tea lovers: bring a friend", "Tea points per dollar", "Tea punch card: 6th tea free"]
    page.get_by_label("Brand").select_option("")
    page.get_by_label("Status").select_option("SCHEDULED")
    page.get_by_label("Type").select_option("SCORE_STREAKS")
    page.locator('tr:has-text("Five-day coffee streak")').wait_for(state="detached")
    assert page.locator("tbody tr td:first-child").all_inner_texts() == ["Holiday streak 2099 (draft)"]
    assert "status=SCHEDULED" in page.url and "type=SCORE_STREAKS" in page.url
    page.get_by_role("link", name="Holiday streak 2099 (draft)").click()
    page.get_by_role("heading", name="Holiday streak 2099 (draft)").wait_for()
    assert page.locator(".title-row .badge").inner_text() == "Scheduled"
    form = page.get_by_role("form", name="Edit Holiday streak 2099 (draft)")
    assert form.get_by_label("Name").input_value() == "Holiday streak 2099 (draft)"
    assert form.get_by_label("Type", exact=True).input_value() == "SCORE_STREAKS"

    page.get_by_label("Account").select_option(label="Sandbox Bakery (sandbox)")
    page.get_by_role("heading", name="Campaigns").wait_for()
    page.get_by_role("link", name="Earn crumbs on every loaf").wait_for()
    page.get_by_role("link", name="Links", exact=True).first.click()
    page.locator('tr[data-code="sandbox-bread"]').wait_for()
    assert page.locator("tbody tr").count() == 1


def test_sign_out_ends_the_session(watched: Watched, scene: Scene) -> None:
    page = watched.page
    sign_in(watched, scene)
    cookie = next(c for c in page.context.cookies() if c["name"] == "linksvc_admin")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/"
    assert page.evaluate("document.cookie") == ""  # the page's script cannot read it
    page.get_by_role("button", name="Sign out").click()
    page.get_by_role("heading", name="Sign in").wait_for()
    assert not [c for c in page.context.cookies() if c["name"] == "linksvc_admin"]
    page.goto(scene.dashboard("/campaigns"))
    page.get_by_role("heading", name="Sign in").wait_for()


def test_the_demo_reads_in_words_not_keys(watched: Watched, scene: Scene) -> None:
    """Campaign ids by their names, human device names, finished campaigns by when they ended, attributes as a
    table: the demo as a marketer reads it."""
    page = watched.page
    sign_in(watched, scene)

    # An email link of a campaign: the default utm_campaign is the campaign's id, shown by its name; the URLs
    # the click goes to keep the id.
    page.goto(scene.dashboard(f"/links/{scene.showcase['id']}"))
    default = page.locator('[data-default-for="utm_campaign"]')
    default.filter(has_text="default: Earn 1 point per dollar").wait_for()
    assert default.get_attribute("data-value") == DEMO_CAMPAIGN
    desktop = page.locator('.device[data-device="desktop"]')
    assert f"utm_campaign={DEMO_CAMPAIGN}" in desktop.locator(".location").inner_text()
    step = desktop.locator('.why li[data-step="utm"]').filter(has_text="utm_campaign")
    assert step.inner_text() == ("utm_campaign = the id of the campaign “Earn 1 point per dollar” "
                                 "(from the defaults of this kind of link)")
    assert page.locator('.device[data-device="ios"] h3').inner_text().startswith("iPhone & iPad")
    android = page.locator('.device[data-device="android"] .why li[data-step="device"]').inner_text()
    assert android == "Android, Chrome, which opens the app with an intent URL, not a bot, not in an app"

    # The demo's week of clicks on its busiest link, by platform and device in people's words.
    status, body = call(f"{scene.admin}/links/overview?q=welcome")
    welcome = next(link for link in body["data"] if link["code"] == "welcome")
    page.goto(scene.dashboard(f"/links/{welcome['id']}/clicks?days=7"))
    page.locator("svg.chart").wait_for()
    assert int(page.locator('[data-total="human"]').get_attribute("data-value") or 0) > 100
    assert int(page.locator('[data-total="bot"]').get_attribute("data-value") or 0) > 0
    platforms = page.locator(".columns > section", has=page.get_by_role("heading", name="By platform")).locator("tbody")
    names = platforms.locator("td:first-child").all_inner_texts()
    assert {"Android", "iPhone & iPad", "Desktop", "Unknown"} <= set(names), names
    devices = page.locator(".columns > section", has=page.get_by_role("heading", name="By device")).inner_text()
    assert "Android phone (model not sent)" in devices and "Samsung SM-S918B" in devices
    assert "Generic_Android" not in devices and "ios" not in names
    browsers = page.locator(".columns > section", has=page.get_by_role("heading", name="By browser")).inner_text()
    assert "Samsung Internet" in browsers

    # A campaign finished by hand ended then, not at the end date it was given; one past its end date ended
    # at that date.
    page.goto(scene.dashboard("/campaigns?status=FINISHED"))
    black_friday = page.locator("tr", has_text="Black Friday 2023")
    assert black_friday.locator('td[data-label="Ends"]').inner_text() == "Ended Nov 27, 2023"
    summer = page.locator("tr", has_text="Summer 2024")
    assert summer.locator('td[data-label="Ends"]').inner_text() == "Ended Aug 31, 2024"
    assert "2099" not in page.locator("tbody").inner_text()
    black_friday.get_by_role("link").click()
    facts = page.locator("dl.facts").first
    facts.get_by_text("Ended", exact=True).wait_for()
    assert "(finished by hand)" in facts.inner_text() and "Planned end" in facts.inner_text()

    # Attributes and content as names and values, ids by their names, conditions in words: no raw JSON.
    page.goto(scene.dashboard(f"/campaigns/{DEMO_CAMPAIGN}"))
    attributes = page.locator('[data-section="attributes"]')
    attributes.wait_for()
    assert attributes.locator('dd[data-key="event_type"]').inner_text() == "PURCHASE"
    assert attributes.locator('dd[data-key="reward_id"]').inner_text() == "Coffee Points"
    assert attributes.locator('dd[data-key="expires_in_days"]').inner_text() == "365"
    assert attributes.locator('dd[data-key="conditions"]').inner_text() == "Order Value greater than 0"
    assert page.locator('[data-section="content"] dd[data-key="headline"] dd[data-key="value"]').count() == 1
    assert page.locator("pre").count() == 0 and "{" not in attributes.inner_text()
    assert page.locator("dd", has_text="iPhone & iPad").count() >= 1  # platforms


def test_the_demo_deliveries_delivered_and_refused(watched: Watched, scene: Scene) -> None:
    page = watched.page
    sign_in(watched, scene)
    page.goto(scene.dashboard(f"/deliveries?connection={DEMO_WEBHOOK}"))
    page.locator('tr[data-state="delivered"]').first.wait_for()
    assert page.locator('tr[data-state="delivered"]').count() > 20
    assert page.locator('tr[data-state="failed"], tr[data-state="dead"]').count() == 0
    page.goto(scene.dashboard(f"/deliveries?connection={DEMO_META}&state=failed"))
    failed = page.locator('tr[data-state="failed"]').first
    failed.wait_for()
    assert "Error validating access token: Session has expired" in failed.inner_text()
    assert "subcode 463" in failed.inner_text()
