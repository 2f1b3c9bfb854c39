"""The export to S3-compatible storage: moto's standalone S3 server on a free loopback port, the export run as
``linksvc export`` runs it (:func:`run_export`), and the objects read back over the S3 API."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from linksvc.forwarding.export import ExportTarget, export_target
from linksvc.forwarding.export_job import run_export
from linksvc.loyalty import service as events
from linksvc.seed import load_seed
from linksvc.store import in_one_unit
from storage.db import Tx
from tests.e2e.s3 import AWS_ENV, BUCKET, KEY_ID, SECRET, bucket_objects, moto_server, s3_client
from tests.factories import A, B, two_accounts
from tests.processes import ServiceStore

NOW = datetime(2024, 5, 2, 12, 0, tzinfo=UTC)


@pytest.fixture
def s3_endpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for name, value in AWS_ENV.items():
        monkeypatch.setenv(name, value)
    with moto_server(tmp_path) as (endpoint, _):
        yield endpoint


async def _store(store: ServiceStore, account_id: str, *raws: dict[str, Any]) -> list[str]:
    """Events stored as the service stores them (one unit of work): their ids."""
    async def unit(tx: Tx) -> list[str]:
        return [(await events.apply(tx, account_id, events.prepare(raw, "SERVER", NOW), NOW))[0] for raw in raws]

    async with store.opened() as db:
        return await in_one_unit(db, unit)


async def test_export_writes_each_event_once_to_s3(s3_endpoint: str, store: ServiceStore) -> None:
    async with store.opened() as db:
        await load_seed(db, two_accounts(), allow_private=True)
    original = {"utm_source": "newsletter", "utm_content": "", "cost": 0.35, "extra": {"k": [1, None]}}
    purchase = {"type": "PURCHASE", "customer_id": "cust-aaaa", "order_id": "o-1", "currency": "COP", "value": 1200,
                "products": [{"sku": "S"}], "issued_at": "2024-05-01T10:00:00Z", "attribution": original}
    stored = await _store(store, A, purchase, {"type": "page_view", "issued_at": "2024-05-02T07:00:00Z"})
    stored += await _store(store, B, {"type": "page_view", "issued_at": "2024-05-01T10:00:00Z"})
    async with s3_client(s3_endpoint) as s3:
        await s3.create_bucket(Bucket=BUCKET)
    target = export_target("", s3_bucket=BUCKET, s3_endpoint=s3_endpoint, s3_prefix="exports/v1",
                           s3_region="us-east-1", s3_access_key_id=KEY_ID, s3_secret_access_key=SECRET)
    assert target == ExportTarget("s3", prefix="exports/v1", bucket=BUCKET, endpoint_url=s3_endpoint,
                                  region="us-east-1", access_key_id=KEY_ID, secret_access_key=SECRET)

    result = await run_export(str(store.path), target, database_url=store.url)

    objects = await bucket_objects(s3_endpoint)
    assert (result.files, result.events) == (3, 3)
    assert sorted(objects) == sorted(result.keys)
    assert sorted(key.rsplit("/", 1)[0] for key in objects) == [
        f"exports/v1/{A}/dt=2024-05-01", f"exports/v1/{A}/dt=2024-05-02", f"exports/v1/{B}/dt=2024-05-01"]
    assert all(key.rsplit("/", 1)[1].startswith(("20240501T100000Z-", "20240502T070000Z-")) for key in objects)
    lines = {line["id"]: line for found in objects.values() for line in found}
    assert sorted(lines) == sorted(stored)
    assert lines[stored[0]]["attribution"] == original
    assert lines[stored[0]]["attribution_resolved"]["utm_source"] == "newsletter"
    assert (lines[stored[0]]["order_id"], lines[stored[0]]["value"]) == ("o-1", 1200)

    assert (await run_export(str(store.path), target, database_url=store.url)).files == 0
    later = await _store(store, B, {"type": "page_view", "issued_at": "2024-05-01T11:00:00Z"})
    next_run = await run_export(str(store.path), target, database_url=store.url)

    objects = await bucket_objects(s3_endpoint)
    assert (next_run.files, next_run.events) == (1, 1)
    assert len(objects) == 4
    assert sorted(line["id"] for found in objects.values() for line in found) == sorted(stored + later)
