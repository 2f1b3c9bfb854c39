"""The audit log: who changed what in an account through the admin API, when and from where.

A change request names its entry before its handler runs (:func:`recording`); the first write unit or
transaction the handler commits carries the entry, so the change and its record commit together
(:mod:`storage.audit_log`). A request that commits nothing (refused, invalid, or a change that changes nothing
the store is asked to write) leaves no entry. The fields are those the request sent, secret-named ones masked at
any depth and URL credentials hidden (:func:`linksvc.redaction.mask_config`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from typing import Any

from linksvc.accounts.service import get_account
from linksvc.clock import iso, utcnow
from linksvc.errors import InvalidField
from linksvc.jsoncodec import dumps, loads
from linksvc.people.access import Actor
from linksvc.redaction import mask_config
from linksvc.store import Store
from storage import audit_log as repo
from storage.audit_log import AuditFilter, AuditRecord, pending
from storage.db import Tx


def entry_of(actor: Actor, account_id: str, object_kind: str, object_id: str, action: str, fields: Any,
             client: str) -> AuditRecord:
    masked = mask_config(fields) if isinstance(fields, dict | list) else {}
    return AuditRecord(str(uuid.uuid4()), _text(account_id), actor.kind, actor.id, actor.person_id, object_kind,
                       _text(object_id), action, dumps(masked), client, iso(utcnow()))


def _text(value: str) -> str:
    """A path's value as the store can hold it (PostgreSQL's text holds no U+0000)."""
    return value.replace("\x00", "\\u0000")


@contextmanager
def recording(record: AuditRecord) -> Iterator[None]:
    """Within the block, the request's first committed write carries ``record``."""
    token = repo.PENDING.set(repo.pending_entry(record))
    try:
        yield
    finally:
        repo.PENDING.reset(token)


async def record_each(tx: Tx, object_ids: Sequence[str], fields: Any) -> None:
    """A bulk change's record (issue 36): the request's pending entry once for each object it changed, naming the
    object and ``fields`` (the change, not the whole selection), in place of the request's one entry; none when it
    changed nothing. Written in ``tx``, the change's own transaction."""
    entry = pending()
    if entry is None:
        return
    entry.written = True  # the request's one entry is not written beside these
    masked = dumps(mask_config(fields) if isinstance(fields, dict | list) else {})
    for object_id in object_ids:
        await repo.insert(tx, replace(entry.record, id=str(uuid.uuid4()), object_id=_text(object_id), fields=masked))


def entry_view(record: AuditRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "at": record.at,
        "actor": {"kind": record.actor_kind, "id": record.actor_id, "person_id": record.person_id},
        "object": {"kind": record.object_kind, "id": record.object_id},
        "account_id": record.account_id or None,
        "action": record.action,
        "fields": loads(record.fields),
        "client": record.client,
    }


async def read_log(db: Store, account_id: str | None, limit: int, offset: int, actor: str | None = None,
                   object_kind: str | None = None, object_id: str | None = None, action: str | None = None,
                   since: datetime | None = None, until: datetime | None = None) -> tuple[list[dict[str, Any]], int]:
    """A page of the account's log (``account_id`` None: of every account and of none, the operator's and a
    person's own view), the newest first, and how many entries match. ``actor`` is "operator", a person's id
    (their sessions' and tokens' entries) or a token's id; ``since`` and ``until`` bound ``at``."""
    if account_id is not None:
        await get_account(db.reader, account_id)
    try:
        bounds = [None if moment is None else iso(moment) for moment in (since, until)]
    except (OverflowError, ValueError):  # a time at the calendar's edge in another zone
        raise InvalidField("since", "is not a time the log can hold", "Invalid query", rule="range") from None
    f = AuditFilter(account_id, actor, object_kind, object_id, action, bounds[0], bounds[1])
    rows, total = await repo.page(db.reader, f, limit, offset)
    return [entry_view(r) for r in rows], total
