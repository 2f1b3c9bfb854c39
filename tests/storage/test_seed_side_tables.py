"""Coupon codes and opening wallet lines are part of what a seed load compares and reports."""

from __future__ import annotations

from aiohttp.test_utils import TestClient

from api.appkeys import DB
from linksvc.seed import load_seed
from tests.conftest import ADMIN
from tests.factories import A, ids, two_accounts


def _with_codes(doc: dict) -> dict:
    doc["accounts"][0]["campaigns"].append(
        {"id": "aaaaaaaa-0099-4000-8000-000000000099", "name": "Coupons", "type": "COUPONS",
         "codes": [{"code": "C1"}, {"code": "C2", "status": "RESERVED"}]}
    )
    return doc


async def test_changed_wallet_line_is_reported_and_applied(client: TestClient) -> None:
    db = client.app[DB]
    await load_seed(db, two_accounts(), allow_private=True)
    path = f"/api/admin/v1/accounts/{A}/customers/{ids(A)['customers']}"
    before = (await (await client.get(path, headers=ADMIN)).json())["data"]
    changed_doc = two_accounts()
    changed_doc["accounts"][0]["customers"][0]["wallet"]["lines"][0]["amount"] = 250
    counts = await load_seed(db, changed_doc, allow_private=True)
    assert counts["customers"] == 1
    after = (await (await client.get(path, headers=ADMIN)).json())["data"]
    assert after["wallet"]["totals"][0]["total"] == 250
    assert after["updated_at"] > before["updated_at"]


async def test_changed_code_status_is_reported_and_unchanged_reload_keeps_codes(client: TestClient) -> None:
    db = client.app[DB]
    await load_seed(db, _with_codes(two_accounts()), allow_private=True)
    doc = _with_codes(two_accounts())
    doc["accounts"][0]["campaigns"][1]["codes"][0]["status"] = "REDEEMED"
    assert (await load_seed(db, doc, allow_private=True))["campaigns"] == 1
    path = f"/api/admin/v1/accounts/{A}/campaigns/aaaaaaaa-0099-4000-8000-000000000099"
    codes = (await (await client.get(path, headers=ADMIN)).json())["data"]["codes"]
    assert [(c["code"], c["status"]) for c in codes] == [("C1", "REDEEMED"), ("C2", "RESERVED")]
    # The same file again: nothing reported, nothing rewritten.
    assert set((await load_seed(db, doc, allow_private=True)).values()) == {0}


async def test_codes_key_is_null_on_other_campaign_types(client: TestClient) -> None:
    await load_seed(client.app[DB], two_accounts(), allow_private=True)
    body = await (await client.get(f"/api/admin/v1/accounts/{A}/campaigns/{ids(A)['campaigns']}", headers=ADMIN)).json()
    assert body["data"]["codes"] is None
