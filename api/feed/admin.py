"""``GET /api/admin/v1/accounts/{account_id}/feed``: the account's clicks and events as they are stored, as
server-sent events (aiohttp-sse), resumed after the ``Last-Event-ID`` a client reconnects with
(:mod:`linksvc.feed`)."""

from __future__ import annotations

import asyncio
from typing import Literal

from aiohttp import web
from aiohttp_sse import EventSourceResponse
from pydantic import BaseModel, Field

from api.appkeys import DB, FEED, SETTINGS
from api.auth import actor
from api.routing import Endpoint, Header, data
from api.schemas import Envelope
from linksvc.feed import service

STREAM_HEADERS = {"Cache-Control": "no-cache, no-store"}


class FeedQuery(BaseModel):
    kinds: str | None = Field(default=None, description="click, event or click,event (default: both)")
    link_id: str | None = Field(default=None, max_length=200,
                                description="only this link's clicks (events are then left out)")
    bots: Literal["include", "exclude", "only"] = Field(
        default="include", description="clicks by bots: shown (include), left out (exclude) or alone (only)")
    last_event_id: str | None = Field(default=None, max_length=200,
                                      description="as the Last-Event-ID header (which wins when both are sent), for a "
                                                  "client that opens a new stream itself, after its ticket ran out")


class FeedTicket(BaseModel):
    """A short-lived ticket that opens this account's feed as ?ticket= (an EventSource cannot send headers)."""

    ticket: str = Field(description="send it as ?ticket= on GET .../feed of this account, before expires_at",
                        examples=["lft_eyJhIjoiYWNj....9hN2Q"])
    expires_at: str = Field(description="when the ticket stops opening streams (one opened before lasts), ISO 8601")


async def feed(request: web.Request, query: FeedQuery) -> web.StreamResponse:
    subscription = await service.open_feed(request.app[DB], request.app[FEED], request.match_info["account_id"],
                                           query.kinds, query.link_id, query.bots,
                                           request.headers.get("Last-Event-ID") or query.last_event_id)
    response = EventSourceResponse(headers=STREAM_HEADERS,
                                   ping_interval=request.app[SETTINGS].feed_heartbeat_seconds)
    if request.transport is None:  # the client left before its stream began: nobody to answer
        request.app[FEED].leave(subscription)
        return web.Response(status=204)
    watcher: asyncio.Task[None] | None = None
    try:
        await response.prepare(request)  # no await since the check: the transport is still there
        # the heartbeat fails once the client is gone: its subscription ends, even with nothing to send
        watcher = asyncio.create_task(response.wait())
        watcher.add_done_callback(lambda _: subscription.close())
        async for message in subscription:
            await response.send(service.message_data(message), id=message.id, event=message.event)
    except (ConnectionResetError, TimeoutError, RuntimeError):
        pass  # the client left (or stopped reading): nobody to answer
    finally:
        request.app[FEED].leave(subscription)
        if watcher is not None:
            watcher.cancel()
    return response


async def feed_ticket(request: web.Request) -> web.Response:
    ticket = await service.feed_ticket(request.app[DB], request.app[SETTINGS].admin_token, actor(request),
                                       request.match_info["account_id"])
    return data({"ticket": ticket.ticket, "expires_at": ticket.expires_at}, status=201)


ENDPOINTS = [
    Endpoint("GET", "/accounts/{account_id}/feed", feed,
             "The account's clicks and events as they are stored, as server-sent events", "feed",
             query=FeedQuery, media_types=("text/event-stream",), security="admin", permission="links:read",
             headers=(Header("Last-Event-ID", "the id of the last message seen: the stream resumes after it"),),
             errors=(400, 401, 403, 404), streams=True, tickets=True,
             description="Opened with the admin credentials, or with `?ticket=` from POST .../feed/tickets (a "
                         "browser's EventSource cannot send headers). "
                         "Each message: `id` (the cursor: send it back as Last-Event-ID to resume after it), "
                         "`event` (`click`, `event`, or `gap` when more were stored while the client was away "
                         "than the backlog of 500 of each kind it is shown) and `data` (JSON). A comment line is "
                         "sent as a heartbeat when nothing else is."),
    Endpoint("POST", "/accounts/{account_id}/feed/tickets", feed_ticket,
             "A ticket that opens the account's feed for a minute, as ?ticket= (for an EventSource)", "feed",
             response=Envelope[FeedTicket], status=201, security="admin", permission="links:read",
             errors=(401, 403, 404), action="feed-ticket"),
]
