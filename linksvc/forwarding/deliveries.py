"""What the admin API shows of forwarding: deliveries per event and per connection (of one state, of one kind),
one delivery (a ``link.clicked`` one with the clicks it carries; each says how many and of which links), the
connection's counts (filtered ones grouped by reason), a retry by hand (of a failed or dead delivery, or of a
filtered one the connection's rules now let through, one or all of the connection's; every failed and dead one
of a connection), and the test of a connection.

Each first fans out what of the account still waits in the outbox (:func:`settle`): the deliveries an
accepted event makes are shown as soon as the event is (pending or filtered), as they were when ingest wrote
them, although the dispatcher now writes them a moment later."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import date
from functools import partial
from typing import Any

from linksvc.clock import iso, utcnow
from linksvc.errors import Conflict, NotFound
from linksvc.forwarding import click_hooks, outbox, versions
from linksvc.forwarding.rules import lifted_reasons
from linksvc.resources.service import Resources
from linksvc.sorting import order_of
from linksvc.store import Store, StoreError
from storage import click_hooks as click_repo
from storage import deliveries as repo
from storage import documents
from storage import events as event_repo
from storage.db import Conn
from storage.deliveries import DeliveryRecord

log = logging.getLogger("linksvc.forwarding")
SETTLE_BATCHES = 20

FIELDS = ("id", "connection_id", "destination", "event_id", "trigger", "kind", "state", "reason", "tries",
          "next_attempt_at", "last_status", "last_error", "created_at", "updated_at", "delivered_at", "replay_id")


def _view(delivery: DeliveryRecord, codes: dict[int, str | None] | None = None) -> dict[str, Any]:
    """What the admin API shows of a delivery; a ``link.clicked`` one also says how many clicks it carries and the
    codes of their links (``codes``: the code of each click id still stored), in the order of their first click."""
    view = {**{name: getattr(delivery, name) for name in FIELDS}, "message_id": delivery.dedup_key,
            "click_count": None, "link_codes": None}
    if delivery.click_ids is not None:
        ids = click_repo.decode_ids(delivery.click_ids)
        found = [code for i in ids if (code := (codes or {}).get(i)) is not None]
        view.update(click_count=len(ids), link_codes=list(dict.fromkeys(found)))
    return view


async def _views(conn: Conn, account_id: str, records: list[DeliveryRecord]) -> list[dict[str, Any]]:
    """The views of these deliveries, the link codes of their clicks read in a few statements for all of them."""
    ids = [i for r in records if r.click_ids is not None for i in click_repo.decode_ids(r.click_ids)]
    codes = await click_repo.link_codes(conn, account_id, ids) if ids else {}
    return [_view(r, codes) for r in records]


async def settle(db: Store, account_id: str) -> None:
    """Fans out the account's events and reversals still waiting in the outbox (at most
    :data:`SETTLE_BATCHES` batches: the dispatcher, which runs in every worker, keeps what waits short), so
    that what is read next shows their deliveries. When the store refuses the write (locked by another
    process), what was already fanned out is read."""
    unit = partial(outbox.fan_out, account_id=account_id)
    try:
        for _ in range(SETTLE_BATCHES):
            if not await repo.fanout_waiting(db.reader, account_id):
                return
            if await db.write(unit, outbox.FAN_OUT_TURN) < outbox.FAN_OUT_BATCH:
                return
    except StoreError:
        log.warning("fanning out the deliveries of account %s before a read failed", account_id, exc_info=True)


async def of_event(db: Store, account_id: str, event_id: str) -> list[dict[str, Any]]:
    if await event_repo.by_id(db.reader, account_id, event_id) is None:
        raise NotFound("Event not found", f"no event with id {event_id} in this account")
    await settle(db, account_id)
    return await _views(db.reader, account_id, await repo.of_event(db.reader, account_id, event_id))


async def of_connection(db: Store, resources: Resources, account_id: str, connection_id: str, state: str | None,
                        limit: int, offset: int, sort: str = "-created", kind: str | None = None
                        ) -> list[dict[str, Any]]:
    """A page of the deliveries to the connection in the order ``sort`` names (:mod:`linksvc.sorting`; newest
    first unless told: ``created``, ``updated``, ``state``, ``tries``), of one state and one kind when given (404
    unless the account's connection)."""
    await resources.get(account_id, "connections", connection_id)
    await settle(db, account_id)
    key, descending = order_of(sort)
    rows = await repo.of_connection(db.reader, account_id, connection_id, state, limit, offset, key, descending, kind)
    return await _views(db.reader, account_id, rows)


async def one(db: Store, account_id: str, delivery_id: str) -> dict[str, Any]:
    """One delivery of the account (404 otherwise) and, for a ``link.clicked`` one, the clicks it carries as its
    webhook sends them (those still stored: a click goes with its link), oldest first; ``clicks`` is None for an
    event's delivery."""
    found = await repo.by_id(db.reader, account_id, delivery_id)
    if found is None:
        raise NotFound("Delivery not found", f"no delivery with id {delivery_id} in this account")
    if found.click_ids is None:
        return {**_view(found), "clicks": None}
    clicks = await click_hooks.clicks_of(db.reader, account_id, found.click_ids)
    return {**_view(found, {c.id: c.code for c in clicks}), "clicks": click_hooks.click_lines(clicks)}


STATES = ("pending", "delivered", "filtered", "skipped", "failed", "dead")
DEFAULT_REASONS, MAX_REASONS = 100, 1000
"""The reasons of the filtered and of the skipped deliveries shown at most (the counts' ``limit``)."""


async def counts_of_connection(db: Store, resources: Resources, account_id: str, connection_id: str,
                               limit: int = DEFAULT_REASONS) -> dict[str, Any]:
    """How many deliveries the connection has in each state, and its filtered and skipped ones by reason: the
    ``limit`` most frequent reasons of each, the rest summed in ``other`` (a reason can name what the event
    carried, its time for one: a storefront client could otherwise grow the answer without end). Each filtered
    reason says whether the connection's rules now let those through (``sendable``: :func:`retry_filtered`
    sends them). Read on the background reader: the counts scan every delivery of the connection. 404 unless
    the account's connection."""
    connection = await resources.get(account_id, "connections", connection_id)
    await settle(db, account_id)
    conn = db.background
    by_state = dict.fromkeys(STATES, 0)
    by_state.update(await repo.state_counts(conn, account_id, connection_id))
    answer: dict[str, Any] = {"by_state": by_state, "limit": limit}
    other: dict[str, Any] = {}
    for state in ("filtered", "skipped"):
        found = await repo.reason_groups(conn, account_id, connection_id, state, limit)
        lifted = set(lifted_reasons(connection, [reason for reason, _ in found.rows])) if state == "filtered" else set()
        answer[state] = [{"reason": reason, "deliveries": n, **({"sendable": reason in lifted}
                                                                if state == "filtered" else {})}
                         for reason, n in found.rows]
        if found.groups > len(found.rows):
            other[state] = {"groups": found.groups - len(found.rows),
                            "deliveries": found.deliveries - sum(n for _, n in found.rows)}
    answer["other"] = other
    return answer


async def retry_filtered(db: Store, resources: Resources, account_id: str, connection_id: str) -> dict[str, Any]:
    """Every filtered delivery of the connection whose reason its rules no longer give (a type now in
    ``event_types``, forwarding switched on again) goes back to pending, due now; the dispatcher checks the
    rules and the customer's consent again before it sends. 404 unless the account's connection."""
    connection = await resources.get(account_id, "connections", connection_id)
    await settle(db, account_id)
    async with db.transaction() as tx:
        reasons = await repo.filtered_reasons(tx, account_id, connection_id)
        lifted = lifted_reasons(connection, reasons)
        retried = await repo.retry_filtered(tx, account_id, connection_id, lifted, iso(utcnow()))
    return {"retried": retried, "reasons": lifted}


async def retry_failed(db: Store, resources: Resources, account_id: str, connection_id: str) -> dict[str, Any]:
    """Every failed and dead delivery of the connection back to pending, due now (each keeps its count of tries):
    after its config is fixed (a new token), one call instead of a retry per row. 404 unless the account's
    connection."""
    await resources.get(account_id, "connections", connection_id)
    async with db.transaction() as tx:
        retried = await repo.retry_failed(tx, account_id, connection_id, iso(utcnow()))
    return {"retried": retried}


async def retry(db: Store, account_id: str, delivery_id: str) -> dict[str, Any]:
    """A failed or dead delivery goes back to pending, due now (its count of tries is kept); so does a filtered
    one whose reason the connection's rules no longer give (409 naming the reason while they still do)."""
    await settle(db, account_id)
    async with db.transaction() as tx:
        found = await repo.by_id(tx, account_id, delivery_id)
        if found is None:
            raise NotFound("Delivery not found", f"no delivery with id {delivery_id} in this account")
        if found.state == "filtered":
            connection = await documents.get(tx, "connections", account_id, found.connection_id)
            lifted = lifted_reasons(connection.body, [found.reason]) if connection is not None else []
            if not lifted:
                raise Conflict("Still filtered", f"the delivery is filtered because {found.reason}: change the "
                               "connection (its event_types, forward_* or enabled) so that it lets it through")
            await repo.retry_filtered(tx, account_id, found.connection_id, lifted, iso(utcnow()), delivery_id)
        elif not await repo.retry(tx, account_id, delivery_id, iso(utcnow())):
            raise Conflict("Not retryable", "only failed, dead or filtered deliveries can be retried")
    row = await repo.by_id(db.reader, account_id, delivery_id)
    assert row is not None  # retried just now; deleted only with its account
    return (await _views(db.reader, account_id, [row]))[0]


async def test_connection(db: Store, account_id: str, connection_id: str,
                          send_test: Callable[[dict[str, Any], str], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """The connection's own test (``send_test`` is the dispatcher's): 404 unless the account's connection."""
    row = await documents.get(db.reader, "connections", account_id, connection_id)
    if row is None:
        raise NotFound("Connection not found", f"no connection with id {connection_id} in this account")
    return await send_test(row.body, account_id)


async def connections_near_sunset(db: Store, today: date) -> list[dict[str, Any]]:
    """Every connection whose vendor API version ends within the warning window (or has ended)."""
    connections = [{**doc.body, "id": doc.id, "account_id": doc.account_id}
                   for doc in await documents.every_document(db.reader, "connections")]
    return versions.near_sunset(connections, today)


async def version_gauge(db: Store) -> list[tuple[str, str, str, int]]:
    """(connection_id, destination, api_version, days left) for the metrics, read at scrape time."""
    return [(c["id"], c["destination"], c["api_version"], c["days_left"])
            for c in await connections_near_sunset(db, date.today())]


async def state_gauge(db: Store) -> list[tuple[str, str, int]]:
    """(destination, state, count) of the outbox for the metrics, read at scrape time."""
    return await repo.counts_by_state(db.reader)
