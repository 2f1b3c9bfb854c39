"""The export to S3-compatible storage: moto's standalone S3 server on a free loopback port, the export run as
``linksvc export`` runs it (:func:`run_export`), and the objects read back over the S3 API."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aiobotocore.session import get_session

from linksvc.forwarding.export import ExportTarget, export_target, run_export
from linksvc.loyalty import service as events
from linksvc.seed import load_seed
from linksvc.store import in_one_unit
from storage.db import Tx
from tests.factories import A, B, two_accounts
from tests.processes import ServiceStore, free_port, stop

NOW = datetime(2024, 5, 2, 12, 0, tzinfo=UTC)
BUCKET = "linksvc-exports"
KEY_ID, SECRET = "test-key-id", "test-secret-key"
# Nothing may reach AWS: dummy credentials everywhere, no profile files, no instance metadata.
AWS_ENV = {"AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_DEFAULT_REGION": "us-east-1",
           "AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": os.devnull,
           "AWS_SHARED_CREDENTIALS_FILE": os.devnull, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}


@pytest.fixture
def s3_endpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for name, value in AWS_ENV.items():
        monkeypatch.setenv(name, value)
    port = free_port()
    log_path = tmp_path / "moto.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                                   env={**os.environ, **AWS_ENV}, stdout=log, stderr=subprocess.STDOUT)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(endpoint + "/", timeout=2):
                    break
            except urllib.error.HTTPError:
                break  # it answers
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise AssertionError("moto did not start: " + log_path.read_text()) from None
                time.sleep(0.1)
        yield endpoint
    finally:
        stop(process, grace=10)


def _client(endpoint: str) -> Any:
    return get_session().create_client("s3", endpoint_url=endpoint, region_name="us-east-1",
                                       aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET)


async def _objects(endpoint: str) -> dict[str, list[dict[str, Any]]]:
    async with _client(endpoint) as s3:
        listed = await s3.list_objects_v2(Bucket=BUCKET)
        found = {}
        for item in listed.get("Contents", []):
            response = await s3.get_object(Bucket=BUCKET, Key=item["Key"])
            async with response["Body"] as body:
                data = await body.read()
            found[item["Key"]] = [json.loads(line) for line in gzip.decompress(data).splitlines()]
        return found


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
    async with _client(s3_endpoint) as s3:
        await s3.create_bucket(Bucket=BUCKET)
    target = export_target("", s3_bucket=BUCKET, s3_endpoint=s3_endpoint, s3_prefix="exports/v1",
                           s3_region="us-east-1", s3_access_key_id=KEY_ID, s3_secret_access_key=SECRET)
    assert target == ExportTarget("s3", prefix="exports/v1", bucket=BUCKET, endpoint_url=s3_endpoint,
                                  region="us-east-1", access_key_id=KEY_ID, secret_access_key=SECRET)

    result = await run_export(str(store.path), target, database_url=store.url)

    objects = await _objects(s3_endpoint)
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

    objects = await _objects(s3_endpoint)
    assert (next_run.files, next_run.events) == (1, 1)
    assert len(objects) == 4
    assert sorted(line["id"] for found in objects.values() for line in found) == sorted(stored + later)
