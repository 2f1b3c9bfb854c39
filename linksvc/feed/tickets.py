"""Feed tickets (issue 37): how a browser's ``EventSource``, which cannot send the dashboard's header nor an
``Authorization`` header, opens the live feed (docs/decisions.md, "The dashboard's Live panel").

``POST .../accounts/{id}/feed/tickets``, made with the normal credentials (the dashboard's session and header, a
personal token, the operator token), answers a ticket: who asked (the :class:`Actor`), for which account, until
when (:data:`LIFETIME`), signed with HMAC-SHA256 under a key derived from the admin token (every worker and node has
it; a new admin token ends every ticket, as it ends every session). The feed of that account alone takes it as
``?ticket=``; nothing else does. It is checked when the stream opens, then the actor is held to the route's
permission as any other caller (:func:`linksvc.people.access.authorize`): a member removed meanwhile is refused.
Nothing is stored: a ticket cannot be revoked, so it lives a minute; a stream opened with it lasts as long as the
client stays. A client that reconnects after the ticket ran out asks for a new one and sends the last message's id
as ``last_event_id``. The access log never writes a query (:mod:`api.access_log`), so no ticket reaches a log.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from datetime import datetime, timedelta

import orjson

from linksvc.clock import iso
from linksvc.errors import Unauthorized
from linksvc.people.access import Actor

PREFIX = "lft_"
LIFETIME = timedelta(seconds=60)
_PURPOSE = b"linksvc feed ticket v1"


@dataclass(frozen=True, slots=True)
class Ticket:
    ticket: str
    expires_at: str


def _key(admin_token: str) -> bytes:
    return hmac.new(admin_token.encode(), _PURPOSE, hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def issue(admin_token: str, actor: Actor, account_id: str, now: datetime) -> Ticket:
    """A ticket for ``actor`` to open the feed of ``account_id`` until ``now`` + :data:`LIFETIME`."""
    expires = now + LIFETIME
    claims = {"a": account_id, "k": actor.kind, "p": actor.person_id, "t": actor.token_id, "ta": actor.token_account,
              "tr": actor.token_role, "e": int(expires.timestamp())}
    payload = _b64(orjson.dumps(claims))
    signature = _b64(hmac.new(_key(admin_token), payload.encode(), hashlib.sha256).digest())
    return Ticket(f"{PREFIX}{payload}.{signature}", iso(expires))


def actor_of(admin_token: str, ticket: str, account_id: str, now: datetime) -> Actor:
    """Who the ticket was issued to; Unauthorized when it is not one of ours, has run out or names another
    account."""
    refused = Unauthorized("Invalid ticket", "the feed ticket is not valid for this account or has expired: ask "
                                             "POST .../feed/tickets for a new one")
    if not ticket.startswith(PREFIX) or not ticket.isascii() or len(ticket) > 2000:
        raise refused
    payload, _, signature = ticket[len(PREFIX):].partition(".")
    expected = _b64(hmac.new(_key(admin_token), payload.encode(), hashlib.sha256).digest())
    if not hmac.compare_digest(signature.encode(), expected.encode()):
        raise refused
    try:
        claims = orjson.loads(_unb64(payload))
    except ValueError:
        raise refused from None
    if not isinstance(claims, dict) or claims.get("a") != account_id or not isinstance(claims.get("e"), int):
        raise refused
    if claims["e"] <= now.timestamp() or claims.get("k") not in ("operator", "person", "token"):
        raise refused
    return Actor(claims["k"], claims.get("p"), claims.get("t"), claims.get("ta"), claims.get("tr"))
