"""The account's own page: renamed and moved between environments (the switcher follows), and the operator's
form that creates another account, which then opens."""

from __future__ import annotations

import uuid

from tests.browser.conftest import Scene, Watched, sign_in
from tests.browser.servers import call


def test_an_account_renamed_and_another_created(watched: Watched, scene: Scene) -> None:
    suffix = uuid.uuid4().hex[:6]
    status, body = call(f"{scene.base}/api/admin/v1/accounts", "POST", {"name": f"Renamed shop {suffix}"})
    assert status == 201, body
    account = body["data"]
    page = watched.page
    watched.expect("status of 400")  # the refused empty name
    sign_in(watched, scene)
    page.goto(f"{scene.base}/dashboard/{account['id']}/members")
    page.get_by_role("link", name="Account name and environment").click()
    form = page.get_by_role("form", name="The account")
    form.get_by_label("Name").fill("")
    form.get_by_role("button", name="Save account").click()
    form.locator('[data-field="name"] .field-error:not(:empty)').wait_for()
    form.get_by_label("Name").fill(f"Corner shop {suffix}")
    form.get_by_label("Environment").select_option("production")
    form.get_by_role("button", name="Save account").click()
    chosen = page.locator("#account option:checked")  # the switcher follows
    chosen.filter(has_text=f"Corner shop {suffix} (production)").wait_for(state="attached")
    stored = call(f"{scene.base}/api/admin/v1/accounts/{account['id']}")[1]["data"]
    assert (stored["name"], stored["environment"]) == (f"Corner shop {suffix}", "production")

    create = page.get_by_role("form", name="New account")
    create.get_by_label("Name").fill(f"Second shop {suffix}")
    create.get_by_role("button", name="Create account").click()
    chosen.filter(has_text=f"Second shop {suffix} (sandbox)").wait_for(state="attached")
    assert page.get_by_role("form", name="The account").get_by_label("Name").input_value() == f"Second shop {suffix}"
