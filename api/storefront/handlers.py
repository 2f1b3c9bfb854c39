"""Storefront handlers of behavior events: one event, a bulk of events, a reversal."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from api.appkeys import DB, DISPATCHER, EVENTS
from api.auth import principal
from api.routing import data
from linksvc.behavior import service as events
from linksvc.behavior.models import BulkIn, ReverseIn
from linksvc.clock import utcnow
from linksvc.errors import ServiceError
from linksvc.resources.validation import validate

# Behavior events ------------------------------------------------------------------------------------------


async def post_event(request: web.Request, body: Any) -> web.Response:
    who = principal(request)
    now = utcnow()
    prepared = await events.check(request.app[DB].reader, who.account_id, body, who.kind, now)
    event_id, _ = await request.app[EVENTS].run(lambda tx: events.apply(tx, who.account_id, prepared, now))
    request.app[DISPATCHER].wake()
    return data({"id": event_id, "status": "accepted"}, status=202)


async def post_events_bulk(request: web.Request, body: Any) -> web.Response:
    """Each event checked and written alone (one bad event does not fail the others), all of them in the
    same group commit; the answer lists each event's result in order."""
    who = principal(request)
    now = utcnow()
    bulk = validate(BulkIn, body)
    committer = request.app[EVENTS]

    async def one(index: int, raw: Any) -> dict[str, Any]:
        try:
            prepared = await events.check(request.app[DB].reader, who.account_id, raw, who.kind, now,
                                          prefix=f"events[{index}]")
            event_id, _ = await committer.run(lambda tx: events.apply(tx, who.account_id, prepared, now))
        except ServiceError as exc:
            return {"index": index, "status": exc.status, "error": exc.error, "details": exc.details}
        return {"index": index, "status": 202, "id": event_id}

    results = await asyncio.gather(*(one(i, raw) for i, raw in enumerate(bulk.events)))
    request.app[DISPATCHER].wake()
    accepted = sum(1 for r in results if r["status"] == 202)
    return data({"accepted": accepted, "rejected": len(results) - accepted, "results": results})


async def reverse_event(request: web.Request, body: ReverseIn) -> web.Response:
    who = principal(request)
    event_id = request.match_info["event_id"]
    now = utcnow()
    result = await request.app[EVENTS].run(lambda tx: events.reverse(tx, who.account_id, event_id, body.reason, now))
    request.app[DISPATCHER].wake()
    return data(result)
