"""A link's routing rules in the dashboard, in Chromium: added, refused with the error beside the field, saved
through the admin API, moved and removed; and "Try a visitor" says per device which rule a visitor's country or
language picks and where the click goes, from the rules as edited, before they are saved."""

from __future__ import annotations

from tests.browser.conftest import Scene, Watched, sign_in, wait_for
from tests.browser.servers import call


def test_rules_are_edited_saved_and_tried_for_a_visitor(watched: Watched, scene: Scene) -> None:
    page = watched.page
    status, created = call(f"{scene.admin}/links", "POST", {
        "code": "rules-in-dashboard", "kind": "email", "destination_url": "https://shop.example/default"})
    assert status == 201, created
    link = created["data"]
    sign_in(watched, scene)
    page.goto(scene.dashboard(f"/links/{link['id']}"))
    section = page.locator("section.rules-section")
    section.get_by_role("heading", name="Routing rules").wait_for()
    assert "No rules" in section.inner_text()

    # A country written out is refused beside its field; nothing is saved.
    section.get_by_role("button", name="Add a rule").click()
    rule = section.locator("fieldset.rule").first
    rule.get_by_label("Name").fill("mexico")
    rule.get_by_label("Is in one of these countries").fill("Mexico")
    rule.get_by_label("Destination").fill("https://shop.example/mx")
    watched.expect(r"status of 400 \(Bad Request\)")  # the refused preview and save
    section.get_by_role("button", name="Save rules").click()
    section.locator('[data-field="rules[0].conditions.countries"] .field-error').filter(has_text="pattern").wait_for()
    assert call(f"{scene.admin}/links/{link['id']}")[1]["data"].get("rules") is None

    rule.get_by_label("Is in one of these countries").fill("MX")
    section.get_by_role("button", name="Add a rule").click()
    second = section.locator("fieldset.rule").nth(1)
    second.get_by_label("Name").fill("spanish")
    second.get_by_label("Prefers one of these languages").fill("es")
    second.get_by_label("Destination").fill("https://shop.example/es")
    section.get_by_role("button", name="Save rules").click()
    page.get_by_role("status").filter(has_text="Rules saved.").wait_for()
    saved = call(f"{scene.admin}/links/{link['id']}")[1]["data"]["rules"]
    assert saved == [
        {"name": "mexico", "conditions": {"countries": ["MX"]},
         "target": {"destination_url": "https://shop.example/mx"}},
        {"name": "spanish", "conditions": {"languages": ["es"]},
         "target": {"destination_url": "https://shop.example/es"}},
    ]

    # Try a visitor: a Spanish speaker in Mexico takes the first rule, one in Spain the second, on every device.
    tried = section.locator(".rule-preview")
    section.get_by_label("Country").fill("MX")
    tried.locator("tbody tr").first.filter(has_text="mexico").wait_for()
    assert tried.locator("tbody tr").count() == 3
    assert all("mexico" in row for row in tried.locator("tbody tr").all_inner_texts())
    section.get_by_label("Country").fill("ES")
    section.get_by_label("Accept-Language").fill("es-ES,es;q=0.9,en;q=0.8")
    tried.locator("tbody tr").first.filter(has_text="spanish").wait_for()
    assert "https://shop.example/es" in tried.inner_text()
    section.get_by_label("Accept-Language").fill("en-US,en;q=0.9")
    tried.locator("tbody tr").first.filter(has_text="none").wait_for()

    # Moved: the Spanish rule first; then the Mexican one removed.
    def names() -> list[str]:
        return [r["name"] for r in call(f"{scene.admin}/links/{link['id']}")[1]["data"]["rules"]]

    # (the toast of the save before may still show: the stored rules say when this save is done)
    section.locator("fieldset.rule").nth(1).get_by_role("button", name="Move up").click()
    section.get_by_role("button", name="Save rules").click()
    wait_for("the rules reordered", lambda: names() == ["spanish", "mexico"])
    section.locator("fieldset.rule").nth(1).get_by_role("button", name="Remove rule").click()
    section.get_by_role("button", name="Save rules").click()
    wait_for("the rule removed", lambda: names() == ["spanish"])
    assert section.locator("fieldset.rule").count() == 1

    # The resolver follows what was saved.
    status, _ = call(f"{scene.base}/rules-in-dashboard", headers={"Accept-Language": "es-MX,es;q=0.9"}, token=None)
    assert status == 302
    assert not watched.unexpected()
