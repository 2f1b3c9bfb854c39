"""Feed tickets (issue 37): what a browser's EventSource opens the live feed with, since it cannot send headers.
A ticket is asked for with the normal credentials, opens that account's feed alone as ``?ticket=``, runs out, is
refused when altered or when its holder lost the account, and never reaches the access log."""

from __future__ import annotations

import io
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from api.appkeys import DB
from linksvc.app import create_app
from linksvc.clock import utcnow
from linksvc.feed import tickets
from linksvc.people.access import OPERATOR
from linksvc.seed import load_seed
from linksvc.settings import Settings
from tests.conftest import ADMIN, service_server
from tests.factories import ADMIN_TOKEN, A, B, two_accounts
from tests.http.test_access_log import access_lines, log_text, served  # noqa: F401 (fixtures)
from tests.people import make_person, session_of
from tests.sse import Stream

CODE_A = f"lnk{A[:4]}"


@pytest.fixture
async def service(aiohttp_client: Any, settings: Settings) -> TestClient:
    app = create_app(replace(settings, click_flush_seconds=0.1, click_rollup_seconds=0.2, feed_poll_seconds=0.2,
                             feed_event_settle_seconds=1.0, feed_heartbeat_seconds=0.3))
    client: TestClient = await aiohttp_client(service_server(app))
    await load_seed(client.app[DB], two_accounts(), allow_private=True)
    return client


async def ticket_for(client: TestClient, account: str = A, headers: dict[str, str] = ADMIN) -> dict[str, Any]:
    response = await client.post(f"/api/admin/v1/accounts/{account}/feed/tickets", headers=headers)
    assert response.status == 201, await response.text()
    answer: dict[str, Any] = (await response.json())["data"]
    return answer


async def test_a_ticket_opens_its_accounts_feed_without_headers(service: TestClient) -> None:
    answer = await ticket_for(service)
    assert set(answer) == {"ticket", "expires_at"} and answer["ticket"].startswith("lft_")
    response = await service.get(f"/api/admin/v1/accounts/{A}/feed?kinds=click&ticket={answer['ticket']}")
    assert response.status == 200, await response.text()
    stream = Stream(response)
    try:
        await service.get(f"/{CODE_A}?tracking_id=by-ticket", allow_redirects=False)
        message = await stream.next()
        assert message.json["tracking_id"] == "by-ticket"
    finally:
        stream.close()
    # a new stream of the same client resumes after the id it saw, given as last_event_id
    await service.get(f"/{CODE_A}?tracking_id=after", allow_redirects=False)
    again = await ticket_for(service)
    response = await service.get(f"/api/admin/v1/accounts/{A}/feed?kinds=click&ticket={again['ticket']}"
                                 f"&last_event_id={message.id}")
    resumed = Stream(response)
    try:
        assert (await resumed.next()).json["tracking_id"] == "after"
    finally:
        resumed.close()


async def test_a_ticket_opens_nothing_else(service: TestClient) -> None:
    ticket = (await ticket_for(service))["ticket"]
    other = await service.get(f"/api/admin/v1/accounts/{B}/feed?ticket={ticket}")
    assert other.status == 401 and set(await other.json()) == {"error", "details"}
    links = await service.get(f"/api/admin/v1/accounts/{A}/links?ticket={ticket}")
    assert links.status == 401  # the feed only
    altered = ticket[:-2] + ("AA" if not ticket.endswith("AA") else "BB")
    assert (await service.get(f"/api/admin/v1/accounts/{A}/feed?ticket={altered}")).status == 401
    expired = tickets.issue(ADMIN_TOKEN, OPERATOR, A, utcnow() - timedelta(minutes=2)).ticket
    assert (await service.get(f"/api/admin/v1/accounts/{A}/feed?ticket={expired}")).status == 401
    other_key = tickets.issue("another admin token", OPERATOR, A, utcnow()).ticket
    assert (await service.get(f"/api/admin/v1/accounts/{A}/feed?ticket={other_key}")).status == 401
    for bad in ("", "lft_", "lft_x.y", "lft_\u00e9.x"):
        response = await service.get(f"/api/admin/v1/accounts/{A}/feed", params={"ticket": bad})
        assert response.status == 401, bad
    without = await service.post(f"/api/admin/v1/accounts/{A}/feed/tickets")
    assert without.status == 401  # a ticket is asked for with the normal credentials


async def test_no_ticket_reaches_the_access_log(served: TestClient, log_text: io.StringIO) -> None:  # noqa: F811
    ticket = (await ticket_for(served))["ticket"]
    refused = await served.get(f"/api/admin/v1/accounts/{A}/feed?ticket={ticket}x")
    assert refused.status == 401
    response = await served.get(f"/api/admin/v1/accounts/{A}/feed?ticket={ticket}")
    assert response.status == 200
    response.close()
    await served.get("/readyz")
    lines = access_lines(log_text)
    assert any(line["path"] == f"/api/admin/v1/accounts/{A}/feed" for line in lines)
    assert "lft_" not in log_text.getvalue()


async def test_a_persons_ticket_follows_their_membership(service: TestClient) -> None:
    member = await make_person(service, "live@example.com", A, "analyst")
    session = await session_of(service, "live@example.com")
    ticket = (await ticket_for(service, A, session))["ticket"]
    assert (await service.post(f"/api/admin/v1/accounts/{B}/feed/tickets", headers=session)).status == 404
    opened = await service.get(f"/api/admin/v1/accounts/{A}/feed?ticket={ticket}")
    assert opened.status == 200
    opened.close()
    removed = await service.delete(f"/api/admin/v1/accounts/{A}/members/{member['id']}", headers=ADMIN)
    assert removed.status == 204
    refused = await service.get(f"/api/admin/v1/accounts/{A}/feed?ticket={ticket}")
    assert refused.status == 404  # no longer of the account: as anyone else outside it
