"""A local S3 for the exports' end-to-end tests: moto's standalone server on a free loopback port (nothing may
reach AWS: dummy credentials everywhere, no profile files, no instance metadata), a client of it, and the objects
of its bucket read back over the S3 API as their JSON lines."""

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
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from aiobotocore.session import get_session

from tests.processes import free_port, stop

BUCKET = "linksvc-exports"
KEY_ID, SECRET = "test-key-id", "test-secret-key"
AWS_ENV = {"AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_DEFAULT_REGION": "us-east-1",
           "AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": os.devnull,
           "AWS_SHARED_CREDENTIALS_FILE": os.devnull, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}


@contextmanager
def moto_server(folder: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """(endpoint, process) of a moto S3 server answering on 127.0.0.1, its log in ``folder``; stopped after."""
    port = free_port()
    log_path = folder / "moto.log"
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
        yield endpoint, process
    finally:
        stop(process, grace=10)


def s3_client(endpoint: str) -> Any:
    return get_session().create_client("s3", endpoint_url=endpoint, region_name="us-east-1",
                                       aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET)


async def bucket_objects(endpoint: str) -> dict[str, list[dict[str, Any]]]:
    """Every object of :data:`BUCKET` by key, as its parsed JSON lines."""
    async with s3_client(endpoint) as s3:
        found = {}
        paginator = s3.get_paginator("list_objects_v2")
        async for page in paginator.paginate(Bucket=BUCKET):
            for item in page.get("Contents", []):
                response = await s3.get_object(Bucket=BUCKET, Key=item["Key"])
                async with response["Body"] as body:
                    data = await body.read()
                found[item["Key"]] = [json.loads(line) for line in gzip.decompress(data).splitlines()]
        return found
