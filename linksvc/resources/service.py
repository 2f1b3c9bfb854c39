"""Create, read, update, delete and upsert of account resources, for the admin API and seed files.

Every operation names its account; a resource of another account is "not found", never shown. The same
:func:`save` runs for the admin API and for seed files, so both apply the same rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from linksvc.accounts.service import get_account
from linksvc.clock import iso, utcnow
from linksvc.errors import Conflict, InvalidField, Issue, Issues, NotFound
from linksvc.forwarding import webhook_secrets
from linksvc.jsoncodec import dumps
from linksvc.resources.kinds import KINDS, Kind, SaveContext, parse
from linksvc.resources.validation import nul_issues
from linksvc.store import account_turn, in_one_unit
from storage import documents
from storage.db import AnyDatabase, Conn, Tx, dialect
from storage.documents import Document


def kind_of(name: str) -> Kind:
    return KINDS[name]


async def view(conn: Conn, kind: Kind, account_id: str, doc: Document) -> dict[str, Any]:
    extras = await kind.extras(conn, account_id, doc.body)
    return {**kind.public(doc.body), **extras, "created_at": doc.created_at, "updated_at": doc.updated_at}


async def save(
    tx: Tx, kind: Kind, account_id: str, data: Any, *, prefix: str = "",
    allow_private: bool = False, must_exist: bool | None = None, issues_found: Sequence[Issue] = (),
    refused: frozenset[str] = frozenset(),
) -> tuple[str, bool]:
    """Validate ``data`` and insert or update it. Returns (id, whether the document changed).

    ``must_exist``: True for update (404 when absent), False for create (409 when present), None for
    upsert. An id held by another account is refused in every case. An invalid document is refused (400)
    naming every problem: each field's, those of the kind's own rules (:meth:`Kind.check`) and
    ``issues_found`` by the caller before (then nothing is written). References to ``refused`` ids (objects
    of the same file refused already) are not checked.
    """
    issues = Issues()
    issues.extend(issues_found)
    item: Any = None
    with issues.collect():
        item = parse(kind, data, prefix)
    doc_id = item.id if item is not None else data.get("id") if isinstance(data, dict) else None
    row = await documents.get(tx, kind.name, account_id, doc_id) if isinstance(doc_id, str) else None
    existing = None if row is None else {**row.body, "created_at": row.created_at}
    now = iso(utcnow())
    ctx = SaveContext(tx, account_id, prefix, allow_private, existing, now, issues, refused)
    if isinstance(data, dict):
        await kind.check(ctx, data)
    issues.raise_if_any("Invalid body")
    if row is None and await documents.owner(tx, kind.name, item.id) is not None:
        raise Conflict("Id in use", {"field": f"{prefix}.id" if prefix else "id", "message": "id is already in use"})
    if must_exist is True and row is None:
        raise NotFound(f"{kind.label.capitalize()} not found", f"no {kind.label} with id {item.id}")
    if must_exist is False and row is not None:
        raise Conflict("Id in use", {"field": "id", "message": f"a {kind.label} with this id exists"})
    item = await kind.prepare(ctx, item)
    body = item.model_dump(mode="json")
    if dialect(tx) == "postgresql" and (nul := nul_issues(body, prefix)):
        raise InvalidField.of(nul, "Invalid body")
    if row is None:
        await documents.insert(tx, kind.name, account_id, item.id, dumps(body), kind.columns(item), now)
    elif row.body != body:
        await documents.update(tx, kind.name, account_id, item.id, dumps(body), kind.columns(item), now)
    else:
        # Unchanged: side tables are left as they are too, so a reload never resets live state.
        return item.id, False
    await kind.after_write(ctx, item)
    return item.id, True


class Resources:
    """The admin API's entry point to account resources."""

    def __init__(self, db: AnyDatabase, allow_private_destinations: bool) -> None:
        self.db = db
        self.allow_private = allow_private_destinations

    async def _get_row(self, conn: Conn, kind: Kind, account_id: str, doc_id: str) -> Document:
        row = await documents.get(conn, kind.name, account_id, doc_id)
        if row is None:
            await get_account(conn, account_id)
            raise NotFound(f"{kind.label.capitalize()} not found", f"no {kind.label} with id {doc_id}")
        return row

    async def create(self, account_id: str, kind_name: str, data: Any) -> dict[str, Any]:
        kind = kind_of(kind_name)
        data, shown_once = kind.generated(data)

        async def unit(tx: Tx) -> dict[str, Any]:
            await get_account(tx, account_id)
            doc_id, _ = await save(tx, kind, account_id, data, allow_private=self.allow_private, must_exist=False)
            return await view(tx, kind, account_id, await self._get_row(tx, kind, account_id, doc_id))

        created = await in_one_unit(self.db, unit, account_turn(account_id))
        for key, value in shown_once.items():
            both_objects = isinstance(value, dict) and isinstance(created.get(key), dict)
            created[key] = {**created[key], **value} if both_objects else value
        return created

    async def get(self, account_id: str, kind_name: str, doc_id: str) -> dict[str, Any]:
        kind = kind_of(kind_name)
        conn = self.db.reader
        return await view(conn, kind, account_id, await self._get_row(conn, kind, account_id, doc_id))

    async def list(
        self, account_id: str, kind_name: str, limit: int, offset: int
    ) -> tuple[list[dict[str, Any]], int]:
        kind = kind_of(kind_name)
        conn = self.db.reader
        await get_account(conn, account_id)
        rows = await documents.list_page(conn, kind.name, account_id, limit, offset)
        total = await documents.count(conn, kind.name, account_id)
        return [await view(conn, kind, account_id, row) for row in rows], total

    async def update(
        self, account_id: str, kind_name: str, doc_id: str, data: Any, *, partial: bool
    ) -> dict[str, Any]:
        """PUT (``partial`` False: ``data`` is the whole document) or PATCH (the fields to change; ``id`` is not
        one). The id is the path's."""
        kind = kind_of(kind_name)
        if not isinstance(data, dict):
            raise InvalidField("body", f"must be a JSON object (a {kind.label})", "Invalid body", rule="type")
        async def unit(tx: Tx) -> dict[str, Any]:
            row = await self._get_row(tx, kind, account_id, doc_id)
            stored = row.body
            merged = kind.restore_hidden(stored, {**stored, **data} if partial else dict(data))
            merged["id"] = doc_id
            fixed_id = [Issue("id", "is not a field a PATCH can change", "unknown_field")] if partial and "id" in data \
                else []
            await save(tx, kind, account_id, merged, allow_private=self.allow_private, must_exist=True,
                       issues_found=fixed_id)
            return await view(tx, kind, account_id, await self._get_row(tx, kind, account_id, doc_id))

        return await in_one_unit(self.db, unit, account_turn(account_id))

    async def rotate_webhook_secret(self, account_id: str, doc_id: str) -> dict[str, Any]:
        """Give a webhook connection a new signing secret; the one it replaces signs beside it for 24 hours.
        Returns the new secret (shown only here) and when the old one stops signing."""
        kind = kind_of("connections")

        async def unit(tx: Tx) -> dict[str, Any]:
            stored = (await self._get_row(tx, kind, account_id, doc_id)).body
            if stored.get("destination") != "webhook":
                raise InvalidField("destination", f"a {stored.get('destination')} connection has no signing secret "
                                                  "to rotate; only webhook connections do")
            config: dict[str, Any] = webhook_secrets.rotated(stored.get("config") or {}, utcnow())
            await save(tx, kind, account_id, {**stored, "config": config}, allow_private=self.allow_private,
                       must_exist=True)
            return config

        config = await in_one_unit(self.db, unit, account_turn(account_id))
        return {"secret": config[webhook_secrets.SECRET],
                "previous_secret_expires_at": config.get(webhook_secrets.PREVIOUS_EXPIRES)}

    async def delete(self, account_id: str, kind_name: str, doc_id: str) -> None:
        kind = kind_of(kind_name)

        async def unit(tx: Tx) -> None:
            await self._get_row(tx, kind, account_id, doc_id)
            users = await documents.referred_by(tx, kind.name, account_id, doc_id)
            if users:
                names = " and ".join(table.replace("_", " ") for table in users)
                raise Conflict(f"{kind.label.capitalize()} in use", f"{names} still refer to this {kind.label}")
            await documents.delete(tx, kind.name, account_id, doc_id)

        await in_one_unit(self.db, unit, account_turn(account_id))
