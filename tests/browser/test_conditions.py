"""Conditions and content edited in the dashboard's catalog: a tier's entry conditions in two groups, a reward's
conditions and content, each read back through the admin API; what was not touched stays as stored; a value
the API refuses and a content that is not a JSON object are told beside their fields."""

from __future__ import annotations

import uuid
from typing import Any

from tests.browser.conftest import Scene, Watched, sign_in, wait_for
from tests.browser.servers import call


def _plain(groups: list[list[dict[str, Any]]]) -> list[list[tuple[str, str, float]]]:
    return [[(c["type"], c["operator"], float(c["value"])) for c in group] for group in groups]


def _row(scope: Any, group: int, number: int, what: str, comparison: str, value: str) -> None:
    where = f"condition {number} of group {group}"
    scope.get_by_label(f"What of {where}", exact=True).select_option(what)
    scope.get_by_label(f"Comparison of {where}", exact=True).select_option(comparison)
    scope.get_by_label(f"Number of {where}", exact=True).fill(value)


def _open_catalog(watched: Watched, scene: Scene, edit: str) -> Any:
    page = watched.page
    sign_in(watched, scene)
    page.goto(scene.dashboard("/campaigns/catalog"))
    page.get_by_role("button", name=f"Edit {edit}", exact=True).click()
    page.get_by_role("heading", name=f"Edit {edit}", exact=True).wait_for()
    return page


def test_a_tiers_entry_conditions_set_in_two_groups(watched: Watched, scene: Scene) -> None:
    name = f"Conditions tier {uuid.uuid4().hex[:6]}"
    status, created = call(f"{scene.admin}/tiers", "POST", {"name": name, "level": 97})
    assert status == 201, created
    tier = created["data"]
    try:
        page = _open_catalog(watched, scene, name)
        form = page.get_by_role("form", name="Tiers: tier")
        entry = form.locator('fieldset[name="entry_conditions"]')
        entry.get_by_text("None: a customer enters the tier by its level alone.").wait_for()
        entry.get_by_role("button", name="Add a condition", exact=True).click()
        _row(entry, 1, 1, "Order Value", "greater than or equal", "50")
        entry.get_by_role("button", name="Add a condition to group 1").click()
        _row(entry, 1, 2, "Purchase Count", "greater than", "2")
        entry.get_by_role("button", name="Add another group (or)").click()
        _row(entry, 2, 1, "Points Balance", "equal", "100")
        entry.get_by_text("Qualifies when any of these groups holds.").wait_for()
        assert not page.get_by_role("option", name="grater than").count()
        form.get_by_role("button", name="Save tier").click()
        page.get_by_role("heading", name="New tier", exact=True).wait_for()

        stored = call(f"{scene.admin}/tiers/{tier['id']}")[1]["data"]
        assert _plain(stored["entry_conditions"]) == [
            [("Order Value", "greater than or equal", 50.0), ("Purchase Count", "greater than", 2.0)],
            [("Points Balance", "equal", 100.0)],
        ]
        assert stored["exit_conditions"] == []

        # Shown again as stored; a condition removed by its button.
        page.get_by_role("button", name=f"Edit {name}", exact=True).click()
        entry.get_by_label("Number of condition 2 of group 1", exact=True).wait_for()
        assert entry.get_by_label("What of condition 1 of group 2", exact=True).input_value() == "Points Balance"
        entry.get_by_role("button", name="Remove condition 1 of group 2").click()
        assert not entry.get_by_text("Group 2, all of:").count()
        form.get_by_role("button", name="Save tier").click()
        page.get_by_role("heading", name="New tier", exact=True).wait_for()
        stored = call(f"{scene.admin}/tiers/{tier['id']}")[1]["data"]
        assert len(stored["entry_conditions"]) == 1 and len(stored["entry_conditions"][0]) == 2
    finally:
        deleted = call(f"{scene.admin}/tiers/{tier['id']}", "DELETE")[0]
    assert deleted in (200, 204), deleted


def test_a_rewards_conditions_and_content_and_the_messages_beside_them(watched: Watched, scene: Scene) -> None:
    name = f"Conditions reward {uuid.uuid4().hex[:6]}"
    status, created = call(f"{scene.admin}/rewards", "POST", {
        "name": name, "type": "POINTS", "content": {"headline": "Spring"},
        "conditions": [[{"type": "Order Value", "operator": "grater than", "value": 10}]]})
    assert status == 201, created
    reward = created["data"]
    watched.expect("status of 400")  # the refused value
    try:
        page = _open_catalog(watched, scene, name)
        form = page.get_by_role("form", name="Rewards: reward")
        rules = form.locator('fieldset[name="conditions"]')
        comparison = rules.get_by_label("Comparison of condition 1 of group 1", exact=True)
        assert comparison.input_value() == "greater than"  # the specification's spelling, shown right
        assert "grater than" not in comparison.locator("option").all_inner_texts()
        content = form.get_by_label("Content (JSON)")
        assert '"headline": "Spring"' in content.input_value()

        # Only the description changed: the conditions and the content stay as stored, spelling and all.
        form.get_by_label("Description").fill("Points for a spring order")
        form.get_by_role("button", name="Save reward").click()
        page.get_by_role("heading", name="New reward", exact=True).wait_for()
        stored = call(f"{scene.admin}/rewards/{reward['id']}")[1]["data"]
        assert stored["description"] == "Points for a spring order"
        assert stored["conditions"][0][0]["operator"] == "grater than"
        assert stored["content"] == {"headline": "Spring"}

        # A content that is not a JSON object is told beside it, and nothing is sent.
        page.get_by_role("button", name=f"Edit {name}", exact=True).click()
        content.fill('["Spring", "Summer"]')
        form.get_by_role("button", name="Save reward").click()
        form.locator('[data-field="content"] .field-error').filter(has_text="Write a JSON object").wait_for()
        assert content.get_attribute("aria-invalid") == "true"
        content.fill('{"headline": "Summer", "badge": "new"}')

        # A value the API refuses: its message beside the number.
        rules.get_by_label("Number of condition 1 of group 1", exact=True).fill("1e20")
        form.get_by_role("button", name="Save reward").click()
        value = form.locator('[data-field="conditions[0][0].value"]')
        value.locator(".field-error").filter(has_text="10^15").wait_for()
        assert value.locator("input").get_attribute("aria-invalid") == "true"
        assert call(f"{scene.admin}/rewards/{reward['id']}")[1]["data"]["content"] == {"headline": "Spring"}

        _row(rules, 1, 1, "Total Order Value", "less than", "250")
        rules.get_by_role("button", name="Add another group (or)").click()
        _row(rules, 2, 1, "Purchase Count", "greater than or equal", "3")
        form.get_by_role("button", name="Save reward").click()
        page.get_by_role("heading", name="New reward", exact=True).wait_for()
        stored = call(f"{scene.admin}/rewards/{reward['id']}")[1]["data"]
        assert _plain(stored["conditions"]) == [[("Total Order Value", "less than", 250.0)],
                                                [("Purchase Count", "greater than or equal", 3.0)]]
        assert stored["content"] == {"headline": "Summer", "badge": "new"}
    finally:
        deleted = call(f"{scene.admin}/rewards/{reward['id']}", "DELETE")[0]
    assert deleted in (200, 204), deleted


def test_a_behaviour_campaigns_earning_conditions_and_content(watched: Watched, scene: Scene) -> None:
    name = f"Conditions campaign {uuid.uuid4().hex[:6]}"
    reward = call(f"{scene.admin}/rewards?limit=1")[1]["data"][0]
    status, created = call(f"{scene.admin}/campaigns", "POST", {
        "name": name, "type": "BEHAVIOR", "attributes": {"event_type": "PURCHASE", "reward_id": reward["id"],
                                                         "amount": 5}})
    assert status == 201, created
    campaign = created["data"]
    try:
        page = watched.page
        sign_in(watched, scene)
        page.goto(scene.dashboard(f"/campaigns/{campaign['id']}"))
        form = page.get_by_role("form", name=f"Edit {name}")
        rules = form.locator('fieldset[name="attributes.conditions"]')
        rules.get_by_role("button", name="Add a condition", exact=True).click()
        _row(rules, 1, 1, "Order Value", "greater than", "20")
        form.get_by_label("Content (JSON)").fill('{"headline": "Earn on orders over 20"}')
        form.get_by_role("button", name="Save campaign").click()
        wait_for("the campaign saved", lambda: call(f"{scene.admin}/campaigns/{campaign['id']}")[1]["data"]
                 ["content"])
        stored = call(f"{scene.admin}/campaigns/{campaign['id']}")[1]["data"]
        assert _plain(stored["attributes"]["conditions"]) == [[("Order Value", "greater than", 20.0)]]
        assert float(stored["attributes"]["amount"]) == 5.0 and stored["attributes"]["reward_id"] == reward["id"]
        assert stored["content"] == {"headline": "Earn on orders over 20"}
    finally:
        deleted = call(f"{scene.admin}/campaigns/{campaign['id']}", "DELETE")[0]
    assert deleted in (200, 204), deleted
