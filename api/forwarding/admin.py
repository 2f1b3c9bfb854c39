"""Admin handlers of forwarding: deliveries of events and connections, retries, connection tests, webhook secret
rotation, and the dead letters (writes set aside)."""

from __future__ import annotations

from typing import Any, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api.appkeys import DB, DISPATCHER, RESOURCES
from api.forwarding.webhooks import WebhookClick
from api.routing import Endpoint, data, json_response
from api.schemas import Envelope, Page, Paging
from linksvc import deadletters
from linksvc.forwarding import deliveries, replays


class DeliveryView(BaseModel):
    id: str
    connection_id: str
    destination: str
    event_id: str = Field(description="the event it sends; a link.clicked delivery's: its first click's tracking id")
    trigger: str = Field(description="event, reversal or click (a link.clicked delivery)")
    kind: str
    state: str = Field(description="pending, delivered, filtered, skipped, failed or dead")
    reason: str | None = Field(description="why it was filtered or skipped")
    tries: int
    next_attempt_at: str
    last_status: int | None
    last_error: str | None
    created_at: str
    updated_at: str
    delivered_at: str | None
    message_id: str = Field(description="what the receiver deduplicates by (a webhook's webhook-id): the same for "
                                        "every delivery of one event, trigger and kind to the connection, retries "
                                        "and replays included")
    replay_id: str | None = Field(description="the replay that made it; null: the event's own delivery")
    click_count: int | None = Field(description="a link.clicked delivery's: how many clicks it carries; null: an "
                                                "event's delivery")
    link_codes: list[str] | None = Field(description="a link.clicked delivery's: the codes of the links its clicks "
                                                     "are of (of the clicks still stored), in the order of their "
                                                     "first click; null: an event's delivery")


class DeliveryDetail(DeliveryView):
    """One delivery, with what it carries."""

    clicks: list[WebhookClick] | None = Field(description="a link.clicked delivery's clicks, as its webhook sends "
                                                          "them, oldest first: those still stored (a click goes "
                                                          "with its link); null: an event's delivery (see "
                                                          "event_id)")


DeliveryState = Literal["pending", "delivered", "filtered", "skipped", "failed", "dead"]
DeliveryKind = Literal["event", "reversal", "event.accepted", "reward.issued", "purchase.reversed", "reward.reversed",
                       "tier.changed", "link.clicked"]


class DeliveriesQuery(Paging):
    state: DeliveryState | None = None
    kind: DeliveryKind | None = Field(default=None, description=(
        "only the deliveries of this kind: a webhook's link.clicked (clicks), event.accepted, reward.issued, "
        "purchase.reversed, reward.reversed, tier.changed; another destination's event or reversal"))
    sort: Literal["created", "-created", "updated", "-updated", "state", "-state", "tries", "-tries"] = Field(
        default="-created", description=(
            "the order of the whole list, before paging: created (the order the deliveries were made in), updated "
            "(the latest change of state), state (by its name) or tries, oldest, A or fewest first, or the other "
            "way round with a - before it (-created, the default: newest first). Deliveries that tie are ordered "
            "by when they were made, so pages never repeat or skip one"))


async def event_deliveries(request: web.Request) -> web.Response:
    account_id, event_id = request.match_info["account_id"], request.match_info["event_id"]
    return data(await deliveries.of_event(request.app[DB], account_id, event_id))


async def connection_deliveries(request: web.Request, query: DeliveriesQuery) -> web.Response:
    account_id, connection_id = request.match_info["account_id"], request.match_info["id"]
    return data(await deliveries.of_connection(request.app[DB], request.app[RESOURCES], account_id, connection_id,
                                               query.state, query.limit, query.offset, query.sort, query.kind))


async def get_delivery(request: web.Request) -> web.Response:
    account_id, delivery_id = request.match_info["account_id"], request.match_info["delivery_id"]
    return data(await deliveries.one(request.app[DB], account_id, delivery_id))


async def retry_delivery(request: web.Request) -> web.Response:
    account_id, delivery_id = request.match_info["account_id"], request.match_info["delivery_id"]
    view = await deliveries.retry(request.app[DB], account_id, delivery_id)
    request.app[DISPATCHER].wake()
    return data(view)


class ReasonCount(BaseModel):
    reason: str | None
    deliveries: int


class FilteredCount(ReasonCount):
    sendable: bool = Field(description="the connection's rules no longer give this reason (a type now in "
                                       "event_types, forwarding on again): retry-filtered sends them")


class OtherReasons(BaseModel):
    groups: int = Field(description="how many reasons are summed here")
    deliveries: int


class DeliveryCounts(BaseModel):
    by_state: dict[str, int] = Field(description="deliveries in each state: pending, delivered, filtered, skipped, "
                                                 "failed, dead")
    limit: int
    filtered: list[FilteredCount] = Field(description="the filtered ones by reason, most first (at most limit)")
    skipped: list[ReasonCount] = Field(description="the skipped ones (the vendor would refuse them) by reason, most "
                                                   "first (at most limit)")
    other: dict[str, OtherReasons] = Field(description="for filtered and skipped when they have more reasons than "
                                                       "limit: the reasons left out, summed")


class CountsQuery(BaseModel):
    limit: int = Field(default=deliveries.DEFAULT_REASONS, ge=1, le=deliveries.MAX_REASONS,
                       description="the reasons of filtered and of skipped shown at most, the most frequent first; "
                                   "the rest are summed in other")


async def connection_delivery_counts(request: web.Request, query: CountsQuery) -> web.Response:
    account_id, connection_id = request.match_info["account_id"], request.match_info["id"]
    return data(await deliveries.counts_of_connection(request.app[DB], request.app[RESOURCES], account_id,
                                                      connection_id, query.limit))


class FilteredRetried(BaseModel):
    retried: int = Field(description="filtered deliveries back to pending")
    reasons: list[str] = Field(description="the reasons they had, which the connection no longer gives")


async def retry_filtered(request: web.Request) -> web.Response:
    account_id, connection_id = request.match_info["account_id"], request.match_info["id"]
    result = await deliveries.retry_filtered(request.app[DB], request.app[RESOURCES], account_id, connection_id)
    request.app[DISPATCHER].wake()
    return data(result)


class FailedRetried(BaseModel):
    retried: int = Field(description="failed and dead deliveries back to pending")


async def retry_failed(request: web.Request) -> web.Response:
    account_id, connection_id = request.match_info["account_id"], request.match_info["id"]
    result = await deliveries.retry_failed(request.app[DB], request.app[RESOURCES], account_id, connection_id)
    request.app[DISPATCHER].wake()
    return data(result)


class ConnectionTest(BaseModel):
    outcome: str = Field(description="delivered (the vendor accepted the test event), failed (it refused it: see "
                                     "message), retry (it could not be reached or asked to try later) or not_sent "
                                     "(the destination has no test mode, or the connection lacks a setting)")
    status: int | None = Field(description="the vendor's HTTP status")
    message: str | None = Field(description="the vendor's own code and message")


async def test_connection(request: web.Request) -> web.Response:
    account_id, connection_id = request.match_info["account_id"], request.match_info["id"]
    return data(await deliveries.test_connection(request.app[DB], account_id, connection_id,
                                                 request.app[DISPATCHER].test))


class SecretRotated(BaseModel):
    secret: str = Field(description="the new whsec_ signing secret: shown only in this response")
    previous_secret_expires_at: str | None = Field(
        description="until when the replaced secret also signs every delivery (24 hours from now)")


async def rotate_secret(request: web.Request) -> web.Response:
    account_id, connection_id = request.match_info["account_id"], request.match_info["id"]
    return data(await request.app[RESOURCES].rotate_webhook_secret(account_id, connection_id))


class ReplayBody(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    from_: str = Field(alias="from", description="the first moment of the range, ISO 8601 (UTC when it names no "
                                                 "offset): events accepted from then on")
    to: str = Field(description="the end of the range, excluded; later than from, at most 92 days after it; "
                                "a moment after now is now")


class ReplayView(BaseModel):
    id: str
    connection_id: str
    from_: str = Field(alias="from")
    to: str
    state: str = Field(description="queued, running, done or failed (the connection was disabled or deleted)")
    events_total: int = Field(description="the account's events accepted in the range")
    events_found: int = Field(description="those the replay has taken so far")
    deliveries: int = Field(description="deliveries the replay made (a webhook gets one per kind of an event)")
    pending: int = Field(description="of those, still waiting to be sent")
    sent: int = Field(description="delivered: the vendor accepted them (and deduplicates by the same keys)")
    skipped: int = Field(description="not sent: the connection's rules filter them now, or the vendor would "
                                     "refuse them (too old)")
    failed: int = Field(description="failed or dead after their retries")
    progress: float = Field(description="0 to 1: the share of the range's events taken; 1 once done")
    error: str | None
    created_at: str
    updated_at: str
    finished_at: str | None


async def create_replay(request: web.Request, body: ReplayBody) -> web.Response:
    account_id, connection_id = request.match_info["account_id"], request.match_info["id"]
    view = await replays.create(request.app[DB], request.app[RESOURCES], account_id, connection_id, body.from_,
                                body.to)
    request.app[DISPATCHER].wake()
    return data(view, status=202)


async def list_replays(request: web.Request, query: Paging) -> web.Response:
    account_id, connection_id = request.match_info["account_id"], request.match_info["id"]
    return data(await replays.of_connection(request.app[DB], request.app[RESOURCES], account_id, connection_id,
                                            query.limit, query.offset))


async def get_replay(request: web.Request) -> web.Response:
    info = request.match_info
    return data(await replays.one(request.app[DB], request.app[RESOURCES], info["account_id"], info["id"],
                                  info["replay_id"]))


class DeadLetterView(BaseModel):
    id: int
    kind: str = Field(description="what was set aside: click")
    reason: str = Field(description="the error it met when it was written alone")
    payload: dict[str, Any] = Field(description="what it held, every text made valid UTF-8 and cut")
    created_at: str


async def list_dead_letters(request: web.Request, query: Paging) -> web.Response:
    items, total = await deadletters.list_dead_letters(request.app[DB], request.match_info["account_id"],
                                                       query.limit, query.offset)
    return json_response({"data": items, "count": total, "limit": query.limit, "offset": query.offset})


ENDPOINTS = [
    Endpoint("GET", "/accounts/{account_id}/events/{event_id}/deliveries", event_deliveries,
             "Deliveries of an event (and of its reversal) to every connection", "deliveries",
             response=Envelope[list[DeliveryView]], security="admin", permission="deliveries:read", errors=(401, 404)),
    Endpoint("GET", "/accounts/{account_id}/connections/{id}/deliveries", connection_deliveries,
             "Deliveries to a connection, newest first, optionally of one state", "deliveries",
             query=DeliveriesQuery, response=Envelope[list[DeliveryView]], security="admin",
             permission="deliveries:read", errors=(401, 404)),
    Endpoint("POST", "/accounts/{account_id}/connections/{id}/rotate-secret", rotate_secret,
             "Give a webhook connection a new signing secret, shown once; for 24 hours every delivery is "
             "signed with the new and the old secret", "connections", response=Envelope[SecretRotated],
             security="admin", permission="connections:write", errors=(400, 401, 404)),
    Endpoint("GET", "/accounts/{account_id}/connections/{id}/deliveries/counts", connection_delivery_counts,
             "How many deliveries to a connection are in each state, and its filtered and skipped ones by reason "
             "(whether the connection now lets each filtered reason through): the limit most frequent reasons, "
             "the rest summed in other", "deliveries", query=CountsQuery, response=Envelope[DeliveryCounts],
             security="admin", permission="deliveries:read", errors=(401, 404)),
    Endpoint("POST", "/accounts/{account_id}/connections/{id}/deliveries/retry-filtered", retry_filtered,
             "Send again the connection's filtered deliveries that its rules now let through (a type added to "
             "event_types, forwarding switched on); consent is checked again before sending", "deliveries",
             response=Envelope[FilteredRetried], security="admin", permission="deliveries:write", errors=(401, 404),
             action="retry-filtered"),
    Endpoint("POST", "/accounts/{account_id}/connections/{id}/deliveries/retry-failed", retry_failed,
             "Send again every failed and dead delivery of the connection (after its config is fixed: a new token); "
             "each keeps its count of tries", "deliveries", response=Envelope[FailedRetried], security="admin",
             permission="deliveries:write", errors=(401, 404), action="retry-failed"),
    Endpoint("POST", "/accounts/{account_id}/connections/{id}/replays", create_replay,
             "Send the connection the account's events accepted in a time range again (or for the first time, for "
             "a new connection), in the background, with the vendors' own deduplication keys; the connection's "
             "rules are applied as they are now", "deliveries", body=ReplayBody, response=Envelope[ReplayView],
             status=202, security="admin", permission="deliveries:write", errors=(400, 401, 404, 409),
             action="replay"),
    Endpoint("GET", "/accounts/{account_id}/connections/{id}/replays", list_replays,
             "The connection's replays, newest first, with their progress and counts", "deliveries", query=Paging,
             response=Envelope[list[ReplayView]], security="admin", permission="deliveries:read",
             errors=(401, 404)),
    Endpoint("GET", "/accounts/{account_id}/connections/{id}/replays/{replay_id}", get_replay,
             "One replay: its state, progress and counts", "deliveries", response=Envelope[ReplayView],
             security="admin", permission="deliveries:read", errors=(401, 404)),
    Endpoint("GET", "/accounts/{account_id}/deliveries/{delivery_id}", get_delivery,
             "One delivery: its state and tries, and what it carries (a link.clicked delivery's clicks)",
             "deliveries", response=Envelope[DeliveryDetail], security="admin", permission="deliveries:read",
             errors=(401, 404)),
    Endpoint("POST", "/accounts/{account_id}/deliveries/{delivery_id}/retry", retry_delivery,
             "Send a failed or dead delivery again, or a filtered one the connection's rules now let through "
             "(409 naming the reason while they do not)", "deliveries", response=Envelope[DeliveryView],
             security="admin", permission="deliveries:write", errors=(401, 404, 409)),
    Endpoint("POST", "/accounts/{account_id}/connections/{id}/test", test_connection,
             "Send one synthetic event the vendor's own way of testing (nothing is counted) and answer what the "
             "vendor said", "deliveries", response=Envelope[ConnectionTest], security="admin",
             permission="deliveries:write", errors=(401, 404)),
    Endpoint("GET", "/accounts/{account_id}/dead-letters", list_dead_letters,
             "Writes set aside because they failed alone (a click that could not be stored), newest first",
             "dead-letters", query=Paging, response=Page[DeadLetterView], security="admin",
             permission="deliveries:read", errors=(401, 404)),
]
