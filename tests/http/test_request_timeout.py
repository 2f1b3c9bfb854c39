"""A client that sends its body too slowly gets 408 ``{error, details}`` and the connection is closed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from linksvc.app import create_app
from linksvc.settings import Settings
from tests.conftest import service_server
from tests.factories import ADMIN_TOKEN


async def test_a_body_that_never_completes_is_answered_408(aiohttp_client: Any, tmp_path: Path) -> None:
    settings = Settings(db_path=str(tmp_path / "t.db"), admin_token=ADMIN_TOKEN, load_demo=False,
                        db_synchronous="NORMAL", request_timeout_seconds=0.3)
    client = await aiohttp_client(service_server(create_app(settings)))
    reader, writer = await asyncio.open_connection("127.0.0.1", client.server.port)
    writer.write(b"POST /api/admin/v1/accounts HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                 + ADMIN_TOKEN.encode()
                 + b"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\": ")
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 30)  # read to the end: the server closes the connection
    writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408")
    parsed = json.loads(body)
    assert set(parsed) == {"error", "details"} and parsed["error"] == "Request timeout"
    # Nothing was created, and the service answers the next request as usual.
    response = await client.get("/api/admin/v1/accounts", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert response.status == 200 and (await response.json())["count"] == 0
