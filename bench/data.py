"""The one data builder of the benchmarks: databases made with the service's own migrations and seed, then
filled in bulk, built once and cached under ``data/`` (gitignored), and reused while still valid.

:func:`build` makes a database through a temporary file (an interrupted build leaves nothing): the schema from
the service's migrations (:class:`storage.db.Database`) and the account, its keys, brands, tiers, rewards and
campaigns from :func:`linksvc.seed.load_seed`; then a fill function bulk-inserts rows with ``executemany`` in
large transactions (:func:`insert_batches`), rows identical to the save path's. A sidecar JSON file records
what was built and how long it took; :func:`cached` reuses a database only when the generator version, the
seed, the digest of the migration files, the migration level and the row counts all match.

The data sets: the redirect benchmark's links (:func:`ensure_links`) and the storefront benchmark's campaigns,
customers and wallet lines (:func:`ensure_storefront`, documents from :mod:`bench.storefront_docs`).

Links: kinds email, push, whatsapp, campaign and external; https destinations on a few hosts with UTM and
other parameters (some with a fragment); about half carry Android (``package``) and iOS (``app_store_id``)
settings and a deeplink, some of those with fallbacks. Codes are 7 base62 characters, as the service
generates them. :func:`check_links` proves them on a sample by saving the same links through
:func:`linksvc.resources.service.save` into a scratch database and comparing the rows column by column
(:func:`check_storefront` does the same for campaigns and customers).
"""

from __future__ import annotations

import asyncio
import glob
import hashlib
import json
import random
import re
import sqlite3
import string
import time
import urllib.parse
import uuid
from collections.abc import Callable, Coroutine, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from bench import storefront_docs as docs
from linksvc.clock import iso, utcnow
from linksvc.jsoncodec import dumps
from linksvc.resources.kinds import KINDS
from linksvc.resources.service import save
from linksvc.seed import load_seed
from linksvc.settings import REPO_ROOT
from storage.db import Database, fetch_all, migration_files
from storage.documents import TABLES
from storage.wallet import LINE_COLUMNS

BATCH = 50_000
DEMO = REPO_ROOT / "fixtures" / "demo.json"
DEMO_ACCOUNT = "3f6c1a52-8d4e-4b7a-9c21-5e0f7a9b1d01"
DEMO_SERVER_KEY = "lk_demo_server_4f8a2c9e7b1d3a5f6c8e0b2d"
Log = Callable[[str], None]

# ---------------------------------------------------------------------------------------------------------
# Cached databases: building, validity, reading.


def schema_digest() -> str:
    """A digest of the migration files: a cached benchmark database is rebuilt when any of them changes."""
    digest = hashlib.sha256()
    for number, path in migration_files():
        digest.update(f"{number}:".encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def count(conn: sqlite3.Connection, sql: str, *params: Any) -> int:
    """The single number a query answers."""
    return int(conn.execute(sql, params).fetchone()[0] or 0)


@contextmanager
def readonly(path: Path, timeout: float = 5.0) -> Iterator[sqlite3.Connection]:
    """A read-only connection to ``path``, closed at the end of the block."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=timeout)
    try:
        yield conn
    finally:
        conn.close()


def cached(path: Path, version: int, seed: int, queries: Sequence[tuple[str, tuple[Any, ...]]]
           ) -> tuple[dict[str, Any], tuple[int, ...]] | None:
    """A cached benchmark database's metadata and row counts, when it was built by this generator
    version and seed against the current migrations; None when it must be built again."""
    meta_file = path.with_suffix(".json")
    if not path.is_file() or not meta_file.is_file():
        return None
    meta: dict[str, Any] = json.loads(meta_file.read_text())
    if (meta.get("version"), meta.get("seed"), meta.get("schema")) != (version, seed, schema_digest()):
        return None
    with readonly(path) as conn:
        if count(conn, "PRAGMA user_version") != len(migration_files()):
            return None
        return meta, tuple(count(conn, sql, *params) for sql, params in queries)


async def _schema_and_seed(path: Path, seed: dict[str, Any]) -> None:
    db = Database(str(path), "NORMAL")
    await db.open()
    try:
        await load_seed(db, seed, allow_private=False)
    finally:
        await db.close()


def insert_sql(table: str, columns: Sequence[str]) -> str:
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"


def insert_batches(conn: sqlite3.Connection, items: Iterator[Any], total: int, label: str,
                   write: Callable[[sqlite3.Connection, list[Any], int], object], log: Log, every: int = 1) -> None:
    """``write(conn, batch, start)`` per batch of ``BATCH`` items, one transaction each; a progress line every
    ``every`` items (and at the end)."""
    done = 0
    started = time.perf_counter()
    while done < total:
        batch = list(islice(items, min(BATCH, total - done)))
        conn.execute("BEGIN")
        write(conn, batch, done)
        conn.execute("COMMIT")
        done += len(batch)
        if done % every == 0 or done == total:
            log(f"  {label}: {done:,}/{total:,} ({time.perf_counter() - started:.0f} s)")


def build(path: Path, version: int, seed: int, document: dict[str, Any], cache_kb: int,
          fill: Callable[[sqlite3.Connection, dict[str, float]], dict[str, Any]]) -> dict[str, Any]:
    """Build the database at ``path`` through a temporary file: migrations and seed ``document``, then
    ``fill(conn, phases)`` on a bulk-load connection (journal off, no sync); its answer, the phases' times and
    the build time go to the sidecar JSON file, which this returns."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".building")
    for stale in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        stale.unlink(missing_ok=True)
    phases: dict[str, float] = {}
    started = time.perf_counter()
    asyncio.run(_schema_and_seed(tmp, document))
    phases["schema and seed (migrations, load_seed)"] = time.perf_counter() - started
    conn = sqlite3.connect(tmp, isolation_level=None)
    try:
        # Bulk-load settings of this connection only; the file goes back to WAL (the service's mode) below.
        for pragma in ("journal_mode=DELETE", "journal_mode=OFF", "synchronous=OFF", f"cache_size=-{cache_kb}",
                       "temp_store=MEMORY"):
            conn.execute(f"PRAGMA {pragma}")
        found = fill(conn, phases)
        mark = time.perf_counter()
        conn.execute("PRAGMA journal_mode=WAL")
        phases["counts and WAL switch"] = phases.get("counts and WAL switch", 0.0) + time.perf_counter() - mark
    finally:
        conn.close()
    tmp.replace(path)
    meta = {"version": version, "seed": seed, "schema": schema_digest(), "path": str(path), **found,
            "build_seconds": round(time.perf_counter() - started, 1),
            "phases": {k: round(v, 1) for k, v in phases.items()}, "built_at": iso(utcnow())}
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def working_copy(source: Path) -> Path:
    """A copy of a cached database for one run: what the run writes never touches the cache. The clicks an
    earlier run on the same copy left behind (spill files and journals of a process that was killed, which the
    service writes at its next start) go with the old copy: a run starts from the cache alone."""
    target = source.with_name(source.stem + ".run.db")
    for left in target.parent.glob(f"{glob.escape(target.name)}.clicks-*"):
        left.unlink(missing_ok=True)
    return copy_database(source, target)


def copy_database(source: Path, target: Path) -> Path:
    """``source`` copied to ``target`` (replaced) with SQLite's backup, in WAL mode: ``target``."""
    for stale in (target, Path(f"{target}-wal"), Path(f"{target}-shm")):
        stale.unlink(missing_ok=True)
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst)
        dst.execute("PRAGMA journal_mode=WAL")
    finally:
        dst.close()
        src.close()
    return target


def ingest_only_demo(directory: Path) -> Path:
    """The demo file as the HTTP benchmarks load it into a fresh service: not marked demo (no week of clicks
    and events is added at start) and its connections off (no deliveries compete with what is measured)."""
    seed = json.loads(DEMO.read_text())
    seed.pop("demo", None)
    for account in seed["accounts"]:
        for connection in account.get("connections", []):
            connection["enabled"] = False
    path = directory / "demo-ingest-only.json"
    path.write_text(json.dumps(seed))
    return path


def demo_account() -> dict[str, Any]:
    """The demo account of ``fixtures/demo.json``."""
    return next(a for a in json.loads(DEMO.read_text())["accounts"] if a["id"] == DEMO_ACCOUNT)


def wallet_lines_max(db: Path, account: str) -> int:
    """The most wallet lines one customer of ``account`` has (a lookup answers all unexpired ones)."""
    with readonly(db, timeout=30) as conn:
        return count(conn, "SELECT max(n) FROM (SELECT count(*) AS n FROM wallet_lines WHERE account_id = ? "
                     "GROUP BY customer_id)", account)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


# ---------------------------------------------------------------------------------------------------------
# Proof that the bulk-inserted rows are the rows the service itself writes: the first items are generated
# again (the generators are seeded), saved through the real save path (:func:`linksvc.resources.service.save`,
# the code behind seed files and the admin API) into a scratch in-memory database seeded with the same
# account, and compared column by column, side tables included, with the scratch rows and with the rows of the
# cached database. Only created_at/updated_at may differ from the save path (it stamps "now"); they must still
# have the format of :func:`linksvc.clock.iso`.

STAMPS = (3, 4)  # created_at, updated_at in the row tuples of the generators
_ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


class Mismatch(AssertionError):
    """A generated row differs from what the service writes."""


def same(what: str, generated: Sequence[Any], stored: Sequence[Any], ignore: tuple[int, ...] = ()) -> None:
    for i, (ours, theirs) in enumerate(zip(generated, stored, strict=True)):
        if i in ignore:
            if not _ISO.match(str(theirs)):
                raise Mismatch(f"{what}: column {i} is not an ISO timestamp: {theirs!r}")
            continue
        if ours != theirs:
            raise Mismatch(f"{what}: column {i} differs:\n  generated {ours!r}\n  stored    {theirs!r}")


async def rows(conn: Any, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in await fetch_all(conn, sql, params)]


async def by_id(conn: Any, what: str, table: str, columns: Sequence[str], item_id: str) -> tuple[Any, ...]:
    found = await rows(conn, f"SELECT {', '.join(columns)} FROM {table} WHERE id = ?", item_id)
    if not found:
        raise Mismatch(f"{what} ({item_id}) is missing")
    return found[0]


def check(path: Path, document: dict[str, Any], saves: Sequence[tuple[str, dict[str, Any]]],
          compare: Callable[[Any, str, tuple[int, ...]], Coroutine[Any, Any, None]]) -> None:
    """``saves`` (kind, body) through the save path into a scratch database seeded with ``document``, then
    ``compare(conn, where, stamps)`` there (stamps free) and on the database at ``path``."""
    async def through_save_path() -> None:
        db = Database(":memory:")
        await db.open()
        try:
            await load_seed(db, document, allow_private=False)
            async with db.transaction() as tx:
                for kind, body in saves:
                    await save(tx, KINDS[kind], docs.ACCOUNT_ID, body, must_exist=False)
            await compare(db.reader, "save path", STAMPS)
        finally:
            await db.close()

    asyncio.run(through_save_path())
    with readonly(path) as conn:
        asyncio.run(compare(conn, str(path), ()))


# ---------------------------------------------------------------------------------------------------------
# Links (bench.redirects): one account and 100,000 links.

LINKS_VERSION = 4  # 2: the bodies hold what links gained since (iOS landing_page, domain, preview); 3: the
# lifecycle fields, the password, the rules and the variants (issue 34); 4: tags and folder (issue 36)
LINKS_SEED = 20250412
LINK_COLUMNS = ("id", "account_id", "body", "created_at", "updated_at", *TABLES["links"])
KIND_WEIGHTS = (("email", 30), ("push", 20), ("whatsapp", 15), ("campaign", 20), ("external", 15))
HOSTS = ("shop.benchcoffee.example", "www.benchcoffee.example", "benchcoffee.example.com", "promo.benchtea.example")
SECTIONS = ("offers", "menu", "rewards", "stores", "cart", "news", "tiers/gold", "gift-cards")
SOURCES = ("newsletter", "instagram", "facebook", "sms", "partner", "google")
MEDIUMS = ("email", "social", "cpc", "referral", "push")
PACKAGE = "com.benchcoffee.app"
APP_STORE_ID = "1234567890"
_BASE62 = string.ascii_letters + string.digits


@dataclass(frozen=True)
class Link:
    """One link as the save path stores it: the body (``model_dump(mode="json")``) and the filter columns."""

    id: str
    code: str
    kind: str
    campaign_id: str | None
    body: dict[str, Any]

    def row(self, index: int) -> tuple[Any, ...]:
        stamp = docs.created_at(index)
        columns = {"code": self.code, "kind": self.kind, "campaign_id": self.campaign_id}
        return (self.id, docs.ACCOUNT_ID, dumps(self.body), stamp, stamp, *(columns.get(c) for c in TABLES["links"]))


def link_campaigns() -> list[dict[str, Any]]:
    """Four campaigns (the storefront benchmark's generator) for links to refer to."""
    rng = random.Random(LINKS_SEED - 1)
    return [docs.campaign(i, rng).body for i in range(4)]


def links_seed_document() -> dict[str, Any]:
    seed = docs.seed_document()
    seed["accounts"][0]["campaigns"] = link_campaigns()
    return seed


def _query(rng: random.Random, kind: str) -> str:
    params: list[tuple[str, str]] = []
    if rng.random() < 0.6:
        params.append(("utm_source", rng.choice(SOURCES)))
        if rng.random() < 0.7:
            params.append(("utm_medium", rng.choice(MEDIUMS)))
        if rng.random() < 0.5:
            params.append(("utm_campaign", f"{kind}-{rng.randrange(1, 400)}"))
    others = [("ref", f"r{rng.randrange(1000)}"), ("lang", rng.choice(("es", "en", "pt"))),
              ("sku", f"SKU-{rng.randrange(1, 500):05d}"), ("size", rng.choice(("12oz", "16oz"))),
              ("q", rng.choice(("cold brew", "latte & cake", "50%off")))]
    params += rng.sample(others, rng.randint(0, 3))
    rng.shuffle(params)
    return "&".join(f"{k}={urllib.parse.quote_plus(v)}" for k, v in params)


def _destination(rng: random.Random, kind: str) -> str:
    url = f"https://{rng.choice(HOSTS)}/{rng.choice(SECTIONS)}/{rng.randrange(1, 10_000)}"
    query = _query(rng, kind)
    if query:
        url += f"?{query}"
    if rng.random() < 0.1:
        url += f"#{rng.choice(('top', 'cold-brew', 'terms'))}"
    return url


def link(rng: random.Random, code: str, campaigns: Sequence[str]) -> Link:
    """A link of a weighted kind; about half with app settings and a deeplink."""
    kind = rng.choices([k for k, _ in KIND_WEIGHTS], [w for _, w in KIND_WEIGHTS])[0]
    link_id = _uuid(rng)
    campaign_id = None
    template_id = None
    if kind == "campaign" or (kind in ("email", "push", "whatsapp") and rng.random() < 0.5):
        campaign_id = rng.choice(campaigns)
    elif kind in ("email", "push", "whatsapp") and rng.random() < 0.6:
        template_id = _uuid(rng)
    destination = _destination(rng, kind)
    deeplink: str | None = None
    android: dict[str, Any] | None = None
    ios: dict[str, Any] | None = None
    fallback: str | None = None
    if rng.random() < 0.5:
        deeplink = f"benchcoffee://{rng.choice(SECTIONS)}/{rng.randrange(1, 10_000)}?from={kind}"
        android_fallback = (f"https://{HOSTS[0]}/get-the-app?platform=android" if rng.random() < 0.15 else None)
        android = {"package": PACKAGE, "fallback_url": android_fallback, "sha256_cert_fingerprints": []}
        ios = {"app_store_id": APP_STORE_ID, "bundle_id": PACKAGE if rng.random() < 0.5 else None,
               "team_id": None, "fallback_url": None, "landing_page": False}
        if rng.random() < 0.1:
            fallback = f"https://{HOSTS[1]}/app?from=fallback"
    body = {"id": link_id, "code": code, "kind": kind, "campaign_id": campaign_id, "template_id": template_id,
            "destination_url": destination, "deeplink": deeplink, "android": android, "ios": ios,
            "fallback_url": fallback, "expires_at": None, "disabled": False, "valid_since": None, "pending_url": None,
            "expired_url": None, "max_clicks": None, "password": None, "domain": None, "preview": None, "rules": None,
            "variants": None, "tags": [], "folder": None}
    return Link(link_id, code, kind, campaign_id, body)


def generate_links(total: int) -> Iterator[Link]:
    rng = random.Random(LINKS_SEED)
    campaigns = [str(c["id"]) for c in link_campaigns()]
    seen: set[str] = set()
    while len(seen) < total:
        code = "".join(rng.choice(_BASE62) for _ in range(7))
        if code in seen:
            continue
        seen.add(code)
        yield link(rng, code, campaigns)


@dataclass
class LinkSet:
    path: Path
    links: int
    with_apps: int  # links with Android and iOS settings
    kinds: dict[str, int]
    build_seconds: float
    built_at: str = ""
    reused: bool = False


def links_path(links: int) -> Path:
    name = "bench-redirects.db" if links == 100_000 else f"bench-redirects-{links}.db"
    return REPO_ROOT / "data" / name


def _fill_links(links: int, log: Log) -> Callable[[sqlite3.Connection, dict[str, float]], dict[str, Any]]:
    def fill(conn: sqlite3.Connection, phases: dict[str, float]) -> dict[str, Any]:
        sql = insert_sql("links", LINK_COLUMNS)
        insert_batches(conn, generate_links(links), links, "links", lambda c, batch, start: c.executemany(
            sql, [item.row(start + i) for i, item in enumerate(batch)]), log)
        kinds = dict(conn.execute("SELECT kind, count(*) FROM links GROUP BY kind ORDER BY kind").fetchall())
        with_apps = count(conn, "SELECT count(*) FROM links WHERE json_extract(body, '$.android') IS NOT NULL")
        return {"links": links, "with_apps": with_apps, "kinds": kinds}
    return fill


def ensure_links(links: int, path: Path | None = None, rebuild: bool = False, log: Log = print) -> LinkSet:
    """The cached database of ``links`` links when it matches, else a fresh build."""
    path = path or links_path(links)
    keep = ("links", "with_apps", "kinds", "build_seconds", "built_at")
    if not rebuild:
        found = cached(path, LINKS_VERSION, LINKS_SEED,
                       [("SELECT count(*) FROM links WHERE account_id = ?", (docs.ACCOUNT_ID,))])
        if found is not None and found[1] == (links,):
            log(f"reusing {path} (built {found[0]['built_at']} in {found[0]['build_seconds']} s)")
            return LinkSet(path=path, reused=True, **{k: found[0][k] for k in keep})
    log(f"building {path}: {links:,} links")
    meta = build(path, LINKS_VERSION, LINKS_SEED, links_seed_document(), 500_000, _fill_links(links, log))
    return LinkSet(path=path, **{k: meta[k] for k in keep})


def check_links(path: Path, links: int, sample: int = 200) -> int:
    """Save the first ``sample`` links through the real save path and compare rows with the generated
    ones and with the cached database's (there, created_at/updated_at too); returns how many were compared."""
    first = list(islice(generate_links(links), min(sample, links)))

    async def compare(conn: Any, where: str, stamps: tuple[int, ...]) -> None:
        for i, item in enumerate(first):
            what = f"{where}: link {i} ({item.code})"
            same(what, item.row(i), await by_id(conn, what, "links", LINK_COLUMNS, item.id), stamps)

    check(path, links_seed_document(), [("links", item.body) for item in first], compare)
    return len(first)


def sample_links(path: Path, total: int, seed: int = 5) -> list[dict[str, Any]]:
    """Bodies of ``total`` links spread over the table (random rowids)."""
    with readonly(path) as conn:
        top = count(conn, "SELECT max(rowid) FROM links")
        rowids = random.Random(seed).sample(range(1, top + 1), min(top, total))
        marks = ", ".join("?" for _ in rowids)
        rows = conn.execute(f"SELECT body FROM links WHERE rowid IN ({marks})", rowids).fetchall()
    return [json.loads(body) for (body,) in rows]


def all_codes(path: Path) -> list[str]:
    with readonly(path) as conn:
        return [code for (code,) in conn.execute("SELECT code FROM links ORDER BY rowid")]


# ---------------------------------------------------------------------------------------------------------
# Campaigns, customers and wallet lines (bench.storefront): 100,000 campaigns and 1,000,000 customers.

STOREFRONT_VERSION = 1
STOREFRONT_SEED = 20250106
WALLET_CAMPAIGN_POOL = 200  # wallet lines point at BEHAVIOR campaigns among the first 200 campaigns
CAMPAIGN_COLUMNS = ("id", "account_id", "body", "created_at", "updated_at", *TABLES["campaigns"])
CUSTOMER_COLUMNS = ("id", "account_id", "body", "created_at", "updated_at", *TABLES["customers"])


def campaign_row(c: docs.Campaign, index: int) -> tuple[Any, ...]:
    stamp = docs.created_at(index)
    return (c.id, docs.ACCOUNT_ID, dumps(c.body), stamp, stamp, *(c.columns[n] for n in TABLES["campaigns"]))


def customer_row(c: docs.Customer, index: int) -> tuple[Any, ...]:
    stamp = docs.created_at(index)
    return (c.id, docs.ACCOUNT_ID, dumps(c.body), stamp, stamp, *(c.columns[n] for n in TABLES["customers"]))


def line_rows(c: docs.Customer) -> list[tuple[Any, ...]]:
    # A line without an event (event_id NULL), as storage.wallet.insert_line stores an opening line.
    return [tuple(docs.ACCOUNT_ID if n == "account_id" else line.get(n) for n in LINE_COLUMNS)
            for line in c.wallet_lines]


def generate_campaigns(total: int) -> Iterator[docs.Campaign]:
    rng = random.Random(STOREFRONT_SEED)
    for i in range(total):
        yield docs.campaign(i, rng)


def wallet_campaigns(campaigns: int) -> list[str]:
    pool = generate_campaigns(min(campaigns, WALLET_CAMPAIGN_POOL))
    return [c.id for c in pool if c.body["type"] == "BEHAVIOR"]


def generate_customers(total: int, campaigns: int) -> Iterator[docs.Customer]:
    rng = random.Random(STOREFRONT_SEED + 1)
    pool = wallet_campaigns(campaigns)
    for i in range(total):
        yield docs.customer(i, rng, pool)


@dataclass
class StoreSet:
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


def storefront_path(campaigns: int, customers: int) -> Path:
    if (campaigns, customers) == (100_000, 1_000_000):
        return REPO_ROOT / "data" / "bench-storefront.db"
    return REPO_ROOT / "data" / f"bench-storefront-{campaigns}c-{customers}n.db"


def store_matches(conn: sqlite3.Connection, store: str) -> int:
    """Campaigns a store sees, counted independently of the service's query: null lists plus lists holding it."""
    unrestricted = count(conn, "SELECT count(*) FROM campaigns WHERE account_id = ? AND stores_any = 1",
                         docs.ACCOUNT_ID)
    listed = count(conn, "SELECT count(*) FROM campaign_restrictions WHERE dimension = 'store' AND value = ?", store)
    return unrestricted + listed


def _write_campaigns(conn: sqlite3.Connection, batch: list[docs.Campaign], start: int) -> None:
    conn.executemany(insert_sql("campaigns", CAMPAIGN_COLUMNS),
                     [campaign_row(c, start + i) for i, c in enumerate(batch)])
    conn.executemany("INSERT OR IGNORE INTO campaign_restrictions (campaign_id, dimension, value) VALUES (?, ?, ?)",
                     [(c.id, dim, value) for c in batch for dim, value in c.restrictions])


def _fill_storefront(campaigns: int, customers: int, log: Log
                     ) -> Callable[[sqlite3.Connection, dict[str, float]], dict[str, Any]]:
    def write_customers(conn: sqlite3.Connection, batch: list[docs.Customer], start: int) -> None:
        conn.executemany(insert_sql("customers", CUSTOMER_COLUMNS),
                         [customer_row(c, campaigns + start + i) for i, c in enumerate(batch)])
        conn.executemany(insert_sql("wallet_lines", LINE_COLUMNS), [row for c in batch for row in line_rows(c)])

    def fill(conn: sqlite3.Connection, phases: dict[str, float]) -> dict[str, Any]:
        mark = time.perf_counter()
        insert_batches(conn, generate_campaigns(campaigns), campaigns, "campaigns", _write_campaigns, log, 200_000)
        phases[f"{campaigns:,} campaigns (generate + insert)"] = time.perf_counter() - mark
        mark = time.perf_counter()
        insert_batches(conn, generate_customers(customers, campaigns), customers, "customers", write_customers,
                       log, 200_000)
        phases[f"{customers:,} customers and wallet lines (generate + insert)"] = time.perf_counter() - mark
        mark = time.perf_counter()
        found = {"campaigns": campaigns, "customers": customers,
                 "wallet_lines": count(conn, "SELECT count(*) FROM wallet_lines"),
                 "restrictions": count(conn, "SELECT count(*) FROM campaign_restrictions"),
                 "store_matches": store_matches(conn, docs.BENCH_STORE)}
        phases["counts and WAL switch"] = time.perf_counter() - mark
        return found
    return fill


def check_storefront(path: Path, campaigns: int, sample: int = 300) -> int:
    """Check the first ``sample`` campaigns and customers (restrictions and wallet lines too); returns how many
    documents were compared. The campaign sample covers the pool of campaigns that wallet lines refer to, so
    that the save path's reference checks pass in the scratch database."""
    camps = list(islice(generate_campaigns(campaigns), min(campaigns, max(sample, WALLET_CAMPAIGN_POOL))))
    custs = list(islice(generate_customers(sample, campaigns), sample))
    lines = f"SELECT {', '.join(LINE_COLUMNS)} FROM wallet_lines WHERE customer_id = ?"

    async def compare(conn: Any, where: str, stamps: tuple[int, ...]) -> None:
        # Customers' created_at follow the campaigns' in the cached database; from 0 in the scratch one.
        offset = campaigns if not stamps else 0
        for i, c in enumerate(camps):
            what = f"{where}: campaign {i}"
            same(what, campaign_row(c, i), await by_id(conn, what, "campaigns", CAMPAIGN_COLUMNS, c.id), stamps)
            found = await rows(conn, "SELECT dimension, value FROM campaign_restrictions WHERE campaign_id = ?", c.id)
            same(f"{what}: restrictions", [sorted(c.restrictions)], [sorted(found)])
        for i, u in enumerate(custs):
            what = f"{where}: customer {i}"
            same(what, customer_row(u, offset + i), await by_id(conn, what, "customers", CUSTOMER_COLUMNS, u.id),
                 stamps)
            same(f"{what}: wallet lines", [sorted(line_rows(u))], [sorted(await rows(conn, lines, u.id))])

    check(path, docs.seed_document(), [("campaigns", c.body) for c in camps] + [("customers", u.body) for u in custs],
          compare)
    return len(camps) + len(custs)


def ensure_storefront(campaigns: int, customers: int, path: Path | None = None, rebuild: bool = False,
                      log: Log = print) -> StoreSet:
    """The cached database when it matches, else a fresh build."""
    path = path or storefront_path(campaigns, customers)
    keep = ("campaigns", "customers", "wallet_lines", "restrictions", "store_matches", "build_seconds", "phases",
            "built_at")
    if not rebuild:
        found = cached(path, STOREFRONT_VERSION, STOREFRONT_SEED, [
            ("SELECT count(*) FROM campaigns WHERE account_id = ?", (docs.ACCOUNT_ID,)),
            ("SELECT count(*) FROM customers WHERE account_id = ?", (docs.ACCOUNT_ID,)),
        ])
        if found is not None and found[1] == (campaigns, customers) == (found[0]["campaigns"], found[0]["customers"]):
            log(f"reusing {path} (built {found[0]['built_at']} in {found[0]['build_seconds']} s)")
            return StoreSet(path=path, reused=True, **{k: found[0][k] for k in keep})
    log(f"building {path}: {campaigns:,} campaigns, {customers:,} customers")
    meta = build(path, STOREFRONT_VERSION, STOREFRONT_SEED, docs.seed_document(), 1_500_000,
                 _fill_storefront(campaigns, customers, log))
    return StoreSet(path=path, **{k: meta[k] for k in keep})
