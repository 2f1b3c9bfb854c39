"""Opening a feed: the client's filters and cursor checked, what it missed read (a bounded backlog), then the
live stream from the worker's :class:`~linksvc.feed.hub.FeedHub`.

What each message shows is made here (:func:`message_data`): a click's time, link, tracking id, platform, bot,
country, referrer host, UTM, rule, variant and route (clicks never store the client's address), an event's type,
customer, time and attribution.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from linksvc.accounts.service import get_account
from linksvc.clock import utcnow
from linksvc.errors import BadRequest
from linksvc.feed import tickets
from linksvc.feed.cursor import decode
from linksvc.feed.hub import FeedHub, Item, Message, Subscription, in_order, settled_before
from linksvc.jsoncodec import dumps
from linksvc.people.access import Actor
from linksvc.store import Store
from storage import feed as repo
from storage.feed import FeedClick, FeedEvent

KINDS = ("click", "event")
BACKLOG = 500
"""Clicks, and events, a reconnecting client is shown at most of what it missed: the newest of them, after a
``gap`` message when more were stored while it was away."""

Bots = Literal["include", "exclude", "only"]


@dataclass(frozen=True, slots=True)
class FeedFilter:
    kinds: frozenset[str]
    link_id: str | None
    bots: Bots

    def wants(self, item: Item) -> bool:
        if isinstance(item, FeedClick):
            return ("click" in self.kinds and (self.link_id is None or item.link_id == self.link_id)
                    and (self.bots == "include" or item.bot == (self.bots == "only")))
        return "event" in self.kinds and self.link_id is None and self.bots != "only"


def feed_filter(kinds: str | None, link_id: str | None, bots: Bots) -> FeedFilter:
    """The query's filters; 400 for a kind that is not ``click`` or ``event``. With ``link_id`` or ``bots=only``,
    events are left out (an event belongs to a customer, not to a link, and is no bot's)."""
    wanted = frozenset(k.strip() for k in (kinds or ",".join(KINDS)).split(",") if k.strip())
    unknown = sorted(wanted - set(KINDS))
    if unknown or not wanted:
        raise BadRequest("Invalid query", f"kinds is a comma-separated list of {', '.join(KINDS)}; "
                                          f"not {', '.join(unknown) or 'empty'}")
    return FeedFilter(wanted, link_id or None, bots)


async def open_feed(db: Store, hub: FeedHub, account_id: str, kinds: str | None, link_id: str | None, bots: Bots,
                    last_event_id: str | None) -> Subscription:
    """The account's stream for one client: from now, or after ``last_event_id`` (a message's ``id``), what it
    missed first (at most :data:`BACKLOG` of each kind, the newest, after a ``gap`` message when more were
    missed). 404 for an unknown account, 400 for an invalid filter or cursor."""
    wants = feed_filter(kinds, link_id, bots)
    await get_account(db.reader, account_id)
    since = decode(last_event_id) if last_event_id else None
    if since is not None and not repo.valid_event_position(db.reader, since.event):
        raise BadRequest("Invalid Last-Event-ID", "Last-Event-ID is the id of a message of this feed, as it was sent")
    start = since or await hub.head(account_id)
    subscription = Subscription(account_id, start, wants.wants, repo.position_key)
    if since is not None:
        subscription.hold()
    head = await hub.follow(subscription)
    if since is None:
        return subscription
    try:
        conn = db.background
        clicks = await repo.clicks_between(conn, account_id, since.click, head.click, BACKLOG + 1, newest=True)
        events: list[FeedEvent] = []
        if repo.position_key(head.event) > repo.position_key(since.event):
            events = await repo.events_between(conn, account_id, since.event, head.event, BACKLOG + 1,
                                               settled_before(hub.settle), newest=True)
    except BaseException:
        hub.leave(subscription)
        raise
    gap = len(clicks) > BACKLOG or len(events) > BACKLOG
    subscription.caught_up(in_order(clicks[-BACKLOG:], events[-BACKLOG:]), gap)
    return subscription


async def feed_ticket(db: Store, admin_token: str, actor: Actor, account_id: str) -> tickets.Ticket:
    """A ticket for ``actor`` (already allowed to read the account's feed) to open it as ``?ticket=``; 404 for an
    unknown account."""
    await get_account(db.reader, account_id)
    return tickets.issue(admin_token, actor, account_id, utcnow())


def message_data(message: Message) -> str:
    """The ``data:`` of a message, as JSON."""
    item = message.item
    if isinstance(item, FeedClick):
        return dumps({
            "time": item.clicked_at, "link_id": item.link_id, "code": item.code, "tracking_id": item.tracking_id,
            "platform": item.platform, "bot": item.bot, "country": item.country,
            "referrer_host": item.referrer_host, "utm": item.utm, "rule": item.rule, "variant": item.variant,
            "route": item.answer,
        })
    if item is not None:
        return dumps({"id": item.id, "type": item.type, "customer_id": item.customer_id, "time": item.issued_at,
                      "received_at": item.received_at, "attribution": item.attribution})
    return dumps({"missed": True, "shown": BACKLOG})
