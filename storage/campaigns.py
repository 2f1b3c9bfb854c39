"""Campaign queries: the filtered, paged list of ``GET /campaigns``, restriction lists and coupon codes."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from storage.db import Conn, Tx, dialect, execute, execute_many, fetch_all, fetch_one, json_member

OWNS = ("campaign_restrictions", "coupon_codes", "campaign_versions")

DIMENSIONS = ("store", "channel", "product")


async def replace_restrictions(
    conn: Tx, campaign_id: str, dimension: str, values: Iterable[str] | None
) -> None:
    if dimension not in DIMENSIONS:
        raise KeyError(dimension)
    await execute(
        conn,
        "DELETE FROM campaign_restrictions WHERE campaign_id = ? AND dimension = ?",
        (campaign_id, dimension),
    )
    if values:
        await execute_many(
            conn,
            "INSERT OR IGNORE INTO campaign_restrictions (campaign_id, dimension, value) VALUES (?, ?, ?)",
            ((campaign_id, dimension, v) for v in values),
        )


async def replace_codes(
    conn: Tx, campaign_id: str, codes: Sequence[tuple[str, str, str | None]]
) -> None:
    await execute(conn, "DELETE FROM coupon_codes WHERE campaign_id = ?", (campaign_id,))
    if codes and dialect(conn) == "postgresql":
        await execute_many(
            conn,
            "INSERT INTO coupon_codes (campaign_id, code, status, expires_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (campaign_id, code) DO UPDATE SET status = excluded.status, expires_at = excluded.expires_at",
            ((campaign_id, code, status, expires) for code, status, expires in codes),
        )
    elif codes:
        await execute_many(
            conn,
            "INSERT OR REPLACE INTO coupon_codes (campaign_id, code, status, expires_at) "
            "VALUES (?, ?, ?, ?)",
            ((campaign_id, code, status, expires) for code, status, expires in codes),
        )


@dataclass(frozen=True, slots=True)
class CouponCode:
    code: str
    status: str
    expires_at: str | None


@dataclass(frozen=True, slots=True)
class CampaignRecord:
    """A campaign of a listing: its id, type and stored document (decoded here)."""

    id: str
    type: str
    body: dict[str, Any]


async def list_codes(conn: Conn, campaign_id: str) -> list[CouponCode]:
    rows = await fetch_all(
        conn,
        "SELECT code, status, expires_at FROM coupon_codes WHERE campaign_id = ? ORDER BY code",
        (campaign_id,),
    )
    return [CouponCode(r[0], r[1], r[2]) for r in rows]


@dataclass(frozen=True)
class CampaignQuery:
    """Filters of ``GET /campaigns``; None means "not filtered"."""

    account_id: str
    now: str
    type: str | None = None
    brand_id: str | None = None
    funded_by: str | None = None
    status: str | None = None
    labels: tuple[str, ...] = ()
    platform: str | None = None
    store_id: str | None = None
    channel_id: str | None = None
    product_id: str | None = None
    # customer eligibility: the customer's tier (None: has none) and the campaign types it refused
    customer_tier: str | None = None
    for_customer: bool = False
    refused_types: tuple[str, ...] = ()


# The status rule of linksvc.campaigns.status.campaign_status, as SQL over the copied columns.
_FINISHED = "(c.finished_at IS NOT NULL OR (c.ends_at IS NOT NULL AND c.ends_at <= :now))"
_STATUS_SQL = {
    "FINISHED": _FINISHED,
    "NOT FINISHED": f"NOT {_FINISHED}",
    "PAUSED": f"NOT {_FINISHED} AND c.paused = 1",
    "SCHEDULED": f"NOT {_FINISHED} AND c.paused = 0 AND c.starts_at IS NOT NULL AND c.starts_at > :now",
    "RUNNING": f"NOT {_FINISHED} AND c.paused = 0 AND (c.starts_at IS NULL OR c.starts_at <= :now)",
}
_RESTRICTIONS = (("store", "store_id", "stores_any"), ("channel", "channel_id", "channels_any"),
                 ("product", "product_id", "products_any"))


def _where(q: CampaignQuery, postgresql: bool = False) -> tuple[str, dict[str, object]]:
    clauses = ["c.account_id = :account_id"]
    params: dict[str, object] = {"account_id": q.account_id, "now": q.now}
    for column in ("type", "brand_id", "funded_by"):
        value = getattr(q, column)
        if value is not None:
            clauses.append(f"c.{column} = :{column}")
            params[column] = value
    if q.status is not None:
        clauses.append(_STATUS_SQL[q.status])
    if q.labels and postgresql:  # every wanted label is one of the campaign's
        clauses.append("jsonb_typeof(c.body -> 'labels') = 'array' AND c.body -> 'labels' @> :labels::jsonb")
        params["labels"] = json.dumps(list(q.labels))
    elif q.labels:
        clauses.append(
            "NOT EXISTS (SELECT 1 FROM json_each(:labels) AS want WHERE want.value NOT IN "
            "(SELECT value FROM json_each(c.body, '$.labels')))"
        )
        params["labels"] = json.dumps(list(q.labels))
    if q.platform is not None and postgresql:
        clauses.append("jsonb_typeof(c.body -> 'platforms') = 'array' "
                       "AND c.body -> 'platforms' @> jsonb_build_array(:platform::text)")
        params["platform"] = q.platform
    elif q.platform is not None:
        clauses.append("EXISTS (SELECT 1 FROM json_each(c.body, '$.platforms') WHERE value = :platform)")
        params["platform"] = q.platform
    for dimension, name, any_column in _RESTRICTIONS:
        value = getattr(q, name)
        if value is not None:
            # null list: in; a list: in only when it holds the id ([] holds nothing).
            clauses.append(
                f"(c.{any_column} = 1 OR EXISTS (SELECT 1 FROM campaign_restrictions r "
                f"WHERE r.dimension = '{dimension}' AND r.value = :{name} AND r.campaign_id = c.id))"
            )
            params[name] = value
    if q.for_customer:
        tier_rule = "json_type(c.body, '$.tier_ids') = 'null'"
        if postgresql:
            tier_rule = "jsonb_typeof(c.body -> 'tier_ids') = 'null'"
        if q.customer_tier is not None and postgresql:
            tier_rule += (" OR (jsonb_typeof(c.body -> 'tier_ids') = 'array' "
                          "AND c.body -> 'tier_ids' @> jsonb_build_array(:tier::text))")
            params["tier"] = q.customer_tier
        elif q.customer_tier is not None:
            tier_rule += " OR EXISTS (SELECT 1 FROM json_each(c.body, '$.tier_ids') WHERE value = :tier)"
            params["tier"] = q.customer_tier
        clauses.append(f"({tier_rule})")
        for i, refused in enumerate(q.refused_types):
            clauses.append(f"c.type != :refused{i}")
            params[f"refused{i}"] = refused
    return " AND ".join(clauses), params


async def list_campaigns(conn: Conn, q: CampaignQuery, offset: int, limit: int) -> tuple[list[CampaignRecord], int]:
    """One page of matching campaigns in list order, and the number of all matching campaigns."""
    return await campaign_page(conn, q, offset, limit), await count_campaigns(conn, q)


def explain_list(q: CampaignQuery) -> tuple[str, dict[str, object]]:
    """The page query of :func:`list_campaigns`, for EXPLAIN QUERY PLAN in benchmarks."""
    where, params = _where(q)
    sql = (f"SELECT c.id, c.type, c.body FROM campaigns c WHERE {where} "
           "ORDER BY c.sort_order, c.created_at, c.id LIMIT 50 OFFSET 0")
    return sql, params


async def codes_summaries(conn: Conn, campaign_ids: Sequence[str], now: str) -> dict[str, dict[str, int]]:
    """Per campaign: total, available, reserved, redeemed, expired; each code counted once
    (redeemed first, then expired, then reserved or available)."""
    if not campaign_ids:
        return {}
    marks = ", ".join("?" for _ in campaign_ids)
    live = "NOT (expires_at IS NOT NULL AND expires_at <= ?)"
    if dialect(conn) == "postgresql":  # no sum of booleans: counts of the rows that match
        rows = await fetch_all(
            conn,
            f"SELECT campaign_id, count(*) AS total, "
            f"count(*) FILTER (WHERE status = 'AVAILABLE' AND {live}) AS available, "
            f"count(*) FILTER (WHERE status = 'RESERVED' AND {live}) AS reserved, "
            f"count(*) FILTER (WHERE status = 'REDEEMED') AS redeemed, "
            f"count(*) FILTER (WHERE status != 'REDEEMED' AND NOT {live}) AS expired "
            f"FROM coupon_codes WHERE campaign_id IN ({marks}) GROUP BY campaign_id",
            (now, now, now, *campaign_ids),
        )
    else:
        rows = await fetch_all(
            conn,
            f"SELECT campaign_id, count(*) AS total, "
            f"sum(status = 'AVAILABLE' AND {live}) AS available, "
            f"sum(status = 'RESERVED' AND {live}) AS reserved, "
            f"sum(status = 'REDEEMED') AS redeemed, "
            f"sum(status != 'REDEEMED' AND NOT {live}) AS expired "
            f"FROM coupon_codes WHERE campaign_id IN ({marks}) GROUP BY campaign_id",
            (now, now, now, *campaign_ids),
        )
    found = {
        row["campaign_id"]: {k: int(row[k] or 0) for k in ("total", "available", "reserved", "redeemed", "expired")}
        for row in rows
    }
    empty = {"total": 0, "available": 0, "reserved": 0, "redeemed": 0, "expired": 0}
    return {cid: found.get(cid, dict(empty)) for cid in campaign_ids}


async def campaign_version(conn: Conn, account_id: str) -> int:
    """Changes whenever a campaign of the account changes (kept by triggers)."""
    row = await fetch_one(conn, "SELECT version FROM campaign_versions WHERE account_id = ?", (account_id,))
    return int(row[0]) if row else 0


async def next_transition(conn: Conn, account_id: str, now: str) -> str | None:
    """The earliest start or end after ``now`` of the account's campaigns: statuses change only then."""
    row = await fetch_one(  # PostgreSQL wants the subquery in FROM named; SQLite takes the name too
        conn,
        "SELECT min(t) FROM ("
        "SELECT min(starts_at) AS t FROM campaigns WHERE account_id = :a AND starts_at > :now "
        "UNION ALL SELECT min(ends_at) FROM campaigns WHERE account_id = :a AND ends_at > :now) AS transitions",
        {"a": account_id, "now": now},
    )
    return None if row is None else row[0]


async def count_campaigns(conn: Conn, q: CampaignQuery) -> int:
    where, params = _where(q, dialect(conn) == "postgresql")
    row = await fetch_one(conn, f"SELECT count(*) FROM campaigns c WHERE {where}", params)
    return int(row[0]) if row else 0


_STATUS_RANK = (f"(CASE WHEN {_FINISHED} THEN 3 WHEN c.paused = 1 THEN 2 "
                "WHEN c.starts_at IS NOT NULL AND c.starts_at > :now THEN 1 ELSE 0 END)")
CAMPAIGN_ORDERS: dict[str, tuple[tuple[str, ...], bool]] = {
    "order": (("c.sort_order", "c.created_at"), False), "created": (("c.created_at",), False),
    "starts": (("c.starts_at",), True), "ends": (("c.ends_at",), True), "status": ((_STATUS_RANK,), False),
    "name": ((), False),
}
"""The orders of the dashboard's list by name: the expressions sorted by (the name's is the store's own), and
whether they can be missing (NULL: put last either way). ``status`` ranks running, scheduled, paused, finished,
by the status rule at the query's ``now``."""


def _campaign_order(conn: Conn, sort: str, descending: bool) -> str:
    expressions, nullable = CAMPAIGN_ORDERS[sort]
    if sort == "name":  # the name's lower case, compared byte by byte on both stores
        name = f"lower({json_member(conn, 'c.body', 'name')})"
        expressions = (f'{name} COLLATE "C"' if dialect(conn) == "postgresql" else name,)
    way = "DESC" if descending else "ASC"
    first = f"({expressions[0]} IS NULL), " if nullable else ""
    return first + ", ".join(f"{e} {way}" for e in (*expressions, "c.id"))


async def campaign_page(conn: Conn, q: CampaignQuery, offset: int, limit: int, sort: str = "order",
                        descending: bool = False) -> list[CampaignRecord]:
    """One page of matching campaigns in the order ``sort`` (a key of :data:`CAMPAIGN_ORDERS`) names; ties are
    ordered by id, so offset paging shows each campaign once."""
    where, params = _where(q, dialect(conn) == "postgresql")
    rows = await fetch_all(
        conn,
        f"SELECT c.id, c.type, c.body FROM campaigns c WHERE {where} "
        f"ORDER BY {_campaign_order(conn, sort, descending)} LIMIT :limit OFFSET :offset",
        {**params, "limit": limit, "offset": offset},
    )
    return [CampaignRecord(r[0], r[1], orjson.loads(r[2])) for r in rows]


async def names_of(conn: Conn, account_id: str, campaign_ids: Iterable[str]) -> dict[str, str | None]:
    """The names of these campaigns of the account, by id (one statement; unknown ids are left out)."""
    wanted = sorted(set(campaign_ids))
    if not wanted:
        return {}
    name = json_member(conn, "body", "name")
    rows = await fetch_all(conn, f"SELECT id, {name} AS name FROM campaigns WHERE account_id = ? "
                                 f"AND id IN ({', '.join('?' for _ in wanted)})", (account_id, *wanted))
    return {row[0]: row[1] for row in rows}
