"""/healthz, /readyz, /metrics and request ids (structured logs: tests/e2e)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from api.appkeys import DB
from linksvc.app import create_app
from linksvc.settings import Settings
from storage.db import fetch_one
from tests.conftest import service_server
from tests.factories import ADMIN_TOKEN


async def test_healthz_and_readyz(client: TestClient) -> None:
    assert (await client.get("/healthz")).status == 200
    ready = await client.get("/readyz")
    assert ready.status == 200
    assert (await ready.json()) == {"status": "ok"}


async def test_readyz_is_503_when_the_database_is_gone(client: TestClient) -> None:
    await client.app[DB].close()
    response = await client.get("/readyz")
    assert response.status == 503
    await client.app[DB].open()


async def test_metrics_count_requests_and_latency_by_route(client: TestClient) -> None:
    for _ in range(3):
        await client.get("/api/storefront/v1/brands")
    await client.get(f"/api/admin/v1/accounts/{'x' * 8}")
    await client.get("/api/nothing/here")
    text = await (await client.get("/metrics")).text()
    assert 'linksvc_http_requests_total{method="GET",route="/api/storefront/v1/brands",status="401"} 3.0' in text
    # Routes are labelled by template, never by raw path.
    assert 'route="/api/admin/v1/accounts/{account_id}"' in text
    assert "xxxxxxxx" not in text
    assert 'route="unmatched",status="404"' in text
    bucket = 'linksvc_http_request_duration_seconds_bucket{le="0.005",method="GET",route="/api/storefront/v1/brands"}'
    assert bucket in text


async def test_request_id_is_returned_and_kept(client: TestClient) -> None:
    generated = await client.get("/healthz")
    assert len(generated.headers["X-Request-Id"]) == 16
    kept = await client.get("/healthz", headers={"X-Request-Id": "abc-123"})
    assert kept.headers["X-Request-Id"] == "abc-123"
    replaced = await client.get("/healthz", headers={"X-Request-Id": "bad id\twith spaces"})
    assert replaced.headers["X-Request-Id"] != "bad id\twith spaces"
    errored = await client.get("/api/nothing", headers={"X-Request-Id": "err-1"})
    assert errored.headers["X-Request-Id"] == "err-1"


async def test_the_page_cache_setting_reaches_every_connection(aiohttp_client: Any, tmp_path: Path) -> None:
    settings = Settings(db_path=str(tmp_path / "c.db"), admin_token=ADMIN_TOKEN, load_demo=False,
                        db_synchronous="NORMAL", db_cache_mb=8)
    client = await aiohttp_client(service_server(create_app(settings)))
    db = client.app[DB]
    sizes = [db.reader.execute("PRAGMA cache_size").fetchone()[0]]
    async with db.transaction() as tx:
        sizes.append((await fetch_one(tx, "PRAGMA cache_size"))[0])  # type: ignore[index]
    sizes.append((await fetch_one(db.background, "PRAGMA cache_size"))[0])  # type: ignore[index]
    assert sizes == [-8 * 1024] * 3
