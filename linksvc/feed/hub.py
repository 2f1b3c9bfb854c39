"""Each worker's one reader of the feed: :class:`FeedHub` polls the store about once a second for the accounts
that have subscribers, one read per account whatever their number, and hands what it found to each
:class:`Subscription`, which filters it for its client and keeps its own cursor.

Nothing here touches the click path: the hub reads what the click writer and the event batch stored, on the
store's background reader, and costs nothing while nobody follows a feed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from linksvc.clock import iso, utcnow
from linksvc.feed.cursor import Cursor, encode
from linksvc.periodic import Periodic
from linksvc.store import Store
from storage import feed as repo
from storage.feed import FeedClick, FeedEvent

log = logging.getLogger("linksvc.feed")

TICK_ROWS = 1000
"""Clicks (and events) read for an account in one tick at most: a burst is shown over the next ticks."""
MAX_PENDING = 5000
"""Messages a subscriber may have waiting at most: a client that reads slower than its account stores is let go
(its stream ends) and, reconnecting with its ``Last-Event-ID``, catches up through the backlog."""

Item = FeedClick | FeedEvent


def settled_before(settle: float) -> str:
    """Events received up to this moment are read (only PostgreSQL waits, ``storage.feed``)."""
    return iso(utcnow() - timedelta(seconds=settle))


def in_order(clicks: list[FeedClick], events: list[FeedEvent]) -> list[Item]:
    """Clicks and events merged by when they happened; each kind keeps its stored order."""
    items: list[Item] = []
    c = e = 0
    while c < len(clicks) or e < len(events):
        if e >= len(events) or (c < len(clicks) and clicks[c].clicked_at <= events[e].received_at):
            items.append(clicks[c])
            c += 1
        else:
            items.append(events[e])
            e += 1
    return items


@dataclass(frozen=True, slots=True)
class Message:
    """One server-sent event: ``id`` the cursor after it, ``event`` its kind (``click``, ``event``, ``gap``)."""

    id: str | None
    event: str
    item: Item | None = None  # None for a gap


class Subscription:
    """One client's stream: its filter, its cursor, the messages waiting for it. Iterate it for the messages;
    it ends when the hub closes, the client is let go (:data:`MAX_PENDING`) or :meth:`close` is called."""

    def __init__(self, account_id: str, cursor: Cursor, wants: Callable[[Item], bool],
                 position_key: Callable[[str], tuple[int, str]]) -> None:
        self.account_id = account_id
        self.cursor = cursor
        self._since = cursor  # what the client saw: live items up to it are not shown again
        self._wants = wants
        self._key = position_key
        self._queue: asyncio.Queue[Message | None] = asyncio.Queue()
        self._closed = False
        self._held: list[Item] | None = None  # while the backlog is read: what the hub hands meanwhile

    def _take(self, item: Item) -> Message | None:
        """The message of ``item`` after moving the cursor past it; None when filtered out or already seen."""
        if isinstance(item, FeedClick):
            if item.id <= self._since.click:
                return None
            self.cursor = Cursor(item.id, self.cursor.event)
            kind = "click"
        else:
            if self._key(item.position) <= self._key(self._since.event):
                return None
            self.cursor = Cursor(self.cursor.click, item.position)
            kind = "event"
        return Message(encode(self.cursor), kind, item) if self._wants(item) else None

    def hold(self) -> None:
        """Keeps what the hub hands until :meth:`caught_up`: the backlog is shown first."""
        self._held = []

    def caught_up(self, backlog: list[Item], gap: bool) -> None:
        """The backlog read, then what the hub handed meanwhile."""
        held, self._held = self._held or [], None
        self.offer(backlog, gap)
        self.offer(held)

    def offer(self, items: list[Item], gap: bool = False) -> None:
        if self._closed:
            return
        if self._held is not None:
            self._held.extend(items)
            return
        if gap:
            self._queue.put_nowait(Message(None, "gap"))
        for item in items:
            message = self._take(item)
            if message is not None:
                self._queue.put_nowait(message)
        if self._queue.qsize() > MAX_PENDING:
            log.info("a feed subscriber of account %s fell %d messages behind: let go", self.account_id,
                     self._queue.qsize())
            self.close()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._queue.put_nowait(None)

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Message:
        message = await self._queue.get()
        if message is None:
            self._queue.put_nowait(None)  # iterated again, it ends again
            raise StopAsyncIteration
        return message


@dataclass
class _Followed:
    head: Cursor  # what the hub read of the account so far
    subscribers: set[Subscription] = field(default_factory=set)


class FeedHub(Periodic):
    """The worker's reader of the feeds it serves (see the module's docstring)."""

    what = "reading the live feed"

    def __init__(self, db: Store, interval: float = 1.0, settle: float = repo.EVENT_SETTLE_SECONDS) -> None:
        super().__init__(interval, log)
        self.db = db
        self.settle = settle
        self._followed: dict[str, _Followed] = {}

    async def head(self, account_id: str) -> Cursor:
        """Where the store's clicks and the account's events end now: a new stream starts there."""
        conn = self.db.background
        return Cursor(await repo.click_horizon(conn),
                      await repo.last_event_position(conn, account_id, settled_before(self.settle)))

    async def follow(self, subscription: Subscription) -> Cursor:
        """Registers ``subscription``; returns the account's head as the hub holds it: the hub hands it every item
        after it, the caller reads what the client missed up to it."""
        followed = self._followed.get(subscription.account_id)
        if followed is None:
            head = await self.head(subscription.account_id)
            followed = self._followed.setdefault(subscription.account_id, _Followed(head))
        # no await from here on: the head and the registration belong together
        followed.subscribers.add(subscription)
        return followed.head

    def leave(self, subscription: Subscription) -> None:
        subscription.close()
        followed = self._followed.get(subscription.account_id)
        if followed is not None:
            followed.subscribers.discard(subscription)
            if not followed.subscribers:
                del self._followed[subscription.account_id]

    async def turn(self) -> None:
        if not self._followed:
            return
        conn = self.db.background
        horizon = await repo.click_horizon(conn)
        settled = settled_before(self.settle)
        for account_id, followed in list(self._followed.items()):
            head = followed.head
            clicks = await repo.clicks_between(conn, account_id, head.click, horizon, TICK_ROWS)
            events = await repo.events_between(conn, account_id, head.event, None, TICK_ROWS, settled)
            if self._followed.get(account_id) is not followed:
                continue  # its last subscriber left while the store was read
            click = clicks[-1].id if len(clicks) == TICK_ROWS else max(head.click, horizon)
            followed.head = Cursor(click, events[-1].position if events else head.event)
            items = in_order(clicks, events)
            if items:
                for subscription in list(followed.subscribers):
                    subscription.offer(items)

    def close_all(self) -> None:
        """Ends every stream (the server is stopping): clients reconnect elsewhere with their Last-Event-ID."""
        for followed in list(self._followed.values()):
            for subscription in list(followed.subscribers):
                subscription.close()
        self._followed.clear()
