"""PostgreSQL drivers for this service's workload: ``.venv/bin/python -m bench.pgdriver``.

asyncpg (the store's driver, :mod:`storage.postgres`) against psycopg 3's async API, in one asyncio process,
on a database of the run's own (``linksvc_bench_<hex>``, made through ``--admin-url``, the service's schema
applied by :class:`storage.postgres.PostgresDatabase`, dropped at the end whatever happens): one account,
100,000 customers with a phone and a document number (one in ten with three wallet lines), a few behavior
campaigns, one webhook connection and a backlog of pending deliveries.

Three operations, each the service's own repository code (:mod:`storage.customers`, :mod:`storage.events`,
:mod:`storage.deliveries`) on a connection of either driver, so both run the same statement texts:

- ``lookup``: the customer lookup by phone (``storage.customers.lookup``, the endpoint's one statement);
- ``event write``: a ``SERIALIZABLE`` unit inserting an event and its delivery, reading ``linksvc.changed``
  before ``COMMIT`` and run again on a serialization failure, as ``PostgresDatabase.write`` does;
- ``outbox claim``: ``storage.deliveries.claim`` (``SELECT ... FOR UPDATE SKIP LOCKED LIMIT 50`` then the
  lease's ``UPDATE``) at ``READ COMMITTED``; its lease runs out at once, so the backlog never drains.

Each driver has a pool of the same size, its best settings, and the service's value types: asyncpg with the
store's own pool settings and codecs (statement cache of 100); psycopg (binary build) with every statement
prepared at first use (``prepare_threshold=0``), ``$n`` statements through its raw cursor, ``json``,
``jsonb`` and ``numeric`` read as text (as the store reads them) and rows readable by index and by name
(what the repositories ask of a row). 16 tasks run one operation for a fixed time on one driver, then on the
other, alternating which goes first, for several rounds: noise on these 2-core machines hits both alike.
Per operation it records operations a second and CPU time per operation, of this process and of the
server's backends of the pool. Prints the figures and rewrites its section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.metadata import version
from typing import Any, Protocol

import asyncpg
import psycopg
import uvloop
from psycopg.types.string import TextLoader
from psycopg_pool import AsyncConnectionPool

from bench import load, postgres
from linksvc.clock import iso_from_timestamp
from linksvc.customers.service import MAX_LINES_WITH_CUSTOMER
from storage import customers, deliveries, events
from storage.db import fetch_one
from storage.postgres import RETRIES, RETRYABLE, PgConnection, PostgresDatabase, _arguments, _init_connection, translate

SECTION = "pgdriver"
ACCOUNT = "acc_bench_pgdriver"
CONNECTION = "con_bench_pgdriver"
CUSTOMERS = 100_000
BACKLOG = 5_000  # pending deliveries before the first claim
POOL = 10  # the store's default pool size (PostgresDatabase.max_size)
TASKS = 16
CLAIM = 50  # deliveries a claim takes, as the dispatcher's batch
ISOLATION = {"SERIALIZABLE": "serializable", "READ COMMITTED": "read_committed"}  # SQL's name: asyncpg's


# ---------------------------------------------------------------------------------------------------------
# The data: plain SQL over the schema the store made.

SEED = [
    "INSERT INTO accounts VALUES ($1, 'bench', 'production', $2, $2)",
    "INSERT INTO customers (id, account_id, external_id, document_number, phone_digits, email_lower, body, "
    "created_at, updated_at) SELECT 'cus_' || lpad(i::text, 8, '0'), $1, 'ext' || i, lpad(i::text, 11, '0'), "
    "'5511' || lpad(i::text, 9, '0'), 'c' || i || '@example.com', jsonb_build_object('id', "
    "'cus_' || lpad(i::text, 8, '0'), 'name', 'Customer ' || i, 'phone', '+55 11 ' || lpad(i::text, 9, '0'), "
    "'document_number', lpad(i::text, 11, '0'), 'email', 'c' || i || '@example.com'), $2, $2 "
    f"FROM generate_series(1, {CUSTOMERS}) i",
    "INSERT INTO wallet_lines (id, account_id, customer_id, reward_id, campaign_id, amount, issued_at, source) "
    "SELECT 'wl_' || i || '_' || j, $1, 'cus_' || lpad(i::text, 8, '0'), 'rew_points', 'cmp_bench_1', 10 * j, $2, "
    f"'opening' FROM generate_series(1, {CUSTOMERS}, 10) i, generate_series(1, 3) j",
    "INSERT INTO campaigns (id, account_id, type, body, created_at, updated_at) SELECT 'cmp_bench_' || k, $1, "
    "'BEHAVIOR', jsonb_build_object('id', 'cmp_bench_' || k, 'type', 'BEHAVIOR', 'rule', jsonb_build_object("
    "'event', 'PURCHASE', 'min_value', 10 * k, 'points', k)), $2, $2 FROM generate_series(1, 3) k",
    "INSERT INTO connections VALUES ($3, $1, 'webhook', 1, '{}', $2, $2)",
    "INSERT INTO deliveries (id, account_id, connection_id, destination, event_id, trigger, kind, order_key, state, "
    "next_attempt_at, created_at, updated_at) SELECT 'dlv_seed_' || i, $1, $3, 'webhook', 'evt_seed_' || i, "
    f"'event', 'event', 'seed_' || i, 'pending', $2, $2, $2 FROM generate_series(1, {BACKLOG}) i",
]


async def prepare(url: str) -> None:
    """The service's schema (the store migrates at open), then the data."""
    store = PostgresDatabase(url)
    await store.open()
    await store.close()
    conn = await asyncpg.connect(url)
    try:
        values = (ACCOUNT, iso_from_timestamp(time.time()), CONNECTION)
        for sql in SEED:
            await conn.execute(sql, *values[:_highest(sql)])
        await conn.execute("ANALYZE")
    finally:
        await conn.close()


def _highest(sql: str) -> int:
    """The highest ``$n`` of a statement of :data:`SEED` (each takes the first n of account, time, connection)."""
    return max(n for n in (1, 2, 3) if f"${n}" in sql)


# ---------------------------------------------------------------------------------------------------------
# The drivers, behind one face: a unit of work at an isolation level, a read, the server's backends.


class Driver(Protocol):
    name: str
    retryable: tuple[type[BaseException], ...]

    async def open(self, url: str) -> None: ...

    async def close(self) -> None: ...

    def unit(self, isolation: str) -> AbstractAsyncContextManager[PgConnection]: ...

    def read(self) -> AbstractAsyncContextManager[PgConnection]: ...


class Asyncpg:
    """asyncpg as the store runs it: its pool settings, codecs and connection wrapper."""

    name = "asyncpg"
    retryable: tuple[type[BaseException], ...] = RETRYABLE

    async def open(self, url: str) -> None:
        self.pool = await asyncpg.create_pool(
            url, min_size=POOL, max_size=POOL, init=_init_connection, statement_cache_size=100,
            server_settings={"timezone": "UTC", "application_name": f"bench-{self.name}"})

    async def close(self) -> None:
        await self.pool.close()

    @asynccontextmanager
    async def unit(self, isolation: str) -> AsyncIterator[PgConnection]:
        async with self.pool.acquire() as conn, conn.transaction(isolation=ISOLATION[isolation]):
            yield PgConnection(conn)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[PgConnection]:
        yield PgConnection(self.pool)  # the store's reader: each statement on whichever connection is free


@lru_cache(maxsize=256)
def _row_class(names: tuple[str, ...]) -> type[tuple[Any, ...]]:
    index = {name: i for i, name in enumerate(names)}

    class KeyedRow(tuple[Any, ...]):
        """A row read by position or by column name, as asyncpg's ``Record`` is."""

        __slots__ = ()

        def __getitem__(self, key: Any) -> Any:
            return tuple.__getitem__(self, index[key] if isinstance(key, str) else key)

    return KeyedRow


def keyed_row(cursor: Any) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    """psycopg's row factory for the repositories' rows."""
    description = cursor.description
    return _row_class(tuple(column.name for column in description)) if description else tuple


class PsycopgConnection(PgConnection):
    """The repositories' connection (:class:`storage.postgres.PgConnection`) on a psycopg connection: the same
    translated ``$n`` statements, through psycopg's raw cursor."""

    def __init__(self, conn: psycopg.AsyncConnection[Any]) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Any = ()) -> int:
        text, names = translate(sql)
        return (await self._conn.execute(text, _arguments(names, params))).rowcount  # type: ignore[arg-type]

    async def execute_many(self, sql: str, rows: Any) -> None:
        text, names = translate(sql)
        async with self._conn.cursor() as cur:
            await cur.executemany(text, [_arguments(names, row) for row in rows])  # type: ignore[arg-type]

    async def fetch_one(self, sql: str, params: Any = ()) -> Any:
        text, names = translate(sql)
        return await (await self._conn.execute(text, _arguments(names, params))).fetchone()  # type: ignore[arg-type]

    async def fetch_all(self, sql: str, params: Any = ()) -> Any:
        text, names = translate(sql)
        return await (await self._conn.execute(text, _arguments(names, params))).fetchall()  # type: ignore[arg-type]


async def _configure(conn: psycopg.AsyncConnection[Any]) -> None:
    for name in ("json", "jsonb", "numeric"):  # as the store reads them: text
        conn.adapters.register_loader(name, TextLoader)


class Psycopg:
    """psycopg 3's async API at its best for these statements: a pool of autocommit connections (a read is
    one statement), each statement prepared at first use, a unit in ``conn.transaction()`` at its level."""

    name = "psycopg"
    retryable: tuple[type[BaseException], ...] = (psycopg.errors.SerializationFailure,
                                                 psycopg.errors.DeadlockDetected)

    async def open(self, url: str) -> None:
        self.pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            url, min_size=POOL, max_size=POOL, open=False, configure=_configure,
            kwargs={"autocommit": True, "prepare_threshold": 0, "cursor_factory": psycopg.AsyncRawCursor,
                    "row_factory": keyed_row, "options": "-c timezone=UTC",
                    "application_name": f"bench-{self.name}"})
        await self.pool.open(wait=True)

    async def close(self) -> None:
        await self.pool.close()

    @asynccontextmanager
    async def unit(self, isolation: str) -> AsyncIterator[PgConnection]:
        async with self.pool.connection() as conn:
            await conn.set_isolation_level(psycopg.IsolationLevel[isolation.replace(" ", "_")])
            async with conn.transaction():
                yield PsycopgConnection(conn)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[PgConnection]:
        async with self.pool.connection() as conn:
            yield PsycopgConnection(conn)


# ---------------------------------------------------------------------------------------------------------
# The operations.


@dataclass
class Counts:
    ops: int = 0
    retries: int = 0
    found: int = 0  # lookups that found their customer, deliveries claimed


async def in_unit(driver: Driver, isolation: str, unit: Callable[[PgConnection], Awaitable[int]],
                  counts: Counts) -> None:
    """``unit`` in a transaction, run again whole when refused as not serializable (as the store does)."""
    for attempt in range(RETRIES + 1):
        try:
            async with driver.unit(isolation) as tx:
                found = await unit(tx)
            counts.found += found  # after the await: ``+=`` across it would lose other tasks' counts
            return
        except driver.retryable:
            if attempt == RETRIES:
                raise
            counts.retries += 1
            await asyncio.sleep(random.uniform(0, 0.002 * (attempt + 1)))


async def lookup(driver: Driver, rng: random.Random, counts: Counts) -> None:
    phone = f"5511{rng.randrange(1, CUSTOMERS + 1):09d}"
    async with driver.read() as conn:
        view = await customers.lookup(conn, ACCOUNT, None, phone, iso_from_timestamp(time.time()),
                                      MAX_LINES_WITH_CUSTOMER)
    counts.found += view is not None


def _event(rng: random.Random, now: str) -> tuple[events.StoredEvent, dict[str, Any]]:
    """A purchase of a random customer, and its delivery to the connection."""
    customer = f"cus_{rng.randrange(1, CUSTOMERS + 1):08d}"
    event_id = f"evt_{rng.getrandbits(64):016x}"
    value = rng.randrange(10, 500)
    event = events.StoredEvent(
        id=event_id, account_id=ACCOUNT, type="PURCHASE", customer_id=customer, order_id=f"ord_{event_id[4:]}",
        payload_hash=f"{rng.getrandbits(128):032x}", issued_at=now, received_at=now, key_kind="secret",
        body={"type": "PURCHASE", "customer": {"id": customer}, "order_id": f"ord_{event_id[4:]}", "value": value,
              "issued_at": now}, effects={"points": value // 10, "rewards": []})
    delivery = {"id": f"dlv_{event_id[4:]}", "account_id": ACCOUNT, "connection_id": CONNECTION,
                "destination": "webhook", "event_id": event_id, "trigger": "event", "kind": "event",
                "order_key": customer, "state": "pending", "reason": None, "next_attempt_at": now,
                "created_at": now, "updated_at": now}
    return event, delivery


async def write_event(driver: Driver, rng: random.Random, counts: Counts) -> None:
    event, delivery = _event(rng, iso_from_timestamp(time.time()))

    async def unit(tx: PgConnection) -> int:
        await events.insert(tx, event)
        await deliveries.enqueue(tx, [delivery])
        await fetch_one(tx, "SELECT current_setting('linksvc.changed', true)")
        return 1

    await in_unit(driver, "SERIALIZABLE", unit, counts)


async def claim(driver: Driver, rng: random.Random, counts: Counts) -> None:
    async def unit(tx: PgConnection) -> int:
        now = iso_from_timestamp(time.time())
        return len(await deliveries.claim(tx, now, now, CLAIM, f"node-{driver.name}"))

    await in_unit(driver, "READ COMMITTED", unit, counts)


Operation = Callable[[Driver, random.Random, Counts], Awaitable[None]]
OPERATIONS: dict[str, Operation] = {"lookup by phone": lookup, "event write": write_event, "outbox claim": claim}
# Before each measurement of an operation: the claims re-lease the same rows at the head of the backlog, whose
# dead versions would slow whichever driver comes next.
BEFORE = {"outbox claim": "VACUUM deliveries"}


# ---------------------------------------------------------------------------------------------------------
# Measuring.


@dataclass
class Round:
    seconds: float
    ops: int
    cpu_s: float  # this process
    server_cpu_s: float  # the pool's backends
    retries: int
    found: int


async def on_server(url: str, sql: str, *args: Any) -> list[asyncpg.Record]:
    """``sql`` on a connection of its own (not either driver's pool)."""
    conn = await asyncpg.connect(url)
    try:
        return list(await conn.fetch(sql, *args))
    finally:
        await conn.close()


async def backends(driver: Driver, url: str) -> list[int]:
    rows = await on_server(url, "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                                "AND application_name = $1", f"bench-{driver.name}")
    return [row["pid"] for row in rows]


def server_cpu(pids: Sequence[int]) -> float:
    total = 0.0
    for pid in pids:
        with suppress(OSError):  # not readable, or gone
            total += load.proc_cpu(pid)
    return total


async def measure(driver: Driver, operation: Operation, seconds: float, pids: Sequence[int]) -> Round:
    """``TASKS`` tasks running ``operation`` for ``seconds``."""
    counts = Counts()
    deadline = time.monotonic() + seconds

    async def task(seed: int) -> None:
        rng = random.Random(seed)
        while time.monotonic() < deadline:
            await operation(driver, rng, counts)
            counts.ops += 1

    cpu, server, started = time.process_time(), server_cpu(pids), time.monotonic()
    await asyncio.gather(*(task(random.getrandbits(32)) for _ in range(TASKS)))
    return Round(time.monotonic() - started, counts.ops, time.process_time() - cpu, server_cpu(pids) - server,
                 counts.retries, counts.found)


@dataclass
class Figures:
    driver: str
    operation: str
    rounds: list[Round] = field(default_factory=list)

    @property
    def ops_s(self) -> float:
        return statistics.median(r.ops / r.seconds for r in self.rounds)

    def per_op_us(self, attr: str) -> float:
        ops = sum(r.ops for r in self.rounds)
        return 1e6 * sum(getattr(r, attr) for r in self.rounds) / max(ops, 1)

    def total(self, attr: str) -> int:
        return int(sum(getattr(r, attr) for r in self.rounds))


async def run(url: str, rounds: int, seconds: float, warmup: float) -> list[Figures]:
    drivers: list[Driver] = [Asyncpg(), Psycopg()]
    for driver in drivers:
        await driver.open(url)
    try:
        pids = {driver.name: await backends(driver, url) for driver in drivers}
        figures = {(d.name, op): Figures(d.name, op) for d in drivers for op in OPERATIONS}
        for name, operation in OPERATIONS.items():
            for driver in drivers:
                await measure(driver, operation, warmup, pids[driver.name])
            for n in range(rounds):
                for driver in drivers if n % 2 == 0 else drivers[::-1]:
                    if name in BEFORE:
                        await on_server(url, BEFORE[name])
                    result = await measure(driver, operation, seconds, pids[driver.name])
                    figures[(driver.name, name)].rounds.append(result)
                    print(f"{name:16} {driver.name:8} round {n + 1}: {result.ops / result.seconds:8.0f} ops/s, "
                          f"{1e6 * result.cpu_s / max(result.ops, 1):6.0f} µs CPU/op", flush=True)
        return list(figures.values())
    finally:
        for driver in drivers:
            await driver.close()


# ---------------------------------------------------------------------------------------------------------
# The section.


def _versions() -> str:
    return ", ".join(f"{name} {version(name)}" for name in ("asyncpg", "psycopg", "psycopg-binary", "psycopg-pool"))


def rows(figures: list[Figures]) -> list[list[str]]:
    by = {(f.driver, f.operation): f for f in figures}
    out = []
    for operation in OPERATIONS:
        a, p = by[("asyncpg", operation)], by[("psycopg", operation)]
        for f in (a, p):
            out.append([operation, f.driver, f"{f.ops_s:,.0f}", f"{f.per_op_us('cpu_s'):,.0f}",
                        f"{f.per_op_us('server_cpu_s'):,.0f}", f"{f.total('found') / max(f.total('ops'), 1):.2f}",
                        f"{f.total('retries'):,}"])
        out.append([operation, "**psycopg / asyncpg**", f"{p.ops_s / a.ops_s:.2f}×",
                    f"{p.per_op_us('cpu_s') / a.per_op_us('cpu_s'):.2f}×",
                    f"{p.per_op_us('server_cpu_s') / max(a.per_op_us('server_cpu_s'), 1e-9):.2f}×", "", ""])
    return out


def section(figures: list[Figures], args: argparse.Namespace, server: str) -> str:
    return "\n".join([
        "## PostgreSQL drivers: asyncpg and psycopg 3",
        "",
        "`python -m bench.pgdriver" + (f" --seconds {args.seconds:g}" if args.seconds != 5 else "")
        + (f" --rounds {args.rounds}" if args.rounds != 4 else "") + "` (`bench/pgdriver.py`)",
        "",
        f"Measured on {load.machine().line()}; PostgreSQL {server} on 127.0.0.1; {_versions()}; "
        f"{load.revision()}. The machine's load average (1 min) was {args.load[0]:.1f} at the start and "
        f"{args.load[1]:.1f} at the end ({load.machine().cores} cores)." + (f" {args.note}" if args.note else ""),
        "",
        f"The service's own repository code on either driver, in one asyncio process on uvloop (as the service "
        f"runs): {TASKS} tasks on a pool of "
        f"{POOL} connections, {args.rounds} rounds of {args.seconds:g} s per driver and operation, the drivers "
        "alternating (the one first in a round is second in the next). The lookup is `storage.customers.lookup` "
        f"by phone over {CUSTOMERS:,} customers; the event write a `SERIALIZABLE` unit inserting an event and its "
        "delivery (`storage.events.insert`, `storage.deliveries.enqueue`, then `linksvc.changed` read, as "
        f"`PostgresDatabase.write`); the claim `storage.deliveries.claim` of {CLAIM} at `READ COMMITTED` "
        "(`FOR UPDATE SKIP LOCKED` then the lease's `UPDATE`), over a backlog that never drains. asyncpg as the "
        "store runs it (statement cache 100, its text codecs); psycopg with `prepare_threshold=0`, its raw "
        "cursor (`$n`, the same statement texts), `json`/`jsonb`/`numeric` read as text and rows by name and "
        "position, as the repositories need. Operations a second are the median of the rounds; CPU is per "
        "operation over all rounds, of the benchmark's process (the driver's cost) and of the pool's server "
        "backends. Rows/op: customers found per lookup, deliveries claimed per claim; retries: units run again "
        "after a serialization failure. Before each claim measurement `deliveries` is vacuumed: the claims re-lease "
        "the rows at the backlog's head, whose dead versions would otherwise slow whichever driver comes next.",
        "",
        load.table(["operation", "driver", "ops/s", "µs CPU/op (client)", "µs CPU/op (server)", "rows/op", "retries"],
                   rows(figures)),
    ])


def _options(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.pgdriver", description=__doc__.split("\n\n")[0])
    parser.add_argument("--admin-url", default="postgresql://postgres@127.0.0.1:5432/postgres",
                        help="a database URL allowed to CREATE and DROP DATABASE [%(default)s]")
    parser.add_argument("--seconds", type=float, default=5, help="seconds per driver, operation and round [5]")
    parser.add_argument("--rounds", type=int, default=4,
                        help="rounds per operation, even so that each driver goes first as often [4]")
    parser.add_argument("--note", default="", help="a sentence added to the section (how busy the machine was)")
    load.output_options(parser, "rounds of 1 s")
    args = parser.parse_args(argv)
    if args.smoke:
        args.seconds, args.rounds = 1, 2
    return args


async def _server_version(url: str) -> str:
    return str((await on_server(url, "SHOW server_version"))[0][0]).split()[0]


def main(argv: list[str] | None = None) -> int:
    args = _options(argv)
    url = postgres.create(args.admin_url)
    try:
        asyncio.run(prepare(url))
        before = os.getloadavg()[0]
        figures = uvloop.run(run(url, args.rounds, args.seconds, warmup=1.0))  # the service's event loop
        args.load = (before, os.getloadavg()[0])
        text = section(figures, args, asyncio.run(_server_version(url)))
    finally:
        postgres.drop(args.admin_url, url)
    print(text)
    load.publish(SECTION, text, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
