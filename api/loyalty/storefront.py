"""Storefront handlers of behavior events: one event, a bulk of events, a reversal."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from api.appkeys import CLICKS, DB, DISPATCHER
from api.auth import principal
from api.routing import data
from linksvc.clock import utcnow
from linksvc.errors import ServiceError
from linksvc.loyalty import reversal
from linksvc.loyalty import service as events
from linksvc.loyalty.models import BulkIn, ReverseIn
from linksvc.resources.validation import validate

# Behavior events ------------------------------------------------------------------------------------------


async def post_event(request: web.Request, body: Any) -> web.Response:
    who = principal(request)
    [result] = await events.ingest(request.app[DB], who.account_id, [body], who.kind,
                                   utcnow(), clicks=request.app[CLICKS])
    if isinstance(result, ServiceError):
        raise result
    request.app[DISPATCHER].wake()
    return data({"id": result[0], "status": "accepted"}, status=202)


async def post_events_bulk(request: web.Request, body: Any) -> web.Response:
    """Each event checked and written as if alone (one bad event does not fail the others), all of them in
    one unit of work; the answer lists each event's result in order."""
    who = principal(request)
    bulk = validate(BulkIn, body)
    outcomes = await events.ingest(request.app[DB], who.account_id, bulk.events,
                                   who.kind, utcnow(), bulk=True, clicks=request.app[CLICKS])
    results: list[dict[str, Any]] = [
        {"index": index, "status": outcome.status, "error": outcome.error, "details": outcome.details}
        if isinstance(outcome, ServiceError) else {"index": index, "status": 202, "id": outcome[0]}
        for index, outcome in enumerate(outcomes)
    ]
    request.app[DISPATCHER].wake()
    accepted = sum(1 for r in results if r["status"] == 202)
    return data({"accepted": accepted, "rejected": len(results) - accepted, "results": results})


async def reverse_event(request: web.Request, body: ReverseIn) -> web.Response:
    who = principal(request)
    result = await reversal.reverse_event(request.app[DB], who.account_id, request.match_info["event_id"],
                                        body.reason, utcnow())
    request.app[DISPATCHER].wake()
    return data(result)
