"""Every 400 for an invalid body or query names every bad field at once, each with its path and rule code.

One request per endpoint family (storefront, admin, dashboard), each with at least two problems; the table
lists what the answer must name. Object details are ``{field, message, issues: [{path, message, type}]}``;
the endpoints the specification gives string details list every ``path: message`` in the one string.
Each table runs in one test (building an app costs about 0.1 s) and compares the whole table, so a failure
shows every case that went wrong at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from linksvc.errors import RULES
from tests.conftest import ADMIN, bearer, token_for
from tests.factories import A, ids

SF = "/api/storefront/v1"
AD = f"/api/admin/v1/accounts/{A}"
MISSING = "aaaaaaaa-9999-4000-8000-000000000000"
DECISIONS = Path(__file__).resolve().parents[2] / "docs" / "decisions.md"

# (label, method, path, json body or None, who: server/admin/none, the (path, rule) pairs the issues hold)
OBJECT_CASES: list[tuple[str, str, str, Any, str, set[tuple[str, str]]]] = [
    # storefront
    ("campaigns query", "GET", f"{SF}/campaigns?from=5&to=1&status=WHAT&includes=ALL", None, "server",
     {("to", "range"), ("status", "enum"), ("includes", "enum")}),
    ("campaigns paging missing", "GET", f"{SF}/campaigns?type=LOTTERY", None, "server",
     {("from", "missing"), ("to", "missing"), ("type", "enum")}),
    ("totp", "POST", f"{SF}/auth/totp", {"phone": "12", "pin": 1}, "server",
     {("phone", "range"), ("pin", "unknown_field")}),
    ("totp without a customer", "POST", f"{SF}/auth/totp", {"pin": 1}, "server",
     {("pin", "unknown_field"), ("body", "one_of_required")}),
    ("totp verify", "POST", f"{SF}/auth/totp/verify", {"code": "12ab"}, "server",
     {("customer_id", "missing"), ("code", "pattern")}),
    ("event", "POST", f"{SF}/behavior/events",
     {"type": "page_view", "order_id": "o-1", "issued_at": "2999-01-01T00:00:00Z", "utm_sorce": "x"}, "server",
     {("order_id", "not_allowed"), ("issued_at", "range"), ("utm_sorce", "unknown_field")}),
    ("event of an unknown type", "POST", f"{SF}/behavior/events",
     {"type": "signup", "attribution": {"utm_source": 7}}, "server",
     {("type", "enum"), ("attribution.utm_source", "type")}),
    ("bulk wrapper", "POST", f"{SF}/behavior/events/bulk", {"events": [], "more": 1}, "server",
     {("events", "too_few_items"), ("more", "unknown_field")}),
    ("reverse", "POST", f"{SF}/behavior/events/{MISSING}/reverse", {"why": "x"}, "server",
     {("reason", "missing"), ("why", "unknown_field")}),
    # admin
    ("account", "POST", "/api/admin/v1/accounts", {"name": "", "environment": "staging"}, "admin",
     {("name", "string_too_short"), ("environment", "enum")}),
    ("account patch", "PATCH", AD, {"environment": "prod", "plan": "gold"}, "admin",
     {("environment", "enum"), ("plan", "unknown_field")}),
    ("api key", "POST", f"{AD}/api-keys", {"kind": "ROOT", "name": "x" * 201}, "admin",
     {("kind", "enum"), ("name", "string_too_long")}),
    ("brand", "POST", f"{AD}/brands", {"name": "", "status": "WHAT"}, "admin",
     {("name", "string_too_short"), ("status", "enum")}),
    ("tier", "POST", f"{AD}/tiers", {"name": "T", "status": "ON",
                                     "entry_conditions": [[{"type": "Mood", "operator": "about", "value": 1}]]},
     "admin", {("level", "missing"), ("status", "enum"), ("entry_conditions[0][0].type", "enum"),
               ("entry_conditions[0][0].operator", "enum")}),
    ("reward", "POST", f"{AD}/rewards", {"status": "LIVE", "attributes": {"conversion_factor": -1}}, "admin",
     {("name", "missing"), ("status", "enum"), ("attributes.conversion_factor", "range")}),
    ("campaign", "POST", f"{AD}/campaigns",
     {"name": "", "type": "BEHAVIOR", "brand_id": MISSING, "codes": [], "tier_ids": ["x"],
      "attributes": {"amount": -1, "reward_id": MISSING}}, "admin",
     {("name", "string_too_short"), ("brand_id", "unknown_reference"), ("codes", "not_allowed"),
      ("tier_ids[0]", "format"), ("attributes.amount", "range"), ("attributes.reward_id", "unknown_reference")}),
    ("campaign codes", "POST", f"{AD}/campaigns",
     {"name": "C", "type": "COUPONS", "codes": [{"code": "A", "status": "LOST"}, {"code": "B", "colour": 1}]},
     "admin", {("codes[0].status", "enum"), ("codes[1].colour", "unknown_field")}),
    ("contact", "POST", f"{AD}/contacts", {"email": "not-an-email", "dob": "yesterday", "status": "GONE"},
     "admin", {("email", "format"), ("dob", "format"), ("status", "enum")}),
    ("customer", "POST", f"{AD}/customers",
     {"status": "WHAT", "tier_id": MISSING, "document_number": "x" * 51,
      "wallet": {"lines": [{"amount": 0, "reward_id": MISSING}]}}, "admin",
     {("status", "enum"), ("tier_id", "unknown_reference"), ("document_number", "string_too_long"),
      ("wallet.lines[0].amount", "range"), ("wallet.lines[0].reward_id", "unknown_reference")}),
    ("custom event type", "POST", f"{AD}/custom-event-types", {"name": "1x", "active": "maybe"}, "admin",
     {("name", "pattern"), ("active", "format")}),
    ("connection", "POST", f"{AD}/connections",
     {"destination": "webhook", "event_types": "PURCHASE",
      "config": {"secret": "plain", "previous_secret_expires_at": "2030-01-01T00:00:00Z"}}, "admin",
     {("event_types", "type"), ("config.secret", "format"), ("config.previous_secret_expires_at", "not_allowed"),
      ("config.endpoint_url", "missing")}),
    ("connection kind", "POST", f"{AD}/connections", {"destination": "slack", "config": {"endpoint_url": 5}},
     "admin", {("destination", "enum"), ("config.endpoint_url", "type")}),
    ("link", "POST", f"{AD}/links",
     {"kind": "sms", "destination_url": "http://shop.example/", "code": "api", "campaign_id": MISSING}, "admin",
     {("kind", "enum"), ("destination_url", "url"), ("code", "reserved"), ("campaign_id", "unknown_reference")}),
    ("link put", "PUT", f"{AD}/links/{ids(A)['links']}", {"kind": "email", "fallback_url": "ftp://x.example/"},
     "admin", {("destination_url", "missing"), ("fallback_url", "url")}),
    ("link patch", "PATCH", f"{AD}/links/{ids(A)['links']}", {"id": MISSING, "disabled": "sometimes"}, "admin",
     {("id", "unknown_field"), ("disabled", "format")}),
    ("link utm", "PATCH", f"{AD}/links/{ids(A)['links']}/utm", {"utm_source": 5, "utm_site": "x"}, "admin",
     {("utm_source", "type"), ("utm_site", "unknown_field")}),
    ("list paging", "GET", f"{AD}/brands?limit=0&offset=-1", None, "admin",
     {("limit", "range"), ("offset", "range")}),
    ("query given twice", "GET", f"{AD}/brands?limit=1&limit=2&offset=x", None, "admin",
     {("limit", "duplicate"), ("offset", "format")}),
    ("qr", "GET", f"{AD}/links/{ids(A)['links']}/qr?format=gif&scale=0", None, "admin",
     {("format", "enum"), ("scale", "range")}),
    ("clicks and deliveries", "GET", f"{AD}/connections/{ids(A)['connections']}/deliveries?state=lost&limit=x",
     None, "admin", {("state", "enum"), ("limit", "format")}),
    # the dashboard's API
    ("links overview", "GET", f"{AD}/links/overview?q={'x' * 201}&limit=501", None, "admin",
     {("q", "string_too_long"), ("limit", "range")}),
    ("campaigns overview", "GET", f"{AD}/campaigns/overview?status=WHAT&type=X&brand_id=nope", None, "admin",
     {("status", "enum"), ("type", "enum"), ("brand_id", "format")}),
    ("link preview", "POST", f"{AD}/links/preview",
     {"kind": "sms", "destination_url": "https://s.example/", "utm": {"utm_medium": 1}}, "admin",
     {("kind", "enum"), ("utm.utm_medium", "type")}),
    ("dashboard sign-in", "POST", "/dashboard/session", {"tokn": "x"}, "none",
     {("token", "missing"), ("tokn", "unknown_field")}),
]


async def _headers(client: TestClient, who: str) -> dict[str, str]:
    if who == "admin":
        return ADMIN
    if who == "server":
        return bearer(await token_for(client, A))
    return {}


async def test_every_bad_field_is_named_with_its_path_and_rule(seeded: TestClient) -> None:
    found: dict[str, Any] = {}
    expected: dict[str, Any] = {}
    for label, method, path, body, who, issues in OBJECT_CASES:
        response = await seeded.request(method, path, json=body, headers=await _headers(seeded, who))
        payload = await response.json()
        details = payload.get("details")
        named = {(i["path"], i["type"]) for i in details.get("issues", [])} if isinstance(details, dict) else set()
        found[label] = (response.status, sorted(payload), issues <= named or named)
        expected[label] = (400, ["details", "error"], True)
        if isinstance(details, dict) and details.get("issues"):
            first = details["issues"][0]  # field and message stay those of the first issue
            assert (details["field"], details["message"]) == (first["path"], first["message"]), label
            assert all(i["type"] in RULES and i["message"] for i in details["issues"]), (label, details)
    assert found == expected


async def test_a_closed_set_names_its_accepted_values(seeded: TestClient) -> None:
    response = await seeded.post(f"{AD}/brands", json={"name": "B", "status": "WHAT"}, headers=ADMIN)
    assert response.status == 400
    details = (await response.json())["details"]
    assert details["issues"] == [{"path": "status", "message": "must be one of ACTIVE, INACTIVE", "type": "enum",
                                  "accepted": ["ACTIVE", "INACTIVE"]}]
    assert details["field"] == "status"
    # Nothing was stored, and a known status is taken.
    assert (await seeded.post(f"{AD}/brands", json={"name": "B", "status": "INACTIVE"}, headers=ADMIN)).status == 201
    server = bearer(await token_for(seeded, A))
    response = await seeded.get(f"{SF}/campaigns?from=0&to=9&status=running", headers=server)
    issue = (await response.json())["details"]["issues"][0]
    assert (issue["path"], issue["type"], issue["accepted"]) == (
        "status", "enum", ["RUNNING", "PAUSED", "SCHEDULED", "FINISHED", "NOT FINISHED"])


async def test_a_purchase_missing_several_fields_names_them_all(seeded: TestClient) -> None:
    server = bearer(await token_for(seeded, A))
    event = {"type": "PURCHASE", "customer_id": "cust-aaaa", "value": "a lot", "currency": "cop"}
    response = await seeded.post(f"{SF}/behavior/events", json=event, headers=server)
    assert response.status == 400
    issues = (await response.json())["details"]["issues"]
    assert {(i["path"], i["type"]) for i in issues} == {
        ("order_id", "missing"), ("products", "missing"), ("value", "format"), ("currency", "pattern")}
    # The same in a bulk request, in that event's result, each path inside the request.
    bulk = {"events": [{"type": "page_view"}, {"type": "PURCHASE", "products": []}]}
    response = await seeded.post(f"{SF}/behavior/events/bulk", json=bulk, headers=server)
    results = (await response.json())["data"]["results"]
    assert [r["status"] for r in results] == [202, 400]
    assert {(i["path"], i["type"]) for i in results[1]["details"]["issues"]} == {
        ("events[1].order_id", "missing"), ("events[1].currency", "missing"), ("events[1].products", "too_few_items")}


SPEC_NO_IDENTIFIER = {"code": "custom", "message": "At least one of id, email or document_number is required",
                      "path": ["searchParams"]}


async def test_contacts_without_an_identifier_keep_the_specified_shape(seeded: TestClient) -> None:
    headers = {**bearer(await token_for(seeded, A)), "x-account-id": A}
    response = await seeded.get(f"{SF}/contacts?first_name=Ana", headers=headers)
    assert (response.status, await response.json()) == (
        400, {"error": "Internal validation failed", "details": {"issues": [SPEC_NO_IDENTIFIER]}})
    # Other problems of the same query follow, in the same shape.
    response = await seeded.get(f"{SF}/contacts?dob=someday&city={'x' * 201}", headers=headers)
    body = await response.json()
    assert body["error"] == "Internal validation failed" and set(body["details"]) == {"issues"}
    assert body["details"]["issues"][0] == SPEC_NO_IDENTIFIER
    assert [(i["code"], i["path"]) for i in body["details"]["issues"][1:]] == [
        ("format", ["dob"]), ("string_too_long", ["city"])]  # in the order of the query's fields
    assert all(set(i) == {"code", "message", "path"} for i in body["details"]["issues"])


async def test_string_details_list_every_issue(seeded: TestClient) -> None:
    server = bearer(await token_for(seeded, A))
    headers = {**server, "x-account-id": A}
    answers = {
        "contacts": await seeded.get(f"{SF}/contacts?email=a@b.example&dob=someday&city={'x' * 201}",
                                     headers=headers),
        "customers": await seeded.get(f"{SF}/customers?document_number={'x' * 51}&phone=12", headers=server),
        "customers without a filter": await seeded.get(f"{SF}/customers", headers=server),
        "migrate": await seeded.post(f"{SF}/customers/migrate", json={"customers": [], "dry_run": True},
                                     headers=server),
    }
    found = {}
    for label, response in answers.items():
        body = await response.json()
        found[label] = (response.status, body["error"], body["details"])
    assert found == {
        "contacts": (400, "Invalid query", "dob: Input should be a valid date or datetime, input is too short; "
                                           "city: String should have at most 200 characters"),
        "customers": (400, "Invalid query", "document_number: String should have at most 50 characters; "
                                            "phone: must have 10 to 15 digits, has 2"),
        "customers without a filter": (400, "Invalid query",
                                       "query: at least one of document_number or phone is required"),
        "migrate": (400, "Invalid body", "customers: List should have at least 1 item after validation, not 0; "
                                         "dry_run: is not a field of this object"),
    }


async def test_a_migrated_customer_that_fails_lists_every_problem(seeded: TestClient) -> None:
    server = bearer(await token_for(seeded, A))
    customers = [{"email": "not-an-email", "status": "WHAT"}, {"external_id": "ok-1", "tier_id": MISSING}]
    response = await seeded.post(f"{SF}/customers/migrate", json={"customers": customers}, headers=server)
    failed = (await response.json())["data"]["failed"]
    assert [f["index"] for f in failed] == [0, 1]
    assert [(i["path"], i["type"]) for i in failed[0]["issues"]] == [
        ("customers[0]", "one_of_required"), ("customers[0].email", "format"), ("customers[0].status", "enum")]
    assert failed[0]["issues"][0]["accepted"] == ["external_id", "document_number"]
    assert failed[0]["error"].count("; ") == 2  # the one-line reason names all three
    assert [(i["path"], i["type"]) for i in failed[1]["issues"]] == [("customers[1].tier_id", "unknown_reference")]


def test_every_rule_code_is_documented() -> None:
    text = DECISIONS.read_text(encoding="utf-8")
    assert [code for code in RULES if f"`{code}`" not in text] == []
