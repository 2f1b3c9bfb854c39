"""Wallet lines and the ledger. Amounts are decimal text.

A wallet line is a lot of one reward a customer holds (an opening line, or one issued by an event); its
``amount`` is what is left of it. Every change to a line is a ledger entry, appended in the same
transaction as the change, so a line's ``amount`` always equals the sum of its entries.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

import orjson

from storage import customer_stats
from storage.db import Conn, Row, Tx, dialect, execute, fetch_all, fetch_one, statement_chunks

OWNS = ("wallet_lines", "ledger_entries")

LINE_COLUMNS = (
    "id", "account_id", "customer_id", "reward_id", "campaign_id", "brand_id", "amount",
    "issued_at", "expiration_date", "reservation_expires_at", "source", "event_id",
)
ENTRY_COLUMNS = ("account_id", "customer_id", "line_id", "reward_id", "kind", "amount", "event_id", "created_at")
# What makes two opening lines the same line (the amount compared is the opening amount, not what is left).
_OPENING_FIELDS = ("reward_id", "campaign_id", "brand_id", "issued_at", "expiration_date", "reservation_expires_at")


@dataclass(frozen=True, slots=True)
class WalletLine:
    """A lot of one reward a customer holds; ``amount`` is what is left of it."""

    id: str
    account_id: str
    customer_id: str
    reward_id: str
    campaign_id: str | None
    brand_id: str | None
    amount: Decimal
    issued_at: str
    expiration_date: str | None = None
    reservation_expires_at: str | None = None
    source: str = "opening"
    event_id: str | None = None

    def values(self) -> tuple[Any, ...]:
        return (self.id, self.account_id, self.customer_id, self.reward_id, self.campaign_id, self.brand_id,
                str(self.amount), self.issued_at, self.expiration_date, self.reservation_expires_at, self.source,
                self.event_id)


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One change to a line (``id`` is None until stored)."""

    account_id: str
    customer_id: str
    line_id: str
    reward_id: str
    kind: str
    amount: Decimal
    event_id: str | None
    created_at: str
    id: int | None = None

    def values(self) -> tuple[Any, ...]:
        return (self.account_id, self.customer_id, self.line_id, self.reward_id, self.kind, str(self.amount),
                self.event_id, self.created_at)


def _line_of(row: Row) -> WalletLine:
    return WalletLine(
        id=row["id"], account_id=row["account_id"], customer_id=row["customer_id"], reward_id=row["reward_id"],
        campaign_id=row["campaign_id"], brand_id=row["brand_id"], amount=Decimal(row["amount"]),
        issued_at=row["issued_at"], expiration_date=row["expiration_date"],
        reservation_expires_at=row["reservation_expires_at"], source=row["source"], event_id=row["event_id"],
    )


def entry_for(line: WalletLine, kind: str, amount: Decimal, event_id: str | None, now: str) -> LedgerEntry:
    return LedgerEntry(line.account_id, line.customer_id, line.id, line.reward_id, kind, amount, event_id, now)


def _chunks(items: Sequence[Any]) -> Iterable[Sequence[Any]]:
    return statement_chunks(items)  # in a few sizes, so that the statements' texts are compiled once


async def add_entries(tx: Tx, entries: Sequence[LedgerEntry]) -> None:
    """Ledger entries, appended in the order given, a few hundred per statement (points not touched)."""
    marks = "(" + ", ".join("?" for _ in ENTRY_COLUMNS) + ")"
    for chunk in _chunks(entries):
        await execute(tx, f"INSERT INTO ledger_entries ({', '.join(ENTRY_COLUMNS)}) VALUES "
                          f"{', '.join([marks] * len(chunk))}", [v for entry in chunk for v in entry.values()])


async def insert_lines(tx: Tx, lines: Sequence[WalletLine]) -> None:
    """New lines as they are, a few hundred per statement (no entries, points not touched)."""
    marks = "(" + ", ".join("?" for _ in LINE_COLUMNS) + ")"
    for chunk in _chunks(lines):
        await execute(tx, f"INSERT INTO wallet_lines ({', '.join(LINE_COLUMNS)}) VALUES "
                          f"{', '.join([marks] * len(chunk))}", [v for line in chunk for v in line.values()])


async def set_amounts(tx: Tx, amounts: Sequence[tuple[str, Decimal]]) -> None:
    """(line id, new amount) for many lines, a few hundred per statement (no entries, points not touched)."""
    postgres = dialect(tx) == "postgresql"
    for chunk in _chunks(amounts):
        marks = ", ".join("(?, ?)" for _ in chunk)
        if postgres:  # VALUES' parameters are text there: the amount is made numeric explicitly
            await execute(tx, f"UPDATE wallet_lines SET amount = CAST(new.amount AS numeric) FROM (VALUES {marks}) "
                              "AS new (id, amount) WHERE wallet_lines.id = new.id",
                          [v for line_id, amount in chunk for v in (line_id, str(amount))])
            continue
        await execute(tx, f"WITH new (id, amount) AS (VALUES {marks}) "
                          "UPDATE wallet_lines SET amount = (SELECT amount FROM new WHERE new.id = wallet_lines.id) "
                          "WHERE id IN (SELECT id FROM new)",
                      [v for line_id, amount in chunk for v in (line_id, str(amount))])


async def add_entry(tx: Tx, line: WalletLine, kind: str, amount: Decimal, event_id: str | None, now: str) -> None:
    await add_entries(tx, [entry_for(line, kind, amount, event_id, now)])


async def insert_line(tx: Tx, line: WalletLine, kind: str, now: str) -> None:
    """A new line and its first entry (``opening`` or ``issue``) for its whole amount."""
    await insert_lines(tx, [line])
    await add_entry(tx, line, kind, line.amount, line.event_id, now)
    await customer_stats.add_points(tx, line.customer_id, line.amount)


async def change_line(tx: Tx, line: WalletLine, delta: Decimal, kind: str, event_id: str | None,
                      now: str) -> WalletLine:
    """Add ``delta`` (signed) to a line, with its entry; returns the line as it is now."""
    changed = replace(line, amount=line.amount + delta)
    await execute(tx, "UPDATE wallet_lines SET amount = ? WHERE id = ?", (str(changed.amount), line.id))
    await add_entry(tx, line, kind, delta, event_id, now)
    await customer_stats.add_points(tx, line.customer_id, delta)
    return changed


async def replace_opening_lines(tx: Tx, account_id: str, customer_id: str, lines: Sequence[WalletLine],
                                now: str) -> None:
    """The lines a customer was created or migrated with; issued lines are not touched.

    An opening line saved again unchanged stays as it is (with whatever was spent from it), so loading the
    same seed twice changes nothing. A changed or dropped one is closed by an ``adjust`` entry down to zero
    and removed; a new one comes with its ``opening`` entry."""
    if dialect(tx) == "postgresql":
        existing = await fetch_all(
            tx,
            "SELECT w.*, (SELECT string_agg(CAST(amount AS text), ' ') FROM ledger_entries e WHERE e.line_id = w.id "
            "AND e.kind = 'opening') AS opening FROM wallet_lines w "
            "WHERE w.account_id = ? AND w.customer_id = ? AND w.source = 'opening'",
            (account_id, customer_id),
        )
    else:
        existing = await fetch_all(
            tx,
            "SELECT w.*, (SELECT group_concat(amount, ' ') FROM ledger_entries e WHERE e.line_id = w.id "
            "AND e.kind = 'opening') AS opening FROM wallet_lines w "
            "WHERE w.account_id = ? AND w.customer_id = ? AND w.source = 'opening'",
            (account_id, customer_id),
        )
    wanted = {line.id: line for line in lines}
    for row in existing:
        new = wanted.get(row["id"])
        opening = sum((Decimal(a) for a in (row["opening"] or "").split()), Decimal(0))
        if (new is not None and opening == new.amount
                and all(row[f] == getattr(new, f) for f in _OPENING_FIELDS)):
            del wanted[row["id"]]
            continue
        old = _line_of(row)
        if old.amount != 0:
            await change_line(tx, old, -old.amount, "adjust", None, now)
        await execute(tx, "DELETE FROM wallet_lines WHERE id = ?", (row["id"],))
    for line in wanted.values():
        await insert_line(tx, line, "opening", now)


async def unexpired_lines(conn: Conn, account_id: str, customer_id: str, now: str) -> list[WalletLine]:
    """The lines not yet expired and not used up, earliest expiration first."""
    return await _lines(
        conn,
        f"SELECT * FROM wallet_lines WHERE {_HELD} ORDER BY {_LINE_ORDER}",
        (account_id, customer_id, now),
    )


# The lines a wallet shows: not expired at ``now`` and not used up.
_HELD = ("account_id = ? AND customer_id = ? AND (expiration_date IS NULL OR expiration_date > ?) "
         "AND CAST(amount AS REAL) > 0")
_LINE_ORDER = "expiration_date IS NULL, expiration_date, issued_at, id"
# One statement (one snapshot, one row) gives the wallet's lines as one JSON array made by SQLite, in wallet
# order, and the rewards held, each with its lines' amounts, earliest expiration and reward document: the work
# per line stays inside SQLite (which runs without Python's GIL), however many lines there are. Amounts are
# decimal text, a JSON number as it is. An aggregate over an ordered subquery takes its rows in that order
# (SQLite does not flatten such a subquery); tests/storage/test_wallet_view.py checks the order against a
# model.
_LINES_JSON = f"""(SELECT '[' || coalesce(group_concat(doc, ','), '') || ']' FROM (
     SELECT json_object(
       'amount', CASE WHEN json_valid(amount) THEN json(amount) ELSE CAST(amount AS REAL) END,
       'reward_id', reward_id, 'campaign_id', campaign_id, 'brand_id', brand_id, 'issued_at', issued_at,
       'expiration_date', expiration_date, 'reservation_expires_at', reservation_expires_at) AS doc
     FROM held ORDER BY {_LINE_ORDER}))"""
# The account's reward document of each reward held, with its ``account_id`` (null for a reward the account
# does not have).
_REWARDS_JSON = """(SELECT json_group_array(json_array(reward_id, amounts, earliest,
       (SELECT json_set(r.body, '$.account_id', :account_id) FROM rewards r
        WHERE r.account_id = :account_id AND r.id = h.reward_id))) FROM (
     SELECT reward_id, group_concat(amount, ' ') AS amounts, min(expiration_date) AS earliest
     FROM held GROUP BY reward_id ORDER BY earliest IS NULL, earliest, reward_id) h)"""
_WALLET_VIEW = f"""
WITH held AS (SELECT * FROM wallet_lines WHERE account_id = :account_id AND customer_id = :customer_id
  AND (expiration_date IS NULL OR expiration_date > :now) AND CAST(amount AS REAL) > 0)
SELECT {_LINES_JSON} AS lines, {_REWARDS_JSON} AS rewards
"""

# The same two columns on PostgreSQL, byte for byte: each line's object is written out as SQLite's json_object
# writes it (no spaces, keys in this order, strings escaped as JSON, null for a missing value) and the amount is
# the numeric's decimal text, a JSON number as it is; text is ordered by its bytes, as SQLite orders it. The
# rewards' JSON is decoded by held_rewards, so jsonb serves there.
_PG_LINE_ORDER = 'expiration_date IS NULL, expiration_date COLLATE "C", issued_at COLLATE "C", id COLLATE "C"'


def _pg_string(column: str) -> str:
    return f"coalesce(CAST(to_json({column}) AS text), 'null')"


_PG_LINE_DOC = " || ".join([
    """'{"amount":' || CAST(amount AS text)""",
    *(f"""',"{column}":' || {_pg_string(column)}""" for column in (
        "reward_id", "campaign_id", "brand_id", "issued_at", "expiration_date", "reservation_expires_at")),
    "'}'",
])
_PG_LINES_JSON = f"""(SELECT '[' || coalesce(string_agg({_PG_LINE_DOC}, ',' ORDER BY {_PG_LINE_ORDER}), '') || ']'
     FROM held)"""
_PG_REWARDS_JSON = """(SELECT coalesce(jsonb_agg(jsonb_build_array(reward_id, amounts, earliest,
       (SELECT r.body || jsonb_build_object('account_id', CAST(:account_id AS text)) FROM rewards r
        WHERE r.account_id = :account_id AND r.id = h.reward_id))
       ORDER BY earliest IS NULL, earliest COLLATE "C", reward_id COLLATE "C"), '[]'::jsonb) FROM (
     SELECT reward_id, string_agg(CAST(amount AS text), ' ') AS amounts,
       min(expiration_date COLLATE "C") AS earliest
     FROM held GROUP BY reward_id) h)"""
_PG_WALLET_VIEW = f"""
WITH held AS (SELECT * FROM wallet_lines WHERE account_id = :account_id AND customer_id = :customer_id
  AND (expiration_date IS NULL OR expiration_date > :now) AND amount > 0)
SELECT {_PG_LINES_JSON} AS lines, {_PG_REWARDS_JSON} AS rewards
"""


# A reward held: ``(reward_id, amounts separated by spaces, earliest expiration or None, the account's reward
# document with its account_id, or None)``.
HeldReward = tuple[str, str, str | None, dict[str, Any] | None]


def wallet_view_columns(customer: str, store: str = "sqlite") -> tuple[str, str]:
    """The two columns of :func:`wallet_view` (the lines' JSON, the rewards held as JSON) for another statement,
    of the customer named by the SQL expression ``customer`` (a column of that statement), at ``:now`` in
    ``:account_id``: the customer lookup reads a small wallet in its own statement. The held lines are read
    twice by index (a customer's few lines) rather than through a materialised table. ``store`` is the
    dialect (:func:`storage.db.dialect`) the statement is for."""
    if store == "postgresql":
        held = (f"(SELECT * FROM wallet_lines WHERE account_id = :account_id AND customer_id = {customer} "
                "AND (expiration_date IS NULL OR expiration_date > :now) AND amount > 0) AS held")
        return (_PG_LINES_JSON.replace("FROM held", f"FROM {held}"),
                _PG_REWARDS_JSON.replace("FROM held", f"FROM {held}"))
    held = (f"(SELECT * FROM wallet_lines WHERE account_id = :account_id AND customer_id = {customer} "
            "AND (expiration_date IS NULL OR expiration_date > :now) AND CAST(amount AS REAL) > 0)")
    return _LINES_JSON.replace("FROM held", f"FROM {held}"), _REWARDS_JSON.replace("FROM held", f"FROM {held}")


def held_rewards(rewards: str) -> list[HeldReward]:
    """The rewards column of :func:`wallet_view_columns`, decoded."""
    return [(reward_id, amounts, earliest, reward) for reward_id, amounts, earliest, reward in orjson.loads(rewards)]


async def wallet_view(conn: Conn, account_id: str, customer_id: str, now: str) -> tuple[str, list[HeldReward]]:
    """``(lines, rewards)``: the held lines as JSON text, in wallet order (they go out as they are); the
    rewards held (:data:`HeldReward`), earliest expiration first."""
    statement = _PG_WALLET_VIEW if dialect(conn) == "postgresql" else _WALLET_VIEW
    row = await fetch_one(conn, statement, {"account_id": account_id, "customer_id": customer_id, "now": now})
    assert row is not None  # an aggregate always answers one row
    return _wallet_of(row)


def _wallet_of(row: Row) -> tuple[str, list[HeldReward]]:
    return row[0], held_rewards(row[1])


async def lines_of_customer(tx: Tx, account_id: str, customer_id: str) -> list[WalletLine]:
    """Every line of a customer (expired and used-up ones too), earliest expiration first."""
    return await _lines(
        tx,
        "SELECT * FROM wallet_lines WHERE account_id = ? AND customer_id = ? "
        "ORDER BY expiration_date IS NULL, expiration_date, issued_at, id",
        (account_id, customer_id),
    )


async def live_lines_of_customers(conn: Conn, account_id: str, customer_ids: Iterable[str],
                                  issued_since: str) -> list[WalletLine]:
    """In one statement, the lines of these customers that hold something (expired ones too) and those
    issued by an event since ``issued_since``: every line an event can change or count. (The others are
    used up: they hold zero.)"""
    wanted = sorted(set(customer_ids))
    if not wanted:
        return []
    marks = ", ".join("?" for _ in wanted)
    return await _lines(conn, f"SELECT * FROM wallet_lines WHERE account_id = ? AND customer_id IN ({marks}) "
                              "AND (CAST(amount AS REAL) > 0 OR (source = 'event' AND issued_at >= ?)) "
                              "ORDER BY customer_id, id", (account_id, *wanted, issued_since))


async def lines_for_events(conn: Conn, account_id: str, customer_ids: Iterable[str], lapsed_by: str,
                           whole: Iterable[str], capped: Iterable[str], issued_since: str) -> list[WalletLine]:
    """In one statement, the lines a batch of events can change or count, by customer and id: of every
    customer, the lines that hold something and have lapsed by ``lapsed_by`` (by the index on the customer and
    expiration); of the ``whole`` customers (those that redeem, or whose running totals are to be built), every
    line that holds something; and the lines issued since ``issued_since`` by the ``capped`` campaigns (those
    with a daily limit). Not the others: a line that holds something and has not lapsed is neither expired
    nor spent by an event that does not redeem."""
    wanted = sorted(set(customer_ids))
    if not wanted:
        return []
    whole, capped = sorted(set(whole)), sorted(set(capped))

    def marks(values: Sequence[str]) -> str:
        return ", ".join("?" for _ in values)

    parts = [f"SELECT * FROM wallet_lines WHERE customer_id IN ({marks(wanted)}) AND expiration_date <= ? "
             "AND account_id = ? AND CAST(amount AS REAL) > 0"]
    params: list[str] = [*wanted, lapsed_by, account_id]
    if whole:
        parts.append(f"SELECT * FROM wallet_lines WHERE customer_id IN ({marks(whole)}) AND account_id = ? "
                     "AND CAST(amount AS REAL) > 0")
        params += [*whole, account_id]
    if capped:
        parts.append(f"SELECT * FROM wallet_lines WHERE customer_id IN ({marks(wanted)}) AND account_id = ? "
                     f"AND source = 'event' AND issued_at >= ? AND campaign_id IN ({marks(capped)})")
        params += [*wanted, account_id, issued_since, *capped]
    return await _lines(conn, " UNION ".join(parts) + " ORDER BY customer_id, id", params)


async def line(conn: Conn, line_id: str) -> WalletLine | None:
    row = await fetch_one(conn, "SELECT * FROM wallet_lines WHERE id = ?", (line_id,))
    return _line_of(row) if row is not None else None


async def entries_of_customer(conn: Conn, account_id: str, customer_id: str) -> list[LedgerEntry]:
    rows = await fetch_all(conn, "SELECT * FROM ledger_entries WHERE account_id = ? AND customer_id = ? ORDER BY id",
                           (account_id, customer_id))
    return [LedgerEntry(row["account_id"], row["customer_id"], row["line_id"], row["reward_id"], row["kind"],
                        Decimal(row["amount"]), row["event_id"], row["created_at"], row["id"]) for row in rows]


_REAL_POSITIVE = "CAST(amount AS REAL) > 0"


def _in_dialect(conn: Conn, sql: str) -> str:
    """A statement of this module for ``conn``'s store: on PostgreSQL an amount (``numeric``) is compared as it
    is, exactly, where SQLite compares its decimal text as a number."""
    if dialect(conn) == "postgresql":
        return sql.replace(_REAL_POSITIVE, "amount > 0")
    return sql


async def _lines(conn: Conn, sql: str, params: Sequence[Any]) -> list[WalletLine]:
    return [_line_of(row) for row in await fetch_all(conn, _in_dialect(conn, sql), params)]


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


async def lapsed_lines(tx: Tx, account_id: str, customer_id: str, now: str) -> list[WalletLine]:
    """Lines past their expiration that still hold something (they get their ``expire`` entry)."""
    return await _lines(
        tx,
        "SELECT * FROM wallet_lines WHERE customer_id = ? AND account_id = ? AND expiration_date <= ? "
        "AND CAST(amount AS REAL) > 0 ORDER BY expiration_date, id",
        (customer_id, account_id, now),
    )


async def open_lines_of_reward(tx: Tx, account_id: str, customer_id: str, reward_id: str,
                               now: str) -> list[WalletLine]:
    """A reward's unexpired lines that hold something, earliest expiration first (never-expiring last)."""
    return await _lines(
        tx,
        "SELECT * FROM wallet_lines WHERE customer_id = ? AND reward_id = ? AND account_id = ? "
        "AND (expiration_date IS NULL OR expiration_date > ?) AND CAST(amount AS REAL) > 0 "
        "ORDER BY expiration_date IS NULL, expiration_date, issued_at, id",
        (customer_id, reward_id, account_id, now),
    )
