"""A customer's running figures (``customer_stats``): purchase total and count, and points held.

The row is the customer's, but neither of the two modules that feed it is: ``storage.events`` knows purchases
and reversals, ``storage.wallet`` knows the lines whose amounts make up the points, and the ``customers`` row
itself is a document written by ``storage.documents``. So the stats are their own small aggregate with this one
writer; the behavior service calls it for purchases and reversals, and ``storage.wallet`` calls
:func:`add_points` in the same transaction as every change to a line, so points always equal the sum of the
customer's lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from storage.db import Conn, Row, Tx, execute, fetch_all, fetch_one, statement_chunks

OWNS = ("customer_stats",)


@dataclass(frozen=True, slots=True)
class Stats:
    customer_id: str
    account_id: str
    purchase_total: Decimal
    purchase_count: int
    points: Decimal


def _stats(row: Row) -> Stats:
    return Stats(row["customer_id"], row["account_id"], Decimal(row["purchase_total"]), int(row["purchase_count"]),
                 Decimal(row["points"]))


async def of_customer(conn: Conn, customer_id: str) -> Stats | None:
    row = await fetch_one(conn, "SELECT * FROM customer_stats WHERE customer_id = ?", (customer_id,))
    return _stats(row) if row is not None else None


async def of_customers(conn: Conn, customer_ids: Iterable[str]) -> dict[str, Stats]:
    """The stats rows of these customers that exist, by customer id (one statement)."""
    wanted = sorted(set(customer_ids))
    if not wanted:
        return {}
    marks = ", ".join("?" for _ in wanted)
    rows = await fetch_all(conn, f"SELECT * FROM customer_stats WHERE customer_id IN ({marks})", wanted)
    return {row["customer_id"]: _stats(row) for row in rows}


async def insert(tx: Tx, stats: Stats) -> None:
    await execute(tx, "INSERT INTO customer_stats (customer_id, account_id, purchase_total, purchase_count, points) "
                  "VALUES (?, ?, ?, ?, ?)", (stats.customer_id, stats.account_id, str(stats.purchase_total),
                                             stats.purchase_count, str(stats.points)))


async def put_many(tx: Tx, stats: Sequence[Stats]) -> None:
    """Each customer's figures as given, the row inserted or replaced, a few hundred per statement."""
    for chunk in statement_chunks(stats):
        marks = ", ".join("(?, ?, ?, ?, ?)" for _ in chunk)
        await execute(
            tx,
            "INSERT INTO customer_stats (customer_id, account_id, purchase_total, purchase_count, points) "
            f"VALUES {marks} ON CONFLICT (customer_id) DO UPDATE SET purchase_total = excluded.purchase_total, "
            "purchase_count = excluded.purchase_count, points = excluded.points",
            [v for s in chunk for v in (s.customer_id, s.account_id, str(s.purchase_total), s.purchase_count,
                                        str(s.points))],
        )


async def set_purchases(tx: Tx, customer_id: str, total: Decimal, count: int) -> None:
    """``total`` and ``count`` are the new running values (after this purchase or reversal)."""
    await execute(tx, "UPDATE customer_stats SET purchase_total = ?, purchase_count = ? WHERE customer_id = ?",
                  (str(total), count, customer_id))


async def add_points(tx: Tx, customer_id: str, delta: Decimal) -> None:
    """Adds ``delta`` to ``points`` when the customer's row exists (it is built on the first event)."""
    if delta:
        row = await fetch_one(tx, "SELECT points FROM customer_stats WHERE customer_id = ?", (customer_id,))
        if row is not None:
            await execute(tx, "UPDATE customer_stats SET points = ? WHERE customer_id = ?",
                          (str(Decimal(row["points"]) + delta), customer_id))
