"""The Import page: Bitly's example export (fixtures/imports/bitly.json) picked in the browser, checked first (the
dry run's table says each row would be created, and nothing is written), then imported: the table says what
happened and the old back-halves answer on the service."""

from __future__ import annotations

from pathlib import Path

from tests.browser.conftest import DESKTOP_UA, Scene, Watched, sign_in
from tests.browser.servers import call

BITLY = Path(__file__).resolve().parents[2] / "fixtures" / "imports" / "bitly.json"


def test_bitly_export_is_checked_then_imported_from_the_dashboard(watched: Watched, scene: Scene) -> None:
    page = watched.page
    assert call(f"{scene.base}/spring-sale", headers={"User-Agent": DESKTOP_UA}, token=None)[0] == 404
    sign_in(watched, scene)
    page.get_by_role("link", name="Import", exact=True).click()
    page.get_by_role("heading", name="Import links").wait_for()
    page.get_by_label("Export file").set_input_files(str(BITLY))
    page.get_by_label("From").select_option("bitly")
    assert page.get_by_role("button", name="Import", exact=True).is_disabled()  # a check comes first
    page.get_by_role("button", name="Check").click()

    summary = page.locator(".import-summary")
    summary.filter(has_text="2 rows: 2 to create, 0 skipped, 0 failed.").wait_for()
    rows = page.locator("tr[data-row]")
    assert rows.count() == 2
    assert "Would be created" in rows.nth(0).inner_text() and "spring-sale" in rows.nth(0).inner_text()
    assert "4bLx9Qe" in rows.nth(1).inner_text()
    assert call(f"{scene.base}/spring-sale", headers={"User-Agent": DESKTOP_UA}, token=None)[0] == 404

    page.get_by_role("button", name="Import", exact=True).click()
    summary.filter(has_text="2 rows: 2 created, 0 skipped, 0 failed.").wait_for()
    assert [page.locator("tr[data-row]").nth(i).get_attribute("data-status") for i in range(2)] == ["created"] * 2
    for code in ("spring-sale", "4bLx9Qe"):  # the old back-halves answer here now
        assert call(f"{scene.base}/{code}", headers={"User-Agent": DESKTOP_UA}, token=None)[0] == 302
