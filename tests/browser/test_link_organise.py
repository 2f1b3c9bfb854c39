"""Organising links in the dashboard (issue 36): two links picked with their checkboxes on the links list, tagged
through the bulk action bar (stored so, as the admin API reads them), then the list filtered by that tag shows
those two and no other, the tag drawn in the colour the account gave it."""

from __future__ import annotations

from tests.browser.conftest import Scene, Watched, sign_in, wait_for
from tests.browser.servers import call

TAG = "picked-in-browser"


def test_two_links_are_tagged_through_the_bulk_bar_and_the_list_filters_by_the_tag(watched: Watched,
                                                                                    scene: Scene) -> None:
    page = watched.page
    made = {}
    for code in ("org-one", "org-two", "org-three"):
        status, body = call(f"{scene.admin}/links", "POST", {
            "code": code, "kind": "external", "destination_url": f"https://shop.example/{code}"})
        assert status == 201, body
        made[code] = body["data"]["id"]
    status, body = call(f"{scene.admin}/links/tags/{TAG}", "PUT", {"color": "green"})  # a colour before any link
    assert status == 200, body
    sign_in(watched, scene)
    page.goto(scene.dashboard("/links"))
    page.get_by_label("Search links").fill("org-")
    rows = page.locator("tr[data-code]")
    wait_for("the three links found", lambda: rows.count() == 3)
    bar = page.get_by_role("region", name="Selected links")
    assert not bar.is_visible()
    page.get_by_label("Select org-one").check()
    page.get_by_label("Select org-three").check()
    bar.get_by_text("2 selected").wait_for()
    bar.get_by_placeholder("tag name").fill(TAG)
    bar.get_by_role("button", name="Add tag").click()
    page.get_by_text("Tagged: 2 of 2 link(s) changed.").wait_for()
    tagged = {code: call(f"{scene.admin}/links/{link_id}")[1]["data"]["tags"] for code, link_id in made.items()}
    assert tagged == {"org-one": [TAG], "org-two": [], "org-three": [TAG]}

    page.get_by_label("Search links").fill("")
    page.get_by_label("Tag", exact=True).select_option(TAG)
    wait_for("the list filtered by the tag", lambda: sorted(
        rows.evaluate_all("rows => rows.map(r => r.dataset.code)")) == ["org-one", "org-three"])
    assert TAG in page.url  # the filter is in the address, so the page can be shared or reloaded
    assert rows.first.locator(".badge.tag.tag-green", has_text=TAG).is_visible()  # in the tag's colour
