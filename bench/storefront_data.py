"""The storefront benchmark's database: built once, cached under ``data/`` (gitignored), then reused.

The schema comes from the service's own migrations (:class:`storage.db.Database`) and the account, its
SERVER key, brands, tiers and reward from :func:`linksvc.seed.load_seed`. Campaigns and customers are then
bulk-inserted with ``executemany`` in large transactions, as rows identical to the save path's
(:mod:`bench.storefront_docs`, checked by :mod:`bench.storefront_check`). A sidecar JSON file records
what was built and how long it took; a database is reused only when the generator version, the digest of
the migration files, the migration level and the row counts all match.
"""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench import report
from bench import storefront_docs as docs
from linksvc.clock import iso, utcnow
from linksvc.jsoncodec import dumps
from linksvc.seed import load_seed
from linksvc.settings import REPO_ROOT
from storage.db import Database
from storage.documents import TABLES
from storage.wallet import LINE_COLUMNS

GENERATOR_VERSION = 1
SEED = 20250106
WALLET_CAMPAIGN_POOL = 200  # wallet lines point at BEHAVIOR campaigns among the first 200 campaigns
BATCH = 50_000
CAMPAIGN_COLUMNS = ("id", "account_id", "body", "created_at", "updated_at", *TABLES["campaigns"])
CUSTOMER_COLUMNS = ("id", "account_id", "body", "created_at", "updated_at", *TABLES["customers"])


def insert_sql(table: str, columns: tuple[str, ...]) -> str:
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"


def campaign_row(c: docs.Campaign, index: int) -> tuple[Any, ...]:
    stamp = docs.created_at(index)
    return (c.id, docs.ACCOUNT_ID, dumps(c.body), stamp, stamp, *(c.columns[n] for n in TABLES["campaigns"]))


def customer_row(c: docs.Customer, index: int) -> tuple[Any, ...]:
    stamp = docs.created_at(index)
    return (c.id, docs.ACCOUNT_ID, dumps(c.body), stamp, stamp, *(c.columns[n] for n in TABLES["customers"]))


def line_rows(c: docs.Customer) -> list[tuple[Any, ...]]:
    return [tuple(docs.ACCOUNT_ID if n == "account_id" else line[n] for n in LINE_COLUMNS) for line in c.wallet_lines]


def generate_campaigns(count: int) -> Iterator[docs.Campaign]:
    rng = random.Random(SEED)
    for i in range(count):
        yield docs.campaign(i, rng)


def wallet_campaigns(campaigns: int) -> list[str]:
    pool = generate_campaigns(min(campaigns, WALLET_CAMPAIGN_POOL))
    return [c.id for c in pool if c.body["type"] == "BEHAVIOR"]


def generate_customers(count: int, campaigns: int) -> Iterator[docs.Customer]:
    rng = random.Random(SEED + 1)
    pool = wallet_campaigns(campaigns)
    for i in range(count):
        yield docs.customer(i, rng, pool)


@dataclass
class DataSet:
    path: Path
    campaigns: int
    customers: int
    wallet_lines: int
    restrictions: int
    store_matches: int  # campaigns GET /campaigns?store_id=BENCH_STORE must count
    build_seconds: float
    phases: dict[str, float] = field(default_factory=dict)
    built_at: str = ""
    reused: bool = False


def default_path(campaigns: int, customers: int) -> Path:
    if (campaigns, customers) == (100_000, 1_000_000):
        return REPO_ROOT / "data" / "bench-storefront.db"
    return REPO_ROOT / "data" / f"bench-storefront-{campaigns}c-{customers}n.db"


def _meta_path(path: Path) -> Path:
    return path.with_suffix(".json")


def store_matches(conn: sqlite3.Connection, store: str) -> int:
    """Campaigns a store sees, counted independently of the service's query: null lists plus lists holding it."""
    unrestricted = report.count(
        conn, "SELECT count(*) FROM campaigns WHERE account_id = ? AND stores_any = 1", docs.ACCOUNT_ID)
    listed = report.count(
        conn, "SELECT count(*) FROM campaign_restrictions WHERE dimension = 'store' AND value = ?", store)
    return unrestricted + listed


def _reusable(path: Path, campaigns: int, customers: int) -> DataSet | None:
    cached = report.cached_counts(path, GENERATOR_VERSION, SEED, [
        ("SELECT count(*) FROM campaigns WHERE account_id = ?", (docs.ACCOUNT_ID,)),
        ("SELECT count(*) FROM customers WHERE account_id = ?", (docs.ACCOUNT_ID,)),
    ])
    if cached is None:
        return None
    meta, found = cached
    if found != (campaigns, customers) or (meta["campaigns"], meta["customers"]) != found:
        return None
    keep = {k: meta[k] for k in ("campaigns", "customers", "wallet_lines", "restrictions", "store_matches",
                                 "build_seconds", "phases", "built_at")}
    return DataSet(path=path, reused=True, **keep)


async def _schema_and_seed(path: Path) -> None:
    db = Database(str(path), "NORMAL")
    await db.open()
    try:
        await load_seed(db, docs.seed_document(), allow_private=False)
    finally:
        await db.close()


def _insert_in_batches(conn: sqlite3.Connection, items: Iterator[Any], count: int, label: str,
                       write: Callable[[sqlite3.Connection, list[Any], int], None], log: Callable[[str], None]) -> None:
    done = 0
    started = time.perf_counter()
    while done < count:
        batch = [next(items) for _ in range(min(BATCH, count - done))]
        conn.execute("BEGIN")
        write(conn, batch, done)
        conn.execute("COMMIT")
        done += len(batch)
        if done % 200_000 == 0 or done == count:
            log(f"  {label}: {done:,}/{count:,} ({time.perf_counter() - started:.0f} s)")


def _write_campaigns(conn: sqlite3.Connection, batch: list[docs.Campaign], start: int) -> None:
    conn.executemany(insert_sql("campaigns", CAMPAIGN_COLUMNS),
                     [campaign_row(c, start + i) for i, c in enumerate(batch)])
    conn.executemany("INSERT OR IGNORE INTO campaign_restrictions (campaign_id, dimension, value) VALUES (?, ?, ?)",
                     [(c.id, dim, value) for c in batch for dim, value in c.restrictions])


def _customer_writer(offset: int) -> Callable[[sqlite3.Connection, list[docs.Customer], int], None]:
    def write(conn: sqlite3.Connection, batch: list[docs.Customer], start: int) -> None:
        conn.executemany(insert_sql("customers", CUSTOMER_COLUMNS),
                         [customer_row(c, offset + start + i) for i, c in enumerate(batch)])
        conn.executemany(insert_sql("wallet_lines", LINE_COLUMNS), [row for c in batch for row in line_rows(c)])
    return write


def build(path: Path, campaigns: int, customers: int, log: Callable[[str], None] = print) -> DataSet:
    """Build the database at ``path`` (through a temporary file, so an interrupted build leaves nothing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".building")
    for stale in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        stale.unlink(missing_ok=True)
    phases: dict[str, float] = {}
    started = mark = time.perf_counter()
    asyncio.run(_schema_and_seed(tmp))
    phases["schema and seed (migrations, load_seed)"] = time.perf_counter() - mark
    conn = sqlite3.connect(tmp, isolation_level=None)
    try:
        # Bulk-load settings of this connection only; the file goes back to WAL (the service's mode) below.
        for pragma in ("journal_mode=DELETE", "journal_mode=OFF", "synchronous=OFF", "cache_size=-1500000",
                       "temp_store=MEMORY"):
            conn.execute(f"PRAGMA {pragma}")
        mark = time.perf_counter()
        _insert_in_batches(conn, generate_campaigns(campaigns), campaigns, "campaigns", _write_campaigns, log)
        phases[f"{campaigns:,} campaigns (generate + insert)"] = time.perf_counter() - mark
        mark = time.perf_counter()
        _insert_in_batches(conn, generate_customers(customers, campaigns), customers, "customers",
                           _customer_writer(campaigns), log)
        phases[f"{customers:,} customers and wallet lines (generate + insert)"] = time.perf_counter() - mark
        mark = time.perf_counter()
        conn.execute("PRAGMA journal_mode=WAL")
        result = DataSet(
            path=path, campaigns=campaigns, customers=customers,
            wallet_lines=report.count(conn, "SELECT count(*) FROM wallet_lines"),
            restrictions=report.count(conn, "SELECT count(*) FROM campaign_restrictions"),
            store_matches=store_matches(conn, docs.BENCH_STORE), build_seconds=0.0, built_at=iso(utcnow()),
        )
        phases["counts and WAL switch"] = time.perf_counter() - mark
    finally:
        conn.close()
    tmp.replace(path)
    result.build_seconds = round(time.perf_counter() - started, 1)
    result.phases = {k: round(v, 1) for k, v in phases.items()}
    meta = {"version": GENERATOR_VERSION, "seed": SEED, "schema": report.schema_digest(), **asdict(result)}
    meta["path"] = str(path)
    del meta["reused"]
    _meta_path(path).write_text(json.dumps(meta, indent=2) + "\n")
    return result


def ensure(campaigns: int, customers: int, path: Path | None = None, rebuild: bool = False,
           log: Callable[[str], None] = print) -> DataSet:
    """The cached database when it matches, else a fresh build."""
    path = path or default_path(campaigns, customers)
    if not rebuild:
        found = _reusable(path, campaigns, customers)
        if found is not None:
            log(f"reusing {path} (built {found.built_at} in {found.build_seconds} s)")
            return found
    log(f"building {path}: {campaigns:,} campaigns, {customers:,} customers")
    return build(path, campaigns, customers, log)
