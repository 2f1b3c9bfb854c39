"""The live feed across processes (issue 37): on SQLite, ``linksvc serve --workers 2``; on PostgreSQL, two nodes
on one database (``tests/e2e/multinode.py``). Clicks answered by whichever process, on new connections each (the
kernel spreads them over the workers; on PostgreSQL they alternate between the nodes), all appear on feeds held
by either, and a feed reopened elsewhere with its ``Last-Event-ID`` goes on exactly after what it had seen."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp

from tests.e2e.multinode import two_processes
from tests.factories import ADMIN_TOKEN, A
from tests.processes import ServiceStore
from tests.sse import Stream

CODE = f"lnk{A[:4]}"
FEED = f"/api/admin/v1/accounts/{A}/feed?kinds=click"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
CLICKS = 12
FAST = {"LINKSVC_CLICK_FLUSH_SECONDS": "0.2", "LINKSVC_FEED_POLL_SECONDS": "0.25",
        "LINKSVC_FEED_HEARTBEAT_SECONDS": "1"}


async def feed(session: aiohttp.ClientSession, base: str, last: str | None = None) -> Stream:
    response = await session.get(base + FEED, headers={**ADMIN, **({"Last-Event-ID": last} if last else {})})
    assert response.status == 200, await response.text()
    return Stream(response)


async def click(base: str, n: int) -> None:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as fresh, \
            fresh.get(f"{base}/{CODE}?tracking_id=w-{n}", allow_redirects=False) as answer:
        assert answer.status == 302


async def scenario(bases: list[str]) -> None:
    timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
    async with aiohttp.ClientSession(timeout=timeout) as first, aiohttp.ClientSession(timeout=timeout) as second:
        feeds = [await feed(first, bases[0]), await feed(second, bases[1])]
        try:
            # a heartbeat on each: both streams are open before the clicks
            await asyncio.gather(*(stream.comment() for stream in feeds))
            for n in range(CLICKS):
                await click(bases[n % 2], n)
            wanted = [f"w-{n}" for n in range(CLICKS)]
            seen = [await stream.take(CLICKS, deadline=30) for stream in feeds]
            for messages in seen:  # each once, in the order they were stored (each process writes its own)
                assert sorted(m.json["tracking_id"] for m in messages) == sorted(wanted)
        finally:
            for stream in feeds:
                stream.close()
        # the first feed, reopened on the other process after its fourth message: the rest, then live again
        resumed = await feed(second, bases[1], last=seen[0][3].id)
        try:
            rest = await resumed.take(CLICKS - 4, deadline=30)
            assert [m.json["tracking_id"] for m in rest] == [m.json["tracking_id"] for m in seen[0][4:]]
            await click(bases[0], CLICKS)
            assert (await resumed.next(deadline=30)).json["tracking_id"] == f"w-{CLICKS}"
        finally:
            resumed.close()


def test_clicks_on_either_process_reach_feeds_on_both(tmp_path: Path, store: ServiceStore) -> None:
    with two_processes(tmp_path, store, FAST) as bases:
        asyncio.run(scenario(bases))
