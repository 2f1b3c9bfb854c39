"""The redirect benchmark's database: one account and 100,000 links, built once and cached under ``data/``.

The schema comes from the service's migrations (:class:`storage.db.Database`); the account, its brands,
reward and four campaigns (for the ``campaign_id`` of links) are loaded through
:func:`linksvc.seed.load_seed`. The links are then bulk-inserted with ``executemany`` as rows identical to
the save path's: the body is built directly as ``models.Link.model_dump(mode="json")`` gives it (every
field, in model order) and the filter columns are those of :class:`~linksvc.resources.kinds.LinkKind`.
:func:`check` proves it on a sample by saving the same links through
:func:`linksvc.resources.service.save` into a scratch database and comparing the rows column by column.

Links: kinds email, push, whatsapp, campaign and external; https destinations on a few hosts with UTM
and other parameters (some with a fragment); about half carry Android (``package``) and iOS
(``app_store_id``) settings and a deeplink, some of those with fallbacks. Codes are 7 base62 characters,
as the service generates them.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import sqlite3
import string
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from bench import report
from bench import storefront_docs as docs
from linksvc.clock import iso, utcnow
from linksvc.jsoncodec import dumps
from linksvc.resources.kinds import KINDS
from linksvc.resources.service import save
from linksvc.seed import load_seed
from linksvc.settings import REPO_ROOT
from storage.db import Database, fetch_one
from storage.documents import TABLES

GENERATOR_VERSION = 1
SEED = 20250412
BATCH = 50_000
ACCOUNT_ID = docs.ACCOUNT_ID
COLUMNS = ("id", "account_id", "body", "created_at", "updated_at", *TABLES["links"])
KIND_WEIGHTS = (("email", 30), ("push", 20), ("whatsapp", 15), ("campaign", 20), ("external", 15))
HOSTS = ("shop.benchcoffee.example", "www.benchcoffee.example", "benchcoffee.example.com", "promo.benchtea.example")
SECTIONS = ("offers", "menu", "rewards", "stores", "cart", "news", "tiers/gold", "gift-cards")
SOURCES = ("newsletter", "instagram", "facebook", "sms", "partner", "google")
MEDIUMS = ("email", "social", "cpc", "referral", "push")
PACKAGE = "com.benchcoffee.app"
APP_STORE_ID = "1234567890"
_BASE62 = string.ascii_letters + string.digits
_ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


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
        return (self.id, ACCOUNT_ID, dumps(self.body), stamp, stamp, self.code, self.kind, self.campaign_id)


def campaign_ids() -> list[str]:
    return [str(c["id"]) for c in seed_campaigns()]


def seed_campaigns() -> list[dict[str, Any]]:
    """Four campaigns (the storefront benchmark's generator) for links to refer to."""
    rng = random.Random(SEED - 1)
    return [docs.campaign(i, rng).body for i in range(4)]


def seed_document() -> dict[str, Any]:
    seed = docs.seed_document()
    seed["accounts"][0]["campaigns"] = seed_campaigns()
    return seed


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


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
               "team_id": None, "fallback_url": None}
        if rng.random() < 0.1:
            fallback = f"https://{HOSTS[1]}/app?from=fallback"
    body = {"id": link_id, "code": code, "kind": kind, "campaign_id": campaign_id, "template_id": template_id,
            "destination_url": destination, "deeplink": deeplink, "android": android, "ios": ios,
            "fallback_url": fallback, "expires_at": None, "disabled": False}
    return Link(link_id, code, kind, campaign_id, body)


def generate(count: int) -> Iterator[Link]:
    rng = random.Random(SEED)
    campaigns = campaign_ids()
    seen: set[str] = set()
    while len(seen) < count:
        code = "".join(rng.choice(_BASE62) for _ in range(7))
        if code in seen:
            continue
        seen.add(code)
        yield link(rng, code, campaigns)


@dataclass
class DataSet:
    path: Path
    links: int
    with_apps: int  # links with Android and iOS settings
    kinds: dict[str, int]
    build_seconds: float
    built_at: str = ""
    reused: bool = False


def default_path(links: int) -> Path:
    name = "bench-redirects.db" if links == 100_000 else f"bench-redirects-{links}.db"
    return REPO_ROOT / "data" / name


def _reusable(path: Path, links: int) -> DataSet | None:
    cached = report.cached_counts(path, GENERATOR_VERSION, SEED,
                                  [("SELECT count(*) FROM links WHERE account_id = ?", (ACCOUNT_ID,))])
    if cached is None or cached[1] != (links,):
        return None
    meta = cached[0]
    keep = {k: meta[k] for k in ("links", "with_apps", "kinds", "build_seconds", "built_at")}
    return DataSet(path=path, reused=True, **keep)


async def _schema_and_seed(path: Path) -> None:
    db = Database(str(path), "NORMAL")
    await db.open()
    try:
        await load_seed(db, seed_document(), allow_private=False)
    finally:
        await db.close()


def build(path: Path, links: int, log: Callable[[str], None] = print) -> DataSet:
    """Build the database at ``path`` through a temporary file (an interrupted build leaves nothing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".building")
    for stale in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        stale.unlink(missing_ok=True)
    started = time.perf_counter()
    asyncio.run(_schema_and_seed(tmp))
    conn = sqlite3.connect(tmp, isolation_level=None)
    try:
        for pragma in ("journal_mode=DELETE", "journal_mode=OFF", "synchronous=OFF", "cache_size=-500000"):
            conn.execute(f"PRAGMA {pragma}")
        items = generate(links)
        sql = f"INSERT INTO links ({', '.join(COLUMNS)}) VALUES ({', '.join('?' for _ in COLUMNS)})"
        done = 0
        while done < links:
            batch = list(islice(items, min(BATCH, links - done)))
            conn.execute("BEGIN")
            conn.executemany(sql, [item.row(done + i) for i, item in enumerate(batch)])
            conn.execute("COMMIT")
            done += len(batch)
            log(f"  links: {done:,}/{links:,} ({time.perf_counter() - started:.0f} s)")
        conn.execute("PRAGMA journal_mode=WAL")
        kinds = dict(conn.execute("SELECT kind, count(*) FROM links GROUP BY kind ORDER BY kind").fetchall())
        with_apps = report.count(conn, "SELECT count(*) FROM links WHERE json_extract(body, '$.android') IS NOT NULL")
    finally:
        conn.close()
    tmp.replace(path)
    result = DataSet(path=path, links=links, with_apps=with_apps, kinds=kinds,
                     build_seconds=round(time.perf_counter() - started, 1), built_at=iso(utcnow()))
    meta = {"version": GENERATOR_VERSION, "seed": SEED, "schema": report.schema_digest(), **asdict(result)}
    meta["path"] = str(path)
    del meta["reused"]
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")
    return result


def ensure(links: int, path: Path | None = None, rebuild: bool = False,
           log: Callable[[str], None] = print) -> DataSet:
    """The cached database when it matches, else a fresh build."""
    path = path or default_path(links)
    if not rebuild:
        found = _reusable(path, links)
        if found is not None:
            log(f"reusing {path} (built {found.built_at} in {found.build_seconds} s)")
            return found
    log(f"building {path}: {links:,} links")
    return build(path, links, log)


class Mismatch(AssertionError):
    """A generated row differs from what the service writes."""


async def _compare(conn: Any, links: list[Link], where: str, stamps_free: bool) -> None:
    select = f"SELECT {', '.join(COLUMNS)} FROM links WHERE id = ?"
    for i, item in enumerate(links):
        found = await fetch_one(conn, select, (item.id,))
        if found is None:
            raise Mismatch(f"{where}: link {i} ({item.code}) is missing")
        for column, ours, theirs in zip(COLUMNS, item.row(i), tuple(found), strict=True):
            if stamps_free and column in ("created_at", "updated_at"):
                if not _ISO.match(str(theirs)):
                    raise Mismatch(f"{where}: link {i}: {column} is not an ISO timestamp: {theirs!r}")
            elif ours != theirs:
                raise Mismatch(f"{where}: link {i}: {column} differs:\n  generated {ours!r}\n  stored    {theirs!r}")


async def _through_save_path(links: list[Link]) -> None:
    db = Database(":memory:")
    await db.open()
    try:
        await load_seed(db, seed_document(), allow_private=False)
        async with db.transaction() as tx:
            for item in links:
                await save(tx, KINDS["links"], ACCOUNT_ID, item.body, must_exist=False)
        await _compare(db.reader, links, "save path", stamps_free=True)
    finally:
        await db.close()


def check(path: Path, links: int, sample: int = 200) -> int:
    """Save the first ``sample`` links through the real save path and compare rows with the generated
    ones and with the cached database's (there, created_at/updated_at too); returns how many were compared."""
    first = list(islice(generate(links), min(sample, links)))
    asyncio.run(_through_save_path(first))
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        asyncio.run(_compare(conn, first, str(path), stamps_free=False))
    finally:
        conn.close()
    return len(first)


def sample_links(path: Path, count: int, seed: int = 5) -> list[dict[str, Any]]:
    """Bodies of ``count`` links spread over the table (random rowids)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        top = report.count(conn, "SELECT max(rowid) FROM links")
        rowids = random.Random(seed).sample(range(1, top + 1), min(top, count))
        marks = ", ".join("?" for _ in rowids)
        rows = conn.execute(f"SELECT body FROM links WHERE rowid IN ({marks})", rowids).fetchall()
    finally:
        conn.close()
    return [json.loads(body) for (body,) in rows]


def all_codes(path: Path) -> list[str]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [code for (code,) in conn.execute("SELECT code FROM links ORDER BY rowid")]
    finally:
        conn.close()

