"""Campaigns created and edited in the dashboard: the API's messages beside the fields, what was saved read
back through the API, a pause shown as the campaign's status."""

from __future__ import annotations

import uuid

from tests.browser.conftest import Scene, Watched, sign_in, wait_for
from tests.browser.servers import call


def test_create_then_edit_a_behaviour_campaign(watched: Watched, scene: Scene) -> None:
    name = f"Double points {uuid.uuid4().hex[:6]}"
    reward = call(f"{scene.admin}/rewards?limit=1")[1]["data"][0]
    page = watched.page
    watched.expect("status of 400")  # the refused amount
    sign_in(watched, scene)
    page.goto(scene.dashboard("/campaigns"))
    page.get_by_role("link", name="New campaign").click()
    form = page.get_by_role("form", name="New campaign")
    form.get_by_label("Name").fill(name)
    form.get_by_label("Event type").select_option("PURCHASE")
    form.get_by_label("Reward").select_option(reward["id"])
    form.get_by_label("Amount per currency unit").fill("-2")
    form.get_by_role("button", name="Create campaign").click()
    error = form.locator('[data-field="attributes.per_currency_unit"] .field-error')
    error.filter(has_text="greater than or equal to 0").wait_for()
    assert not [c for c in call(f"{scene.admin}/campaigns?limit=500")[1]["data"] if c["name"] == name]

    form.get_by_label("Amount per currency unit").fill("2")
    form.get_by_label("Labels").fill("spring, double")
    form.get_by_role("button", name="Create campaign").click()
    page.get_by_role("heading", name=name, exact=True).wait_for()
    created = next(c for c in call(f"{scene.admin}/campaigns?limit=500")[1]["data"] if c["name"] == name)
    assert created["type"] == "BEHAVIOR" and created["labels"] == ["spring", "double"]
    assert created["attributes"]["event_type"] == "PURCHASE" and created["attributes"]["reward_id"] == reward["id"]
    assert float(created["attributes"]["per_currency_unit"]) == 2.0

    edit = page.get_by_role("form", name=f"Edit {name}")
    edit.get_by_label("Name").fill(f"{name} (paused)")
    edit.get_by_label("Paused: customers neither see it").check()
    edit.get_by_role("button", name="Save campaign").click()
    page.get_by_role("heading", name=f"{name} (paused)", exact=True).wait_for()
    wait_for("the pause", lambda: call(f"{scene.admin}/campaigns/{created['id']}")[1]["data"]["status"] == "PAUSED")
    stored = call(f"{scene.admin}/campaigns/{created['id']}")[1]["data"]
    assert stored["paused"] is True and stored["attributes"]["reward_id"] == reward["id"]


def test_brands_tiers_and_rewards_created_and_edited(watched: Watched, scene: Scene) -> None:
    suffix = uuid.uuid4().hex[:6]
    brand, reward = f"Beans {suffix}", f"Free latte {suffix}"
    page = watched.page
    watched.expect("status of 400")  # the refused reward type
    sign_in(watched, scene)
    page.goto(scene.dashboard("/campaigns"))
    page.get_by_role("link", name="Brands, tiers and rewards").click()
    page.get_by_role("heading", name="Brands, tiers and rewards").wait_for()

    brands = page.get_by_role("form", name="Brands: brand")
    brands.get_by_label("Name").fill(brand)
    brands.get_by_role("button", name="Create brand").click()
    page.locator(f'tr[data-brand="{brand}"]').wait_for()

    page.reload()  # the rewards' brand choice lists the new brand
    rewards = page.get_by_role("form", name="Rewards: reward")
    rewards.get_by_label("Name").fill(reward)
    rewards.get_by_label("Type").fill("free latte")
    rewards.get_by_label("Brand").select_option(label=brand)
    rewards.get_by_role("button", name="Create reward").click()
    rewards.locator('[data-field="type"] .field-error').filter(has_text="pattern").wait_for()
    rewards.get_by_label("Type").fill("PRODUCT")
    rewards.get_by_label("Conversion factor").fill("3.5")
    rewards.get_by_role("button", name="Create reward").click()
    page.locator(f'tr[data-reward="{reward}"]').wait_for()
    stored = next(r for r in call(f"{scene.admin}/rewards?limit=500")[1]["data"] if r["name"] == reward)
    assert stored["type"] == "PRODUCT" and float(stored["attributes"]["conversion_factor"]) == 3.5
    brand_id = next(b["id"] for b in call(f"{scene.admin}/brands?limit=500")[1]["data"] if b["name"] == brand)
    assert stored["brand_id"] == brand_id

    page.get_by_role("button", name=f"Edit {reward}").click()
    rewards.get_by_label("Status").select_option("INACTIVE")
    rewards.get_by_role("button", name="Save reward").click()
    page.locator(f'tr[data-reward="{reward}"]').filter(has_text="Inactive").wait_for()
    assert call(f"{scene.admin}/rewards/{stored['id']}")[1]["data"]["status"] == "INACTIVE"

    tiers = page.get_by_role("form", name="Tiers: tier")
    tiers.get_by_label("Name").fill(f"Platinum {suffix}")
    tiers.get_by_label("Level").fill("9")
    tiers.get_by_label("Status").select_option("INACTIVE")  # held by no customer: the scene's others stay as they are
    tiers.get_by_role("button", name="Create tier").click()
    page.locator(f'tr[data-tier="Platinum {suffix}"]').wait_for()
