"""A connection on a vendor API version that is retired, or soon will be: a warning at start-up and a gauge."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import SETTINGS
from linksvc.app import create_app
from tests.conftest import service_server
from tests.http.test_forwarding import connect


async def test_a_retired_version_is_warned_about_and_measured(service: TestClient, aiohttp_client: Any,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    old = await connect(service, "meta", {"pixel_id": "1", "access_token": "EAAB", "api_version": "v19.0"})
    current = await connect(service, "meta", {"pixel_id": "1", "access_token": "EAAB"})
    metrics = await (await service.get("/metrics")).text()
    gauges = [line for line in metrics.splitlines() if line.startswith("linksvc_connection_api_version_days_left{")]
    assert len(gauges) == 1 and f'connection_id="{old}"' in gauges[0] and 'api_version="v19.0"' in gauges[0]
    assert float(gauges[0].rsplit(" ", 1)[1]) < 0
    assert current not in metrics
    caplog.set_level(logging.WARNING)
    await aiohttp_client(service_server(create_app(service.app[SETTINGS])))  # a restart on the same database
    warnings = [r.getMessage() for r in caplog.records if "API version" in r.getMessage()]
    assert len(warnings) == 1 and old in warnings[0] and "v19.0" in warnings[0] and "ended" in warnings[0]
