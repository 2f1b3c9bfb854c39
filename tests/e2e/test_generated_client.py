"""A client generated from the served OpenAPI documents works: ``openapi-python-client`` writes a package for each
document of a running ``linksvc serve`` (demo data) into a temporary folder, once for the module, and the README's
storefront walkthrough (a token from an API key, campaigns, a customer lookup, a purchase) and an admin link's
round trip (create, read, change, delete, gone) run through those packages against the same server."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.processes import demo_server

ADMIN_TOKEN = "generated-client-admin-token-0123"
ACCOUNT = "3f6c1a52-8d4e-4b7a-9c21-5e0f7a9b1d01"  # the demo account of fixtures/demo.json
SERVER_KEY = "lk_demo_server_4f8a2c9e7b1d3a5f6c8e0b2d"  # its SERVER key
ANA = "3f6c1a52-0006-4000-8000-000000000001"
# The generator's own settings: no formatter run afterwards, and the link's QR image read as bytes (the generator
# reads JSON, text and application/octet-stream bodies).
CONFIG = ("post_hooks: []\ncontent_type_overrides:\n  image/svg+xml: application/octet-stream\n"
          "  image/png: application/octet-stream\n")
PACKAGES = {"linksvc_storefront_client": "/api/storefront/v1", "linksvc_admin_client": "/api/admin/v1"}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with demo_server(tmp_path_factory.mktemp("generated-client-server"), ADMIN_TOKEN) as base:
        yield base


@pytest.fixture(scope="module")
def clients(service: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, ModuleType]]:
    """The generated packages, imported from the temporary folder (never written into the repository)."""
    folder = tmp_path_factory.mktemp("generated-clients")
    (folder / "config.yaml").write_text(CONFIG)
    for package, prefix in PACKAGES.items():
        with urllib.request.urlopen(f"{service}{prefix}/openapi.json", timeout=10) as answer:
            (folder / f"{package}.json").write_bytes(answer.read())
        generator = Path(sys.executable).with_name("openapi-python-client")
        result = subprocess.run(
            [str(generator), "generate", "--path", str(folder / f"{package}.json"), "--meta", "none",
             "--output-path", str(folder / package), "--config", str(folder / "config.yaml")],
            cwd=folder, capture_output=True, text=True, timeout=300,
        )
        report = result.stdout + result.stderr
        assert result.returncode == 0, report
        assert "Warning" not in report, report  # every operation and schema made it into the client
    sys.path.insert(0, str(folder))
    try:
        yield {package: importlib.import_module(package) for package in PACKAGES}
    finally:
        sys.path.remove(str(folder))


def module(package: ModuleType, name: str) -> Any:
    return importlib.import_module(f"{package.__name__}.{name}")


def test_the_readme_storefront_walkthrough(service: str, clients: dict[str, ModuleType]) -> None:
    sf = clients["linksvc_storefront_client"]
    base = service + PACKAGES[sf.__name__]
    token = module(sf, "api.auth.get_auth_authorize").sync(client=sf.Client(base_url=base), x_api_key=SERVER_KEY)
    assert isinstance(token, module(sf, "models").AccessToken), token
    assert token.data.startswith("lt_")
    client = sf.AuthenticatedClient(base_url=base, token=token.data)

    brands = module(sf, "api.catalog.get_brands").sync(client=client)
    assert [brand.name for brand in brands.data] == ["Demo Coffee", "Bean & Leaf Tea Bar"]
    models = module(sf, "models")
    page = module(sf, "api.campaigns.get_campaigns").sync(
        client=client, from_=0, to=9, status=models.GetCampaignsStatus("NOT FINISHED"), store_id="BOG-001",
        includes="CODES_SUMMARY")
    assert isinstance(page, models.CampaignPage), page
    assert page.from_ == 0 and page.count == 9
    assert page.data[0].name == "Earn 1 point per dollar"
    summaries = [campaign.attributes.additional_properties.get("codes_summary") for campaign in page.data]
    assert {"total": 5, "available": 2, "reserved": 1, "redeemed": 1, "expired": 1} in summaries

    lookup = module(sf, "api.customers.get_customers").sync(client=client, phone="+57 300 123 4567")
    assert isinstance(lookup, models.CustomerLookupEnvelope), lookup
    assert lookup.data.customer_id == ANA and lookup.data.customer.name == "Ana María Gómez"

    purchase = models.EventIn.from_dict({
        "type": "PURCHASE", "customer_id": ANA, "order_id": "generated-client-1", "currency": "USD", "value": 12.5,
        "products": [{"sku": "SKU-LATTE-12OZ"}], "attribution": {"utm_source": "newsletter", "utm_medium": "email"}})
    post_event = module(sf, "api.events.post_behavior_events")
    accepted = post_event.sync_detailed(client=client, body=purchase)
    assert accepted.status_code == 202, accepted.content
    assert accepted.parsed.data.status == "accepted"
    again = post_event.sync(client=client, body=purchase)  # the same order again: the same event
    assert again.data.id == accepted.parsed.data.id
    refused = post_event.sync_detailed(client=client, body=models.EventIn.from_dict({"type": "PURCHASE"}))
    assert refused.status_code == 400 and isinstance(refused.parsed, models.Error)
    assert refused.parsed.error == "Invalid body"


def test_an_admin_link_round_trip(service: str, clients: dict[str, ModuleType]) -> None:
    admin = clients["linksvc_admin_client"]
    client = admin.AuthenticatedClient(base_url=service + PACKAGES[admin.__name__], token=ADMIN_TOKEN)
    models = module(admin, "models")
    body = models.Link.from_dict({"kind": "external", "code": "gen-client", "destination_url": "https://example.com/a"})
    created = module(admin, "api.links.post_accounts_account_id_links").sync_detailed(
        ACCOUNT, client=client, body=body)
    assert created.status_code == 201, created.content
    link = created.parsed.data
    assert isinstance(link, models.LinkView) and link.code == "gen-client"

    read = module(admin, "api.links.get_accounts_account_id_links_id").sync(ACCOUNT, link.id, client=client)
    assert read.data.destination_url == "https://example.com/a"

    patch = models.LinkPatch.from_dict({"destination_url": "https://example.com/b", "max_clicks": 100})
    changed = module(admin, "api.links.patch_accounts_account_id_links_id").sync(
        ACCOUNT, link.id, client=client, body=patch)
    assert (changed.data.destination_url, changed.data.max_clicks) == ("https://example.com/b", 100)

    listed = module(admin, "api.links.get_accounts_account_id_links").sync(ACCOUNT, client=client, limit=500)
    assert link.id in [item.id for item in listed.data]

    deleted = module(admin, "api.links.delete_accounts_account_id_links_id").sync_detailed(
        ACCOUNT, link.id, client=client)
    assert deleted.status_code == 204
    gone = module(admin, "api.links.get_accounts_account_id_links_id").sync_detailed(ACCOUNT, link.id, client=client)
    assert gone.status_code == 404 and isinstance(gone.parsed, models.Error)
    assert json.loads(gone.content)["error"] == gone.parsed.error
