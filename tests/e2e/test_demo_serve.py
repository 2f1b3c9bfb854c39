"""The real command's first start with the demo data: ``linksvc serve`` on a port given by ``LINKSVC_PORT``,
private destinations not allowed (the default). Within seconds the demo's deliveries reach the service's own
receivers on that port, and a restart adds no second week of activity."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.factories import ADMIN_TOKEN
from tests.processes import ServiceStore, call, free_port, ready, wait_for

ROOT = Path(__file__).resolve().parents[2]
DEMO = "3f6c1a52-8d4e-4b7a-9c21-5e0f7a9b1d01"
WEBHOOK = "3f6c1a52-0008-4000-8000-000000000001"
META = "3f6c1a52-0008-4000-8000-000000000003"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def _start(folder: Path, port: int, store: ServiceStore) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LINKSVC_")}
    env |= {"LINKSVC_ADMIN_TOKEN": ADMIN_TOKEN, "LINKSVC_PORT": str(port), **store.env(),
            "LINKSVC_DEMO_FILE": str(ROOT / "fixtures" / "demo.json"), "LINKSVC_LOG_FORMAT": "text"}
    with (folder / "server.log").open("ab") as log:
        return subprocess.Popen([sys.executable, "-m", "linksvc", "serve"], cwd=ROOT, env=env, stdout=log,
                                stderr=subprocess.STDOUT)


@pytest.fixture
def served(tmp_path: Path, store: ServiceStore) -> Iterator[tuple[str, Path]]:
    port = free_port()
    process = _start(tmp_path, port, store)
    base = f"http://127.0.0.1:{port}"
    try:
        assert ready(base), (tmp_path / "server.log").read_text()
        yield base, tmp_path
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=15)


def _deliveries(base: str, connection: str) -> list[dict[str, Any]]:
    status, body, _ = call(f"{base}/api/admin/v1/accounts/{DEMO}/connections/{connection}/deliveries?limit=500",
                           ADMIN)
    assert status == 200, body
    return list(body["data"])


def test_first_start_delivers_to_itself_on_its_port(served: tuple[str, Path]) -> None:
    base, folder = served
    assert wait_for(lambda: (found := _deliveries(base, WEBHOOK)) and all(d["state"] == "delivered" for d in found),
                    seconds=20), _deliveries(base, WEBHOOK)
    assert wait_for(lambda: any(d["state"] == "failed" for d in _deliveries(base, META)))
    failed = next(d for d in _deliveries(base, META) if d["state"] == "failed")
    assert "(#190)" in failed["last_error"] and "subcode 463" in failed["last_error"]
    log = (folder / "server.log").read_text()
    assert "demo activity added" in log and "this-service.invalid" not in log


def _counts(store: ServiceStore) -> tuple[int, int]:
    return store.count("clicks"), store.count("events")


def test_a_restart_keeps_the_week_and_adds_none(tmp_path: Path, store: ServiceStore) -> None:
    for start in range(2):
        port = free_port()
        process = _start(tmp_path, port, store)
        try:
            assert ready(f"http://127.0.0.1:{port}"), (tmp_path / "server.log").read_text()
        finally:
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=15) == 0
        if start == 0:
            first = _counts(store)
            assert first[0] > 500 and first[1] > 20
    assert _counts(store) == first
