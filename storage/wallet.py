"""Wallet lines and the ledger. Amounts are decimal text.

A wallet line is a lot of one reward a customer holds (an opening line, or one issued by an event); its
``amount`` is what is left of it. Every change to a line is a ledger entry, appended in the same
transaction as the change, so a line's ``amount`` always equals the sum of its entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from storage import customer_stats
from storage.db import Conn, Row, Tx, execute, fetch_all, fetch_one

OWNS = ("wallet_lines", "ledger_entries")

LINE_COLUMNS = (
    "id", "account_id", "customer_id", "reward_id", "campaign_id", "brand_id", "amount",
    "issued_at", "expiration_date", "reservation_expires_at", "source", "event_id",
)
# What makes two opening lines the same line (the amount compared is the opening amount, not what is left).
_OPENING_FIELDS = ("reward_id", "campaign_id", "brand_id", "issued_at", "expiration_date", "reservation_expires_at")


async def add_entry(tx: Tx, line: Row | dict[str, Any], kind: str, amount: Decimal, event_id: str | None,
                    now: str) -> None:
    await execute(
        tx,
        "INSERT INTO ledger_entries (account_id, customer_id, line_id, reward_id, kind, amount, event_id, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (line["account_id"], line["customer_id"], line["id"], line["reward_id"], kind, str(amount), event_id, now),
    )


async def insert_line(tx: Tx, line: dict[str, Any], kind: str, now: str) -> None:
    """A new line and its first entry (``opening`` or ``issue``) for its whole amount."""
    values = {"event_id": None, **line}
    marks = ", ".join("?" for _ in LINE_COLUMNS)
    await execute(tx, f"INSERT INTO wallet_lines ({', '.join(LINE_COLUMNS)}) VALUES ({marks})",
                  [values[c] for c in LINE_COLUMNS])
    await add_entry(tx, values, kind, Decimal(values["amount"]), values["event_id"], now)
    await customer_stats.add_points(tx, values["customer_id"], Decimal(values["amount"]))


async def change_line(tx: Tx, line: Row | dict[str, Any], delta: Decimal, kind: str, event_id: str | None,
                      now: str) -> Decimal:
    """Add ``delta`` (signed) to a line, with its entry; returns the new amount."""
    amount = Decimal(line["amount"]) + delta
    await execute(tx, "UPDATE wallet_lines SET amount = ? WHERE id = ?", (str(amount), line["id"]))
    await add_entry(tx, line, kind, delta, event_id, now)
    await customer_stats.add_points(tx, line["customer_id"], delta)
    return amount


async def replace_opening_lines(tx: Tx, account_id: str, customer_id: str, lines: Sequence[dict[str, Any]],
                                now: str) -> None:
    """The lines a customer was created or migrated with; issued lines are not touched.

    An opening line saved again unchanged stays as it is (with whatever was spent from it), so loading the
    same seed twice changes nothing. A changed or dropped one is closed by an ``adjust`` entry down to zero
    and removed; a new one comes with its ``opening`` entry."""
    existing = await fetch_all(
        tx,
        "SELECT w.*, (SELECT group_concat(amount, ' ') FROM ledger_entries e WHERE e.line_id = w.id "
        "AND e.kind = 'opening') AS opening FROM wallet_lines w "
        "WHERE w.account_id = ? AND w.customer_id = ? AND w.source = 'opening'",
        (account_id, customer_id),
    )
    wanted = {line["id"]: line for line in lines}
    for row in existing:
        new = wanted.get(row["id"])
        opening = sum((Decimal(a) for a in (row["opening"] or "").split()), Decimal(0))
        if new is not None and opening == Decimal(new["amount"]) and all(row[f] == new[f] for f in _OPENING_FIELDS):
            del wanted[row["id"]]
            continue
        if Decimal(row["amount"]) != 0:
            await change_line(tx, row, -Decimal(row["amount"]), "adjust", None, now)
        await execute(tx, "DELETE FROM wallet_lines WHERE id = ?", (row["id"],))
    for line in wanted.values():
        await insert_line(tx, line, "opening", now)


async def unexpired_lines(conn: Conn, account_id: str, customer_id: str, now: str) -> list[Row]:
    """The lines not yet expired and not used up, earliest expiration first."""
    return await fetch_all(
        conn,
        f"SELECT * FROM wallet_lines WHERE {_HELD} ORDER BY {_LINE_ORDER}",
        (account_id, customer_id, now),
    )


# The lines a wallet shows: not expired at ``now`` and not used up.
_HELD = ("account_id = ? AND customer_id = ? AND (expiration_date IS NULL OR expiration_date > ?) "
         "AND CAST(amount AS REAL) > 0")
_LINE_ORDER = "expiration_date IS NULL, expiration_date, issued_at, id"
# One statement (one snapshot, one row) gives the wallet's lines as one JSON array made by SQLite, in wallet
# order, and the rewards held, each with its lines' amounts and earliest expiration: the work per line stays
# inside SQLite (which runs without Python's GIL), however many lines there are. Amounts are decimal text, a
# JSON number as it is. An aggregate over an ordered subquery takes its rows in that order (SQLite does not
# flatten such a subquery); tests/storage/test_wallet_view.py checks the order against a model.
_WALLET_VIEW = f"""
WITH held AS (SELECT * FROM wallet_lines WHERE {_HELD})
SELECT
  (SELECT '[' || coalesce(group_concat(doc, ','), '') || ']' FROM (
     SELECT json_object(
       'amount', CASE WHEN json_valid(amount) THEN json(amount) ELSE CAST(amount AS REAL) END,
       'reward_id', reward_id, 'campaign_id', campaign_id, 'brand_id', brand_id, 'issued_at', issued_at,
       'expiration_date', expiration_date, 'reservation_expires_at', reservation_expires_at) AS doc
     FROM held ORDER BY {_LINE_ORDER})) AS lines,
  (SELECT json_group_array(json_array(reward_id, amounts, earliest)) FROM (
     SELECT reward_id, group_concat(amount, ' ') AS amounts, min(expiration_date) AS earliest
     FROM held GROUP BY reward_id ORDER BY earliest IS NULL, earliest, reward_id)) AS rewards
"""


async def wallet_view(conn: Conn, account_id: str, customer_id: str, now: str) -> tuple[str, str]:
    """``(lines, rewards)``: the held lines as JSON text, in wallet order; the rewards held as a JSON array of
    ``[reward_id, amounts separated by spaces, earliest expiration or null]``, earliest expiration first."""
    row = await fetch_one(conn, _WALLET_VIEW, (account_id, customer_id, now))
    assert row is not None  # an aggregate always answers one row
    return row["lines"], row["rewards"]


async def reward_bodies(conn: Conn, account_id: str, reward_ids: Sequence[str]) -> dict[str, str]:
    if not reward_ids:
        return {}
    marks = ", ".join("?" * len(reward_ids))
    rows = await fetch_all(conn, f"SELECT id, body FROM rewards WHERE account_id = ? AND id IN ({marks})",
                           (account_id, *reward_ids))
    return {row["id"]: row["body"] for row in rows}


async def lines_of_customer(tx: Tx, account_id: str, customer_id: str) -> list[Row]:
    """Every line of a customer (expired and used-up ones too), earliest expiration first."""
    return await fetch_all(
        tx,
        "SELECT * FROM wallet_lines WHERE account_id = ? AND customer_id = ? "
        "ORDER BY expiration_date IS NULL, expiration_date, issued_at, id",
        (account_id, customer_id),
    )


async def line(conn: Conn, line_id: str) -> Row | None:
    return await fetch_one(conn, "SELECT * FROM wallet_lines WHERE id = ?", (line_id,))


async def entries_of_customer(conn: Conn, account_id: str, customer_id: str) -> list[Row]:
    return await fetch_all(conn, "SELECT * FROM ledger_entries WHERE account_id = ? AND customer_id = ? ORDER BY id",
                           (account_id, customer_id))


async def ledger_mismatches(conn: Conn, account_id: str) -> list[dict[str, Any]]:
    """Lines whose amount is not the sum of their entries, and entries of removed lines that do not sum to
    zero. Sums are compared as decimals in Python (SQLite would sum binary floats)."""
    lines = await fetch_all(conn, "SELECT id, amount FROM wallet_lines WHERE account_id = ?", (account_id,))
    entries = await fetch_all(conn, "SELECT line_id, amount FROM ledger_entries WHERE account_id = ?", (account_id,))
    sums: dict[str, Decimal] = {}
    for entry in entries:
        sums[entry["line_id"]] = sums.get(entry["line_id"], Decimal(0)) + Decimal(entry["amount"])
    bad: list[dict[str, Any]] = []
    for row in lines:
        if Decimal(row["amount"]) != sums.pop(row["id"], Decimal(0)):
            bad.append({"line_id": row["id"], "amount": row["amount"], "entries": str(sums.get(row["id"]))})
    bad += [{"line_id": line_id, "amount": None, "entries": str(total)} for line_id, total in sums.items() if total]
    # The running points of each customer that has them equal the sum of the customer's lines.
    held: dict[str, Decimal] = {}
    lines_of_account = await fetch_all(conn, "SELECT customer_id, amount FROM wallet_lines WHERE account_id = ?",
                                       (account_id,))
    for row in lines_of_account:
        held[row["customer_id"]] = held.get(row["customer_id"], Decimal(0)) + Decimal(row["amount"])
    for row in await fetch_all(conn, "SELECT customer_id, points FROM customer_stats WHERE account_id = ?",
                               (account_id,)):
        if Decimal(row["points"]) != held.get(row["customer_id"], Decimal(0)):
            bad.append({"customer_id": row["customer_id"], "points": row["points"],
                        "lines": str(held.get(row["customer_id"], Decimal(0)))})
    return bad


async def issued_since(conn: Conn, account_id: str, customer_id: str, campaign_id: str, since: str) -> int:
    """How many lines a campaign issued to a customer since ``since`` (reversed ones included)."""
    row = await fetch_one(
        conn,
        "SELECT count(*) AS n FROM wallet_lines WHERE account_id = ? AND customer_id = ? AND campaign_id = ? "
        "AND source = 'event' AND issued_at >= ?",
        (account_id, customer_id, campaign_id, since),
    )
    return int(row["n"]) if row else 0


async def lapsed_lines(tx: Tx, account_id: str, customer_id: str, now: str) -> list[Row]:
    """Lines past their expiration that still hold something (they get their ``expire`` entry)."""
    return await fetch_all(
        tx,
        "SELECT * FROM wallet_lines WHERE customer_id = ? AND account_id = ? AND expiration_date <= ? "
        "AND CAST(amount AS REAL) > 0 ORDER BY expiration_date, id",
        (customer_id, account_id, now),
    )


async def open_lines_of_reward(tx: Tx, account_id: str, customer_id: str, reward_id: str, now: str) -> list[Row]:
    """A reward's unexpired lines that hold something, earliest expiration first (never-expiring last)."""
    return await fetch_all(
        tx,
        "SELECT * FROM wallet_lines WHERE customer_id = ? AND reward_id = ? AND account_id = ? "
        "AND (expiration_date IS NULL OR expiration_date > ?) AND CAST(amount AS REAL) > 0 "
        "ORDER BY expiration_date IS NULL, expiration_date, issued_at, id",
        (customer_id, reward_id, account_id, now),
    )
