"""``POST /customers/migrate`` (product decisions, section 7): upsert customers in bulk.

Each customer is matched by ``external_id``, else ``document_number``; a match is updated with the fields
given (the others stay), no match is created. Each customer runs in its own savepoint, so one bad
customer fails alone and the others are stored.
"""

from __future__ import annotations

import time
from typing import Any

from linksvc.accounts.service import get_account
from linksvc.customers import ratelimit
from linksvc.errors import InvalidField, Issue, ServiceError
from linksvc.resources.kinds import KINDS
from linksvc.resources.service import save
from linksvc.store import Store, account_turn, in_one_unit
from linksvc.untrusted import MAX_JSON_DEPTH, nesting_exceeds
from storage import customers as repo
from storage.db import Tx, savepoint

MAX_CUSTOMERS = 500
MATCH_KEYS = ("external_id", "document_number")


async def _upsert(tx: Tx, account_id: str, index: int, raw: Any) -> str:
    prefix = f"customers[{index}]"
    if not isinstance(raw, dict):
        raise InvalidField(prefix, "must be an object", "Invalid customer", rule="type")
    if nesting_exceeds(raw, MAX_JSON_DEPTH):
        raise InvalidField(prefix, f"nests objects and arrays deeper than {MAX_JSON_DEPTH} levels",
                           "Invalid customer", rule="too_deep")
    existing = None
    unmatchable: list[Issue] = []
    for key in MATCH_KEYS:
        if isinstance(raw.get(key), str) and raw[key]:
            existing = await repo.customer_by(tx, account_id, key, raw[key])
            break
    else:
        # Named beside the customer's other problems: save() checks everything and writes nothing.
        unmatchable.append(Issue(prefix, "external_id or document_number is required to migrate a customer",
                                 "one_of_required", MATCH_KEYS))
    data = dict(raw) if existing is None else {**existing.body, **raw, "id": existing.id}
    _, changed = await save(tx, KINDS["customers"], account_id, data, prefix=prefix, issues_found=unmatchable)
    return "created" if existing is None else ("updated" if changed else "unchanged")


async def admit_migration(db: Store, account_id: str) -> None:
    """The rate limit of ``POST /customers/migrate``: production accounts only, 15 requests in any 5 seconds
    and 10,000 an hour (refusals are not counted); RateLimited when over."""
    account = await get_account(db.reader, account_id)
    if account.environment != "production":
        return
    now_ms = int(time.time() * 1000)

    async def unit(tx: Tx) -> None:
        await ratelimit.admit(tx, account_id, "customers.migrate", ratelimit.MIGRATE_WINDOWS, now_ms)

    await in_one_unit(db, unit)


async def migrate(db: Store, account_id: str, customers: list[Any]) -> dict[str, Any]:
    async def unit(tx: Tx) -> dict[str, Any]:
        result: dict[str, Any] = {"created": 0, "updated": 0, "unchanged": 0, "failed": []}
        for index, raw in enumerate(customers):
            try:
                async with savepoint(tx, "migrate_item"):
                    outcome = await _upsert(tx, account_id, index, raw)
            except ServiceError as exc:
                failure: dict[str, Any] = {"index": index, "error": exc.as_text()}
                if isinstance(exc, InvalidField):
                    failure["issues"] = [issue.as_dict() for issue in exc.issues]
                result["failed"].append(failure)
            else:
                result[outcome] += 1
        return result

    return await in_one_unit(db, unit, account_turn(account_id))
