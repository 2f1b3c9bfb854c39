"""The dispatcher: sends pending deliveries, at least once, off the request path.

A loop first fans out the events and reversals accepted since its last pass (one ``fanout`` row each, written
with the event: :func:`linksvc.forwarding.outbox.fan_out` makes their deliveries, pending or filtered, in
their order, the workers and nodes taking turns), takes a batch of each replay running (bounded:
:mod:`linksvc.forwarding.replays`), then claims due deliveries under a lease (so another worker
process, or this one after a crash and a restart, or another node on PostgreSQL, takes them over only once the
lease has run out; there the claim is ``FOR UPDATE SKIP LOCKED`` and names this dispatcher, whose outcome is
recorded only while it still holds the claim: see :func:`storage.deliveries.claim`), at most ``concurrency``
in flight, each the first pending one of its connection and customer (a customer's deliveries reach a
connection in order: a reversal never overtakes its purchase). Each is mapped by its destination's pure
builder at send time (so a rotated secret or a new endpoint applies to retries) and sent; outcomes are
recorded in batches:

    the vendor accepted it             delivered (2xx, and the body says so: see
                                       :mod:`linksvc.forwarding.verdicts` and each destination's ``judge``)
    the builder filters it             filtered, with the reason
    the vendor would drop it silently  skipped, with the reason (too old, a name it refuses)
    network error, timeout, 408, 429, 5xx, or the body says "later"
                                       retried after ``backoff`` × 2^(tries-1) with jitter, at least the
                                       ``Retry-After`` given; after ``max_tries``: dead
    401 from an OAuth destination      a fresh access token once, and sent again at once
    the vendor refused the data        failed, with the vendor's code and message (not retried; the admin
                                       API can retry it by hand); any other status, 3xx included, too
    an address that is not public      failed, with the refusal as the last error (unless private
                                       destinations are allowed; see :mod:`linksvc.netguard`)

Before the builder runs, the event gets the click behind its ``tracking_id`` (``event["click"]``: user agent,
referer, time, the link's destination) for the destinations that ask for them (Meta's website events), and
an OAuth connection gets a current access token (:mod:`linksvc.forwarding.oauth`).

The demo's connections name a placeholder host that the dispatcher replaces, for demo accounts only, with the
service's own address (:mod:`linksvc.demo.endpoints`): their deliveries never leave the machine.

Redirects are never followed: a destination cannot send the request on to another host (or past the guard).
An error kept as a delivery's ``last_error`` (and shown by the admin API) never holds the credentials of the
endpoint URL (:func:`linksvc.redaction.redact_error`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import socket
import time
import uuid
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timedelta
from functools import partial
from typing import Any

import aiohttp

from linksvc.clock import iso, utcnow
from linksvc.demo.endpoints import NOT_LISTENING, DemoEndpoints
from linksvc.forwarding import click_hooks, outbox, replays, webhook
from linksvc.forwarding.destinations import build, build_test, judge
from linksvc.forwarding.oauth import TokenCache, TokenError
from linksvc.forwarding.outgoing import Filtered, Outgoing, Skipped
from linksvc.forwarding.sender import Answer, send
from linksvc.forwarding.verdicts import DELIVERED, FAILED, Verdict
from linksvc.identity import HEADERS
from linksvc.netguard import PublicOnlyResolver, RefusedDestination
from linksvc.redaction import mask_url_credentials, redact_error
from storage import clicks as click_repo
from storage import customers as customer_repo
from storage import deliveries as repo
from storage import documents
from storage import events as event_repo
from storage import replays as replay_repo
from storage.db import AnyDatabase, Tx
from storage.deliveries import DeliveryRecord
from storage.postgres import PgConnection, PostgresDatabase

log = logging.getLogger("linksvc.forwarding")
MAX_DELAY_SECONDS = 3600.0
POLL_SECONDS = 0.5
CLICK_POLL_SECONDS = 1.0
"""How often the stored clicks are looked at for the ``link.clicked`` webhooks (:mod:`.click_hooks`)."""


@dataclass(frozen=True)
class Outcome:
    seq: int
    state: str
    tries: int
    next_attempt_at: str
    status: int | None = None
    error: str | None = None
    reason: str | None = None


def backoff_delay(tries: int, base: float, retry_after: float | None) -> float:
    """Exponential with equal jitter (half fixed, half random), never shorter than ``Retry-After``."""
    # The exponent stops growing once the cap is reached (2 ** 1024 would not fit a float).
    ceiling = min(MAX_DELAY_SECONDS, base * 2.0 ** min(max(0, tries - 1), 64))
    delay = ceiling / 2 + random.uniform(0, ceiling / 2)
    return min(MAX_DELAY_SECONDS, max(delay, retry_after or 0.0))


class Dispatcher:
    def __init__(self, db: AnyDatabase, concurrency: int = 16, max_tries: int = 8, backoff: float = 1.0,
                 timeout: float = 10.0, allow_private: bool = False, lease_seconds: float | None = None) -> None:
        self.db = db
        # How long a claim keeps other workers off a delivery: longer than a try can take (the timeout).
        self.lease_seconds = lease_seconds if lease_seconds is not None else timeout * 2 + 1
        # Names this dispatcher's claims on PostgreSQL, where several nodes share the outbox.
        self.node = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        self.concurrency = concurrency
        self.max_tries = max_tries
        self.backoff = backoff
        self.timeout = timeout
        self.allow_private = allow_private
        self._wake = asyncio.Event()
        self._inflight: set[asyncio.Task[None]] = set()
        self._outcomes: list[Outcome] = []
        self._task: asyncio.Task[None] | None = None
        self._session: aiohttp.ClientSession | None = None
        self._resolver: PublicOnlyResolver | None = None
        self._stopping = False
        self.tokens = TokenCache(allow_private)
        self.sent = 0
        self.demo: DemoEndpoints | None = None  # where the demo's deliveries go (set by the app)
        self._clicks_at = 0.0  # when the clicks were last looked at (monotonic)

    def wake(self) -> None:
        """New deliveries are waiting (called after an event commits)."""
        self._wake.set()

    # -- sending one ---------------------------------------------------------------------------------------

    async def _send(self, account_id: str, request: Outgoing, now: datetime) -> Answer | None:
        """Sends ``request``; a demo delivery goes to the service itself. None: the service does not listen
        yet, so the demo delivery waits (without counting a try)."""
        assert self._session is not None
        local = await self.demo.local_url(account_id, request.url) if self.demo is not None else None
        if local is NOT_LISTENING:
            return None
        if isinstance(local, str):  # the service's own address: the one loopback destination always allowed
            return await send(self._session, replace(request, url=local), True, now)
        return await send(self._session, request, self.allow_private, now)

    def _retry_or_dead(self, row: DeliveryRecord, tries: int, now: datetime, status: int | None, error: str,
                       retry_after: float | None = None) -> Outcome:
        if tries >= self.max_tries:
            return Outcome(row.seq, "dead", tries, iso(now), status, error)
        delay = backoff_delay(tries, self.backoff, retry_after)
        return Outcome(row.seq, "pending", tries, iso(now + timedelta(seconds=delay)), status, error)

    async def _attempt(self, row: DeliveryRecord) -> Outcome:
        if row.trigger == click_hooks.TRIGGER:
            return await self._attempt_clicks(row)
        now = utcnow()
        tries = int(row.tries) + 1
        reader = self.db.reader
        stored = await event_repo.by_id(reader, row.account_id, row.event_id)
        connection_row = await documents.get(reader, "connections", row.account_id, row.connection_id)
        if stored is None or connection_row is None:
            return Outcome(row.seq, "filtered", row.tries, iso(now), reason="the event or connection is gone")
        connection = connection_row.body
        if not connection.get("enabled", True):
            return Outcome(row.seq, "filtered", row.tries, iso(now), reason="connection disabled")
        event = stored.as_dict()
        customer = None
        if stored.customer_id:
            person = await customer_repo.customer_by(reader, row.account_id, "id", stored.customer_id)
            customer = person.body if person is not None else None
        event["click"] = await self._click_of(row.account_id, event["body"])
        assert self._session is not None
        destination = row.destination
        request: Outgoing | Filtered | None = None
        try:
            for fresh_token in (False, True):
                if fresh_token:
                    self.tokens.invalidate(connection)
                current = await self.tokens.with_token(self._session, connection)
                request = build(destination, row.kind, event, customer, current, row.dedup_key, now,
                                trigger=row.trigger)
                if isinstance(request, Skipped):
                    return Outcome(row.seq, "skipped", row.tries, iso(now), reason=request.reason)
                if isinstance(request, Filtered):
                    return Outcome(row.seq, "filtered", row.tries, iso(now), reason=request.reason)
                sent = await self._send(row.account_id, request, now)
                if sent is None:
                    return Outcome(row.seq, "pending", row.tries, iso(now + timedelta(seconds=POLL_SECONDS)))
                answer = sent
                verdict = judge(destination, answer.status, answer.body, request)
                if not verdict.token_expired:
                    break
        except TokenError as exc:
            if exc.retry:
                return self._retry_or_dead(row, tries, now, None, str(exc))
            return Outcome(row.seq, "failed", tries, iso(now), None, str(exc))
        except RefusedDestination as exc:
            url = request.url if isinstance(request, Outgoing) else ""
            refusal = redact_error(str(exc), url)
            log.warning("delivery %s %s", row.id, refusal)
            return Outcome(row.seq, "failed", tries, iso(now), None, refusal)
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            url = request.url if isinstance(request, Outgoing) else ""
            error = redact_error(f"{type(exc).__name__}: {exc}", url)
            return self._retry_or_dead(row, tries, now, None, error[:500])
        return self._outcome_of(row, tries, now, answer, verdict)

    async def _attempt_clicks(self, row: DeliveryRecord) -> Outcome:
        """A ``link.clicked`` delivery: its clicks as stored, signed as every webhook is, sent; filtered when the
        connection is off or no longer subscribes, or its clicks are gone."""
        now = utcnow()
        tries = int(row.tries) + 1
        connection_row = await documents.get(self.db.reader, "connections", row.account_id, row.connection_id)
        if connection_row is None:
            return Outcome(row.seq, "filtered", row.tries, iso(now), reason="the event or connection is gone")
        connection = connection_row.body
        if not connection.get("enabled", True):
            return Outcome(row.seq, "filtered", row.tries, iso(now), reason="connection disabled")
        if click_hooks.settings_of(connection) is None:
            return Outcome(row.seq, "filtered", row.tries, iso(now), reason=click_hooks.NOT_SUBSCRIBED)
        clicks = await click_hooks.clicks_of(self.db.reader, row.account_id, row.click_ids)
        if not clicks:
            return Outcome(row.seq, "filtered", row.tries, iso(now), reason=click_hooks.GONE)
        request = webhook.build_clicks(connection, click_hooks.click_lines(clicks), row.dedup_key, now)
        if isinstance(request, Filtered):
            return Outcome(row.seq, "filtered", row.tries, iso(now), reason=request.reason)
        try:
            sent = await self._send(row.account_id, request, now)
        except RefusedDestination as exc:
            refusal = redact_error(str(exc), request.url)
            log.warning("delivery %s %s", row.id, refusal)
            return Outcome(row.seq, "failed", tries, iso(now), None, refusal)
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            error = redact_error(f"{type(exc).__name__}: {exc}", request.url)
            return self._retry_or_dead(row, tries, now, None, error[:500])
        if sent is None:
            return Outcome(row.seq, "pending", row.tries, iso(now + timedelta(seconds=POLL_SECONDS)))
        return self._outcome_of(row, tries, now, sent, judge("webhook", sent.status, sent.body, request))

    def _outcome_of(self, row: DeliveryRecord, tries: int, now: datetime, answer: Answer,
                    verdict: Verdict) -> Outcome:
        if verdict.outcome == DELIVERED:
            self.sent += 1
            return Outcome(row.seq, "delivered", tries, iso(now), answer.status, verdict.message)
        error = verdict.message or f"HTTP {answer.status}"
        if verdict.outcome == FAILED:
            return Outcome(row.seq, "failed", tries, iso(now), answer.status, error)
        return self._retry_or_dead(row, tries, now, answer.status, error, answer.retry_after)

    async def test(self, connection: dict[str, Any], account_id: str = "") -> dict[str, Any]:
        """Sends one synthetic event the vendor's own way of testing and says what the vendor answered."""
        if self._session is None:
            raise RuntimeError("the dispatcher is not running")
        now = utcnow()
        destination = str(connection.get("destination"))
        try:
            current = await self.tokens.with_token(self._session, connection)
            request = build_test(destination, current, now)
            if isinstance(request, Filtered):
                return {"outcome": "not_sent", "status": None, "message": request.reason}
            sent = await self._send(account_id, request, now)
            if sent is None:
                return {"outcome": "retry", "status": None, "message": "the service is not listening yet"}
            answer = sent
        except TokenError as exc:
            return {"outcome": "retry" if exc.retry else FAILED, "status": None, "message": str(exc)}
        except (RefusedDestination, aiohttp.ClientError, TimeoutError, OSError) as exc:
            url = request.url if isinstance(request, Outgoing) else ""
            return {"outcome": "retry", "status": None, "message": redact_error(f"{type(exc).__name__}: {exc}", url)}
        verdict = judge(destination, answer.status, answer.body, request)
        return {"outcome": verdict.outcome, "status": answer.status, "message": verdict.message}

    async def _click_of(self, account_id: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """The click behind the event's tracking_id, if the service recorded it."""
        tracking_id = (body.get("attribution") or {}).get("tracking_id")
        if not isinstance(tracking_id, str) or not tracking_id:
            return None
        found = await click_repo.click_by_tracking_id(self.db.reader, account_id, tracking_id)
        return asdict(found) if found is not None else None

    async def _deliver(self, row: DeliveryRecord) -> None:
        try:
            outcome = await self._attempt(row)
        except Exception as exc:  # a bug in a mapping must not stop the dispatcher; the delivery is kept
            log.exception("delivery %s failed unexpectedly", row.id)
            error = mask_url_credentials(f"internal error: {exc}")
            outcome = self._retry_or_dead(row, int(row.tries) + 1, utcnow(), None, error[:500])
        self._outcomes.append(outcome)
        self._wake.set()

    # -- the loop ---------------------------------------------------------------------------------------------

    async def _record(self) -> None:
        if not self._outcomes:
            return
        outcomes, self._outcomes = self._outcomes, []
        now = iso(utcnow())
        try:
            if isinstance(self.db, PostgresDatabase):  # run again, whole, if PostgreSQL refuses it as not serializable
                await self.db.write(partial(self._record_all, outcomes=outcomes, now=now))
            else:
                async with self.db.transaction() as tx:
                    await self._record_all(tx, outcomes, now)
        except Exception:  # kept for the next pass; the leases keep others off them meanwhile
            log.exception("recording %d delivery outcomes failed", len(outcomes))
            self._outcomes = outcomes + self._outcomes

    async def _record_all(self, tx: Tx, outcomes: list[Outcome], now: str) -> None:
        for o in outcomes:
            if not await repo.record(tx, o.seq, o.state, o.tries, o.next_attempt_at, o.status, o.error, o.reason,
                                     now, self.node) and isinstance(self.db, PostgresDatabase):
                log.info("delivery %s was taken over by another node after its lease ran out", o.seq)

    async def _fan_out(self) -> None:
        """Turns the events and reversals waiting in the outbox into their deliveries (a batch a pass, more
        passes while some wait), before due deliveries are claimed: see :func:`outbox.fan_out`."""
        try:
            if (await repo.fanout_waiting(self.db.reader)
                    and await self.db.write(outbox.fan_out, outbox.FAN_OUT_TURN) == outbox.FAN_OUT_BATCH):
                self._wake.set()  # more wait: another pass at once
        except Exception:  # kept for the next pass
            log.exception("fanning out deliveries failed")

    async def _replay(self) -> None:
        """A batch of each replay running (:func:`replays.step`): bounded, so that live deliveries are claimed
        between a replay's batches; more passes at once while a replay has more to take."""
        try:
            if (await replay_repo.any_active(self.db.reader)
                    and await self.db.write(replays.step, replays.REPLAY_TURN)):
                self._wake.set()
        except Exception:  # kept for the next pass: the replay's cursor moves only with its deliveries
            log.exception("taking a batch of a replay failed")

    async def _clicks(self) -> None:
        """About once a :data:`CLICK_POLL_SECONDS`, the stored clicks the ``link.clicked`` webhooks have not taken
        yet become their deliveries (:func:`click_hooks.step`)."""
        if time.monotonic() - self._clicks_at < CLICK_POLL_SECONDS:
            return
        self._clicks_at = time.monotonic()
        try:
            if await click_hooks.step(self.db):
                self._wake.set()
        except Exception:  # kept for the next pass: a cursor moves only with its deliveries
            log.exception("taking the clicks of the link.clicked webhooks failed")

    async def _claim(self, limit: int) -> list[DeliveryRecord]:
        now = utcnow()
        lease = now + timedelta(seconds=self.lease_seconds)
        db = self.db
        if isinstance(db, PostgresDatabase):
            # READ COMMITTED, as a queue claimed FOR UPDATE SKIP LOCKED wants: a row another node leased since
            # this statement began is read again and left out, where SERIALIZABLE would refuse the whole claim.
            async with db.pool.acquire() as conn, conn.transaction(isolation="read_committed"):
                return await repo.claim(PgConnection(conn), iso(now), iso(lease), limit, self.node)
        async with db.transaction() as tx:
            return await repo.claim(tx, iso(now), iso(lease), limit)

    async def _loop(self) -> None:
        while not self._stopping:
            self._wake.clear()
            await self._record()
            await self._fan_out()
            await self._replay()
            await self._clicks()
            claimed: list[DeliveryRecord] = []
            free = self.concurrency - len(self._inflight)
            if free > 0:
                try:
                    claimed = await self._claim(free)
                except Exception:
                    log.exception("claiming deliveries failed")
            for row in claimed:
                task = asyncio.create_task(self._deliver(row))
                self._inflight.add(task)
                task.add_done_callback(self._inflight.discard)
            if not claimed or len(self._inflight) >= self.concurrency:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), POLL_SECONDS)

    def start(self) -> None:
        timeout = aiohttp.ClientTimeout(total=self.timeout)
        # The resolver is the connector's own: the addresses it checks are the ones connected to.
        resolver = None if self.allow_private else PublicOnlyResolver()
        connector = aiohttp.TCPConnector(limit=self.concurrency, resolver=resolver)
        self._resolver = resolver
        self._session = aiohttp.ClientSession(timeout=timeout, connector=connector, headers=HEADERS)
        self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        """Stops claiming, lets what is in flight finish (bounded by the timeout), records the outcomes."""
        self._stopping = True
        self._wake.set()
        if self._task is not None:
            await self._task
        if self._inflight:
            await asyncio.wait(list(self._inflight), timeout=self.timeout + 1)
        await self._record()
        if self._session is not None:
            await self._session.close()
        if self._resolver is not None:  # a resolver given to a connector is not closed with it
            await self._resolver.close()
