"""The feed's cursor: the ``id:`` of each message and the ``Last-Event-ID`` a client reconnects with.

It holds where the client's stream stands in both kinds at once: the last click id and the last event position
(``storage.feed``), so that a stream resumed from it shows exactly what came after, on any worker or node and
after a restart. The text is opaque to clients (URL-safe base64 of ``<click id>:<event position>``).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from linksvc.errors import BadRequest

MAX_CURSOR = 512  # characters: a position is a click id and an event's time and id


@dataclass(frozen=True, slots=True)
class Cursor:
    click: int  # every click of the account up to this id was shown (or filtered out)
    event: str  # every event of the account up to this position was shown ("" before the first one)


def encode(cursor: Cursor) -> str:
    return base64.urlsafe_b64encode(f"{cursor.click}:{cursor.event}".encode()).decode().rstrip("=")


def decode(text: str) -> Cursor:
    """The cursor a client sent back; 400 when it is not one the feed gave."""
    invalid = BadRequest("Invalid Last-Event-ID", "Last-Event-ID is the id of a message of this feed, as it was "
                                                  "sent; leave it out to start from now")
    if not text or len(text) > MAX_CURSOR:
        raise invalid
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise invalid from None
    click, sep, event = raw.partition(":")
    if not sep or not click.isdigit() or len(click) > 19 or not event.isprintable():
        raise invalid
    return Cursor(int(click), event)
