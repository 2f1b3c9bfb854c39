"""A connection's ``config`` is checked against its destination's model (``linksvc.forwarding.configs``), and
the admin document describes it with the very same models, one per destination."""

from __future__ import annotations

from aiohttp.test_utils import TestClient

from linksvc.forwarding.configs import CONFIGS
from tests.conftest import ADMIN
from tests.http.test_forwarding import ADMIN_API


async def create(client: TestClient, destination: str, config: object) -> tuple[int, dict[str, object]]:
    body = {"destination": destination, "event_types": ["PURCHASE"], "config": config}
    response = await client.post(f"{ADMIN_API}/connections", json=body, headers=ADMIN)
    return response.status, await response.json()


async def test_a_config_member_of_the_wrong_type_is_refused_by_name(service: TestClient) -> None:
    status, answer = await create(service, "meta", {"pixel_id": 123456, "access_token": ["a"]})
    assert status == 400, answer
    details = answer["details"]
    assert isinstance(details, dict)
    assert {issue["path"] for issue in details["issues"]} == {"config.pixel_id", "config.access_token"}
    status, answer = await create(service, "google_ads", {"customer_id": "123", "conversion_action_id": "9",
                                                          "access_token": "t", "kept": {"any": "thing"}})
    assert status == 201, answer  # members the destination does not read are kept, as before
    assert answer["data"]["config"]["kept"] == {"any": "thing"}  # type: ignore[index]


async def test_a_destination_that_is_not_a_name_is_refused_not_a_500(service: TestClient) -> None:
    # found by the fuzz run: a destination given as an object reached the config models' lookup
    for destination in ({}, [], 7):
        status, answer = await create(service, destination, {})  # type: ignore[arg-type]
        assert status == 400, answer
        assert set(answer) == {"error", "details"}


async def test_the_document_types_config_per_destination(service: TestClient) -> None:
    document = await (await service.get("/api/admin/v1/openapi.json")).json()
    schemas = document["components"]["schemas"]
    connection = schemas["Connection"]
    by_destination = {rule["if"]["properties"]["destination"]["const"]: rule["then"]["properties"]["config"]["$ref"]
                      for rule in connection["allOf"]}
    assert by_destination == {name: f"#/components/schemas/{model.__name__}" for name, model in CONFIGS.items()}
    assert schemas["WebhookConfig"]["required"] == ["endpoint_url"]
    assert set(schemas["MetaConfig"]["properties"]) == set(CONFIGS["meta"].model_fields)
