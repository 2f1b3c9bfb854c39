"""An account's catalog: brands and tiers as the storefront API shows them, and what ingest reads of it for
every batch of events (the BEHAVIOR campaigns, the tiers, the active custom event types, the enabled
connections).

Each worker holds the catalogs it read in a :class:`linksvc.readmodel.ReadModel` (model ``catalog``): the
triggers of migration 0016 advance its generation with every insert, update or delete of ``brands``, ``tiers``,
``campaigns``, ``custom_event_types`` and ``connections``, before the write is answered, so the next request on
any worker reads the catalog afresh. The held bodies are shared by the requests that read them: nothing may
change them (the storefront serializes them, the rules only read them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from linksvc.readmodel import ReadModel, read_model
from linksvc.store import Store
from storage import deliveries as delivery_repo
from storage import documents
from storage import events as event_repo
from storage.db import Conn

MAX_CATALOGS_HELD = 10_000  # accounts


@dataclass(frozen=True, slots=True)
class Catalog:
    brands: tuple[dict[str, Any], ...]  # the storefront's order
    tiers: tuple[dict[str, Any], ...]  # the storefront's order (by level, lowest first)
    tier_rules: tuple[dict[str, Any], ...]  # the tiers in the order ingest has always read them
    behavior_campaigns: tuple[dict[str, Any], ...]
    active_types: frozenset[str]  # names of the active custom event types
    connections: tuple[dict[str, Any], ...]  # the enabled ones


# No limit: the largest a LIMIT takes on both stores (PostgreSQL refuses SQLite's -1).
ALL_ROWS = (1 << 63) - 1


async def list_bodies(conn: Conn, table: str, account_id: str) -> list[dict[str, Any]]:
    return [doc.body for doc in await documents.list_all(conn, table, account_id)]


async def load(conn: Conn, account_id: str) -> Catalog:
    """The account's catalog as stored now, a few statements."""
    return Catalog(
        brands=tuple(await list_bodies(conn, "brands", account_id)),
        tiers=tuple(await list_bodies(conn, "tiers", account_id)),
        tier_rules=tuple(await event_repo.tiers(conn, account_id)),
        behavior_campaigns=tuple(await event_repo.behavior_campaigns(conn, account_id)),
        active_types=frozenset(await event_repo.active_custom_type_names(conn, account_id, ALL_ROWS)),
        connections=tuple(doc.body for doc in await delivery_repo.connections(conn, account_id)),
    )


def model(store: Store) -> ReadModel[str, Catalog]:
    return read_model(store, "catalog", MAX_CATALOGS_HELD)


async def catalog_of(store: Store, account_id: str, conn: Conn | None = None) -> Catalog:
    """The account's catalog, held or read (on ``conn``, the reader by default: the write path passes its own
    transaction, so that a catalog it reads is the one its events are applied against)."""
    found = await model(store).get(account_id, lambda: load(store.reader if conn is None else conn, account_id))
    assert found is not None
    return found


async def brands(store: Store, account_id: str) -> list[dict[str, Any]]:
    return list((await catalog_of(store, account_id)).brands)


async def tiers(store: Store, account_id: str) -> list[dict[str, Any]]:
    """Ordered by level, lowest first."""
    return list((await catalog_of(store, account_id)).tiers)
