"""The dispatcher: sends pending deliveries, at least once, off the request path.

A loop claims due deliveries under a lease (so another worker process, or this one after a crash and a
restart, takes them over only once the lease has run out), at most ``concurrency`` in flight, each the first
pending one of its connection and customer (a customer's deliveries reach a connection in order: a reversal
never overtakes its purchase). Each is mapped by its destination's pure builder at send time (so a rotated
secret or a new endpoint applies to retries) and sent; outcomes are recorded in batches:

    2xx                                delivered
    the builder filters it             filtered, with the reason
    network error, timeout, 408, 429, 5xx
                                       retried after ``backoff`` × 2^(tries-1) with jitter, at least the
                                       ``Retry-After`` given; after ``max_tries``: dead
    any other status, 3xx included     failed (not retried; the admin API can retry it by hand)
    an address that is not public      failed, with the refusal as the last error (unless private
                                       destinations are allowed; see :mod:`linksvc.forwarding.guard`)

Redirects are never followed: a destination cannot send the request on to another host (or past the guard).
An error kept as a delivery's ``last_error`` (and shown by the admin API) never holds the credentials of the
endpoint URL (:func:`linksvc.redaction.redact_error`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

import aiohttp

from linksvc.clock import iso, utcnow
from linksvc.forwarding.destinations import build
from linksvc.forwarding.guard import PublicOnlyResolver, RefusedDestination, check_literal_host
from linksvc.forwarding.outgoing import Filtered
from linksvc.jsoncodec import loads
from linksvc.redaction import mask_url_credentials, redact_error
from storage import customers as customer_repo
from storage import deliveries as repo
from storage import documents
from storage import events as event_repo
from storage.db import Database, Row

log = logging.getLogger("linksvc.forwarding")
RETRYABLE = frozenset({408, 429})
MAX_DELAY_SECONDS = 3600.0
POLL_SECONDS = 0.5


@dataclass(frozen=True)
class Outcome:
    seq: int
    state: str
    tries: int
    next_attempt_at: str
    status: int | None = None
    error: str | None = None
    reason: str | None = None


def retry_after_seconds(value: str | None, now: datetime) -> float | None:
    """``Retry-After`` as seconds (a number, or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


def backoff_delay(tries: int, base: float, retry_after: float | None) -> float:
    """Exponential with equal jitter (half fixed, half random), never shorter than ``Retry-After``."""
    # The exponent stops growing once the cap is reached (2 ** 1024 would not fit a float).
    ceiling = min(MAX_DELAY_SECONDS, base * 2.0 ** min(max(0, tries - 1), 64))
    delay = ceiling / 2 + random.uniform(0, ceiling / 2)
    return min(MAX_DELAY_SECONDS, max(delay, retry_after or 0.0))


MAX_RESPONSE_BYTES = 1024 * 1024


async def read_bounded(response: aiohttp.ClientResponse, limit: int = MAX_RESPONSE_BYTES) -> bytes:
    """At most ``limit`` bytes of a destination's answer: an endless or huge body (a misbehaving or hostile
    endpoint) must not fill the memory. Beyond the limit the connection is dropped instead of drained."""
    body = bytearray()
    while len(body) <= limit:
        chunk = await response.content.read(64 * 1024)
        if not chunk:
            return bytes(body)
        body += chunk
    response.close()
    return bytes(body[:limit])


class Dispatcher:
    def __init__(self, db: Database, concurrency: int = 16, max_tries: int = 8, backoff: float = 1.0,
                 timeout: float = 10.0, allow_private: bool = False) -> None:
        self.db = db
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
        self.sent = 0

    def wake(self) -> None:
        """New deliveries are waiting (called after an event commits)."""
        self._wake.set()

    # -- sending one ---------------------------------------------------------------------------------------

    def _retry_or_dead(self, row: Row, tries: int, now: datetime, status: int | None, error: str,
                       retry_after: float | None = None) -> Outcome:
        if tries >= self.max_tries:
            return Outcome(row["seq"], "dead", tries, iso(now), status, error)
        delay = backoff_delay(tries, self.backoff, retry_after)
        return Outcome(row["seq"], "pending", tries, iso(now + timedelta(seconds=delay)), status, error)

    async def _attempt(self, row: Row) -> Outcome:
        now = utcnow()
        tries = int(row["tries"]) + 1
        reader = self.db.reader
        event_row = await event_repo.by_id(reader, row["account_id"], row["event_id"])
        connection_row = await documents.get(reader, "connections", row["account_id"], row["connection_id"])
        if event_row is None or connection_row is None:
            return Outcome(row["seq"], "filtered", row["tries"], iso(now), reason="the event or connection is gone")
        connection = loads(connection_row["body"])
        if not connection.get("enabled", True):
            return Outcome(row["seq"], "filtered", row["tries"], iso(now), reason="connection disabled")
        event: dict[str, Any] = {
            **dict(event_row), "body": loads(event_row["body"]), "effects": loads(event_row["effects"]),
            "reversal": loads(event_row["reversal"]) if event_row["reversal"] else None,
        }
        customer = None
        if event_row["customer_id"]:
            customer_row = await customer_repo.customer_by(reader, row["account_id"], "id", event_row["customer_id"])
            customer = loads(customer_row["body"]) if customer_row is not None else None
        request = build(row["destination"], row["kind"], event, customer, connection, row["id"], now,
                        trigger=row["trigger"])
        if isinstance(request, Filtered):
            return Outcome(row["seq"], "filtered", row["tries"], iso(now), reason=request.reason)
        assert self._session is not None
        try:
            if not self.allow_private:
                check_literal_host(request.url)  # names are checked by the session's resolver
            async with self._session.request(request.method, request.url, headers=request.headers,
                                             data=request.body, allow_redirects=False) as response:
                await read_bounded(response)
                status = response.status
                retry_after = retry_after_seconds(response.headers.get("Retry-After"), now)
        except RefusedDestination as exc:
            refusal = redact_error(str(exc), request.url)
            log.warning("delivery %s %s", row["id"], refusal)
            return Outcome(row["seq"], "failed", tries, iso(now), None, refusal)
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            error = redact_error(f"{type(exc).__name__}: {exc}", request.url)
            return self._retry_or_dead(row, tries, now, None, error[:500])
        if 200 <= status < 300:
            self.sent += 1
            return Outcome(row["seq"], "delivered", tries, iso(now), status)
        if status in RETRYABLE or status >= 500:
            return self._retry_or_dead(row, tries, now, status, f"HTTP {status}", retry_after)
        return Outcome(row["seq"], "failed", tries, iso(now), status, f"HTTP {status}")

    async def _deliver(self, row: Row) -> None:
        try:
            outcome = await self._attempt(row)
        except Exception as exc:  # a bug in a mapping must not stop the dispatcher; the delivery is kept
            log.exception("delivery %s failed unexpectedly", row["id"])
            error = mask_url_credentials(f"internal error: {exc}")
            outcome = self._retry_or_dead(row, int(row["tries"]) + 1, utcnow(), None, error[:500])
        self._outcomes.append(outcome)
        self._wake.set()

    # -- the loop ---------------------------------------------------------------------------------------------

    async def _record(self) -> None:
        if not self._outcomes:
            return
        outcomes, self._outcomes = self._outcomes, []
        now = iso(utcnow())
        try:
            async with self.db.transaction() as tx:
                for o in outcomes:
                    await repo.record(tx, o.seq, o.state, o.tries, o.next_attempt_at, o.status, o.error, o.reason, now)
        except Exception:  # kept for the next pass; the leases keep others off them meanwhile
            log.exception("recording %d delivery outcomes failed", len(outcomes))
            self._outcomes = outcomes + self._outcomes

    async def _claim(self, limit: int) -> list[Row]:
        now = utcnow()
        lease = now + timedelta(seconds=self.timeout * 2 + 1)
        async with self.db.transaction() as tx:
            return await repo.claim(tx, iso(now), iso(lease), limit)

    async def _loop(self) -> None:
        while not self._stopping:
            self._wake.clear()
            await self._record()
            claimed: list[Row] = []
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
        self._session = aiohttp.ClientSession(timeout=timeout, connector=connector)
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
