"""GET /campaigns: every filter, the restriction rules, paging, status, CODES_SUMMARY, the response shape."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from api.storefront.schemas import CampaignPage, CodesSummary
from linksvc.seed import load_seed
from tests.conftest import bearer, token_for
from tests.factories import KEYS, A, B

BRAND_1 = "aaaaaaaa-0001-4000-8000-000000000001"
BRAND_2 = "aaaaaaaa-0001-4000-8000-000000000002"
SILVER = "aaaaaaaa-0002-4000-8000-000000000001"
GOLD = "aaaaaaaa-0002-4000-8000-000000000002"
PAST, FUTURE = "2020-01-01T00:00:00Z", "2099-01-01T00:00:00Z"
SPEC_FIELDS = {"id", "name", "type", "status", "attributes", "stores", "channels", "products", "content",
               "template_id"}


def cid(n: int) -> str:
    return f"aaaaaaaa-0004-4000-8000-{n:012d}"


# name -> (fields); ids follow list order, which is also the "order" field, so listing order is known.
CAMPAIGNS: list[dict[str, Any]] = [
    {"name": "running-open", "type": "BEHAVIOR", "brand_id": BRAND_1, "labels": ["summer", "vip"],
     "platforms": ["ios", "android"], "funded_by": "brand"},
    {"name": "paused", "type": "COUPONS", "paused": True, "brand_id": BRAND_2, "labels": ["summer"],
     "stores": ["s1", "s2"], "codes": [{"code": "A"}, {"code": "B", "status": "RESERVED"},
                                       {"code": "C", "status": "REDEEMED"},
                                       {"code": "D", "expires_at": PAST}]},
    {"name": "scheduled", "type": "PUNCH_CARDS", "starts_at": FUTURE, "stores": [], "platforms": ["web"]},
    {"name": "finished-by-hand", "type": "REFERRALS", "finished_at": PAST, "ends_at": FUTURE,
     "channels": ["app"]},
    {"name": "finished-by-date", "type": "SCORE_STREAKS", "ends_at": PAST, "channels": [], "funded_by": "partner"},
    {"name": "started", "type": "COUPONS", "starts_at": PAST, "ends_at": FUTURE, "products": ["p1"],
     "tier_ids": [GOLD], "codes": []},
    {"name": "finished-and-paused", "type": "BEHAVIOR", "paused": True, "ends_at": PAST, "products": []},
    {"name": "gold-only", "type": "BEHAVIOR", "tier_ids": [GOLD], "stores": ["s2"]},
    {"name": "silver-or-gold", "type": "PUNCH_CARDS", "tier_ids": [SILVER, GOLD], "channels": ["app", "web"]},
]


def account_a() -> dict[str, Any]:
    return {
        "id": A, "name": "A", "environment": "production",
        "api_keys": [{"kind": "SERVER", "key": KEYS[(A, "SERVER")]}, {"kind": "CLIENT", "key": KEYS[(A, "CLIENT")]}],
        "brands": [{"id": BRAND_1, "name": "One"}, {"id": BRAND_2, "name": "Two"}],
        "tiers": [{"id": SILVER, "name": "Silver", "level": 1}, {"id": GOLD, "name": "Gold", "level": 2}],
        "campaigns": [{"id": cid(i), "order": i, **c} for i, c in enumerate(CAMPAIGNS)],
        "customers": [
            {"id": "gold-all", "tier_id": GOLD, "document_number": "1"},
            {"id": "silver-no-coupons", "tier_id": SILVER, "document_number": "2",
             "consent": {"purposes": {"coupon_campaigns": False, "behavioral_campaigns": True}}},
            {"id": "no-tier-no-behavior", "document_number": "3",
             "consent": {"purposes": {"behavioral_campaigns": False, "punchcard_campaigns": False}}},
        ],
    }


def account_b() -> dict[str, Any]:
    return {"id": B, "name": "B", "api_keys": [{"kind": "SERVER", "key": KEYS[(B, "SERVER")]}],
            "campaigns": [{"id": "bbbbbbbb-0004-4000-8000-000000000001", "name": "b-only", "type": "BEHAVIOR"}],
            "customers": [{"id": "b-customer", "document_number": "1"}]}


@pytest.fixture
async def campaigns(client: TestClient) -> tuple[TestClient, dict[str, str]]:
    await load_seed(client.app[DB], {"accounts": [account_a(), account_b()]}, allow_private=True)
    return client, bearer(await token_for(client, A))


async def names(setup: tuple[TestClient, dict[str, str]], query: str) -> list[str]:
    client, headers = setup
    response = await client.get(f"/api/storefront/v1/campaigns?from=0&to=99&{query}", headers=headers)
    assert response.status == 200, await response.text()
    return [c["name"] for c in (await response.json())["data"]]


ALL = [c["name"] for c in CAMPAIGNS]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", ALL),
        ("type=COUPONS", ["paused", "started"]),
        ("type=BEHAVIOR", ["running-open", "finished-and-paused", "gold-only"]),
        (f"brand_id={BRAND_1}", ["running-open"]),
        ("brand_id=", ALL),
        ("funded_by=partner", ["finished-by-date"]),
        ("status=RUNNING", ["running-open", "started", "gold-only", "silver-or-gold"]),
        ("status=PAUSED", ["paused"]),
        ("status=SCHEDULED", ["scheduled"]),
        ("status=FINISHED", ["finished-by-hand", "finished-by-date", "finished-and-paused"]),
        ("status=NOT%20FINISHED", ["running-open", "paused", "scheduled", "started", "gold-only", "silver-or-gold"]),
        ("labels=summer", ["running-open", "paused"]),
        ("labels=summer,vip", ["running-open"]),
        ("labels=summer,%20vip%20,", ["running-open"]),
        ("labels=winter", []),
        ("platform=ios", ["running-open"]),
        ("platform=web", ["scheduled"]),
        ("type=COUPONS&status=RUNNING", ["started"]),
    ],
)
async def test_filters(campaigns, query: str, expected: list[str]) -> None:
    assert await names(campaigns, query) == expected


# The restriction rule (spec): null -> in; a non-empty list -> in only when it holds the id; [] -> out.
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("store_id=s1", [n for n in ALL if n not in ("scheduled", "gold-only")]),
        ("store_id=s2", [n for n in ALL if n not in ("scheduled",)]),
        ("store_id=s9", [n for n in ALL if n not in ("paused", "scheduled", "gold-only")]),
        ("channel_id=app", [n for n in ALL if n != "finished-by-date"]),
        ("channel_id=web", [n for n in ALL if n not in ("finished-by-hand", "finished-by-date")]),
        ("product_id=p1", [n for n in ALL if n != "finished-and-paused"]),
        ("product_id=p2", [n for n in ALL if n not in ("started", "finished-and-paused")]),
        ("store_id=s1&channel_id=web&product_id=p1",
         [n for n in ALL if n not in ("scheduled", "gold-only", "finished-by-hand", "finished-by-date",
                                      "finished-and-paused")]),
    ],
)
async def test_restriction_rules(campaigns, query: str, expected: list[str]) -> None:
    assert await names(campaigns, query) == expected


@pytest.mark.parametrize(
    ("customer", "expected"),
    [
        # tier_ids null: everyone; a list: only customers holding one of those tiers.
        ("gold-all", ALL),
        ("silver-no-coupons", [n for n in ALL if n not in ("paused", "started", "gold-only")]),
        ("no-tier-no-behavior", ["paused", "finished-by-hand", "finished-by-date"]),
    ],
)
async def test_customer_can_take_part(campaigns, customer: str, expected: list[str]) -> None:
    assert await names(campaigns, f"customer_id={customer}") == expected


async def test_unknown_customer_and_other_accounts_customer_are_404(campaigns) -> None:
    client, headers = campaigns
    for customer in ("nobody", "b-customer"):
        response = await client.get(f"/api/storefront/v1/campaigns?from=0&to=9&customer_id={customer}",
                                    headers=headers)
        assert response.status == 404


@pytest.mark.parametrize(
    ("start", "end", "expected_names"),
    [
        (0, 0, ALL[:1]),
        (0, 8, ALL),  # exactly the last index
        (3, 5, ALL[3:6]),
        (8, 8, ALL[8:]),
        (7, 20, ALL[7:]),  # past the end: what exists
        (9, 9, []),  # at the end
        (50, 60, []),
        (0, 99, ALL),  # the largest range
    ],
)
async def test_paging(campaigns, start: int, end: int, expected_names: list[str]) -> None:
    client, headers = campaigns
    response = await client.get(f"/api/storefront/v1/campaigns?from={start}&to={end}", headers=headers)
    assert response.status == 200
    body = await response.json()
    assert [c["name"] for c in body["data"]] == expected_names
    assert (body["from"], body["to"], body["count"]) == (start, end, len(ALL))


async def test_count_is_of_the_filtered_list(campaigns) -> None:
    client, headers = campaigns
    body = await (await client.get("/api/storefront/v1/campaigns?from=0&to=0&type=BEHAVIOR", headers=headers)).json()
    assert body["count"] == 3 and len(body["data"]) == 1


@pytest.mark.parametrize(
    "query",
    [
        "", "from=0", "to=5", "from=a&to=5", "from=-1&to=5", "from=1.5&to=5", "from=5&to=4", "from=0&to=100",
        "from=10&to=110", "from=0&to=5&type=OTHER", "from=0&to=5&status=running", "from=0&to=5&brand_id=nope",
        "from=0&to=5&includes=EVERYTHING", "from=0&to=5&from=1",
    ],
)
async def test_bad_paging_and_enums_are_400(campaigns, query: str) -> None:
    client, headers = campaigns
    response = await client.get(f"/api/storefront/v1/campaigns?{query}", headers=headers)
    assert response.status == 400
    assert set(await response.json()) == {"error", "details"}


async def test_response_shape_omits_internal_fields(campaigns) -> None:
    client, headers = campaigns
    body = await (await client.get("/api/storefront/v1/campaigns?from=0&to=99", headers=headers)).json()
    assert set(body) == {"data", "from", "to", "count"}
    CampaignPage.model_validate(body)  # types and nullability of the spec's table
    for campaign in body["data"]:
        assert set(campaign) == SPEC_FIELDS
        assert campaign["status"] in {"RUNNING", "PAUSED", "SCHEDULED", "FINISHED"}
        for field in ("stores", "channels", "products"):
            assert campaign[field] is None or all(isinstance(v, str) for v in campaign[field])
    by_name = {c["name"]: c for c in body["data"]}
    assert by_name["running-open"]["stores"] is None
    assert by_name["scheduled"]["stores"] == []
    assert by_name["paused"]["stores"] == ["s1", "s2"]


async def test_codes_summary_only_on_coupons(campaigns) -> None:
    client, headers = campaigns
    plain = await (await client.get("/api/storefront/v1/campaigns?from=0&to=99", headers=headers)).json()
    assert all("codes_summary" not in c["attributes"] for c in plain["data"])
    body = await (await client.get("/api/storefront/v1/campaigns?from=0&to=99&includes=CODES_SUMMARY",
                                   headers=headers)).json()
    summaries = {c["name"]: c["attributes"].get("codes_summary") for c in body["data"]}
    for summary in summaries.values():
        if summary is not None:
            CodesSummary.model_validate(summary)
    assert summaries["paused"] == {"total": 4, "available": 1, "reserved": 1, "redeemed": 1, "expired": 1}
    assert summaries["started"] == {"total": 0, "available": 0, "reserved": 0, "redeemed": 0, "expired": 0}
    assert all(summary is None for name, summary in summaries.items() if name not in ("paused", "started"))


async def test_client_keys_may_list_campaigns(campaigns) -> None:
    client, _ = campaigns
    token = await token_for(client, A, "CLIENT")
    assert (await client.get("/api/storefront/v1/campaigns?from=0&to=1", headers=bearer(token))).status == 200


async def test_other_account_sees_only_its_campaigns(campaigns) -> None:
    client, _ = campaigns
    token = await token_for(client, B)
    body = await (await client.get("/api/storefront/v1/campaigns?from=0&to=99", headers=bearer(token))).json()
    assert [c["name"] for c in body["data"]] == ["b-only"] and body["count"] == 1
