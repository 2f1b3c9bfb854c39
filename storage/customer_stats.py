"""A customer's running figures (``customer_stats``): purchase total and count, and points held.

The row is the customer's, but neither of the two modules that feed it is: ``storage.events`` knows purchases
and reversals, ``storage.wallet`` knows the lines whose amounts make up the points, and the ``customers`` row
itself is a document written by ``storage.documents``. So the stats are their own small aggregate with this one
writer; the behavior service calls it for purchases and reversals, and ``storage.wallet`` calls
:func:`add_points` in the same transaction as every change to a line, so points always equal the sum of the
customer's lines.
"""

from __future__ import annotations

from decimal import Decimal

from storage.db import Conn, Row, Tx, execute, fetch_one

OWNS = ("customer_stats",)


async def of_customer(conn: Conn, customer_id: str) -> Row | None:
    return await fetch_one(conn, "SELECT * FROM customer_stats WHERE customer_id = ?", (customer_id,))


async def insert(tx: Tx, account_id: str, customer_id: str, total: Decimal, count: int, points: Decimal) -> None:
    await execute(tx, "INSERT INTO customer_stats (customer_id, account_id, purchase_total, purchase_count, points) "
                  "VALUES (?, ?, ?, ?, ?)", (customer_id, account_id, str(total), count, str(points)))


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
