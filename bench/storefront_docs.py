"""Documents of the storefront benchmark's data set, built directly in the form the service stores.

Each builder returns what :func:`linksvc.resources.service.save` would write for one resource: the body
as ``model_dump(mode="json")`` gives it (every field, in model order, normalised values), the filter
columns of its :class:`~linksvc.resources.kinds.Kind`, and its side-table rows. Building the dicts
directly takes microseconds a document where validating through pydantic takes ~60 µs;
:func:`bench.data.check_storefront` proves on a sample that the rows are identical to the save path's.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from linksvc.clock import iso
from linksvc.customers.people import PURPOSES
from linksvc.resources.kinds import _LINE_NAMESPACE  # the namespace of wallet line ids in the save path

ACCOUNT_ID = "6c1f0b8e-5a2d-4e3b-9f47-b3c2d1e0a001"
SERVER_KEY = "lk_bench_server_7d2f9a4c6e8b0d1f3a5c"
BRANDS = ("6c1f0b8e-0001-4000-8000-000000000001", "6c1f0b8e-0001-4000-8000-000000000002")
TIERS = ("6c1f0b8e-0002-4000-8000-000000000001", "6c1f0b8e-0002-4000-8000-000000000002",
         "6c1f0b8e-0002-4000-8000-000000000003")
REWARD_ID = "6c1f0b8e-0003-4000-8000-000000000001"
BENCH_STORE = "BOG-001"  # the store of the benchmarked GET /campaigns?store_id=...
CITIES = ("BOG", "MDE", "CLO", "BAQ", "CTG", "CDMX", "GDL", "MTY", "SAO", "RIO", "LIM", "SCL", "BUE")
STORES = tuple(f"{city}-{n:03d}" for city in CITIES for n in range(1, 24))  # 299 stores
PRODUCTS = tuple(f"SKU-{n:05d}" for n in range(1, 501))
CHANNELS = ("app", "web", "pos", "kiosk", "delivery")
TYPES = ("BEHAVIOR", "BEHAVIOR", "BEHAVIOR", "COUPONS", "COUPONS", "PUNCH_CARDS", "REFERRALS", "SCORE_STREAKS")
# (country, calling code, national prefix before the 7 unique digits)
COUNTRIES = (("CO", "57", "300"), ("CO", "57", "315"), ("MX", "52", "551"), ("BR", "55", "1191"),
             ("CL", "56", "98"), ("PE", "51", "98"), ("US", "1", "415"), ("AR", "54", "9115"))
FIRST = ("Ana", "María", "José", "Luis", "Carlos", "Sofía", "Valentina", "Juan", "Camila", "Diego", "Lucía",
         "Mateo", "Isabella", "Andrés", "Gabriela", "João", "Fernanda", "Emily", "Michael", "Paula")
LAST = ("Gómez", "Rodríguez", "Martínez", "López", "García", "Pérez", "Sánchez", "Ramírez", "Torres",
        "Flores", "Rivera", "Silva", "Souza", "Castro", "Vargas", "Rojas", "Smith", "Muñoz", "Díaz", "Moreno")
EPOCH = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)  # created_at of the first generated row


def seed_document() -> dict[str, Any]:
    """The account, its SERVER key, brands, tiers and a reward: loaded through ``load_seed``."""
    tiers = [{"id": tid, "name": name, "level": level, "entry_conditions": [[{
        "type": "Total Order Value", "operator": "greater than or equal", "value": floor}]]}
        for tid, name, level, floor in zip(TIERS, ("Bronze", "Silver", "Gold"), (1, 2, 3), (0, 150, 600),
                                           strict=True)]
    return {"accounts": [{
        "id": ACCOUNT_ID, "name": "Benchmark Coffee Co.", "environment": "production",
        "api_keys": [{"kind": "SERVER", "name": "benchmark", "key": SERVER_KEY}],
        "brands": [{"id": BRANDS[0], "name": "Bench Coffee"}, {"id": BRANDS[1], "name": "Bench Tea Bar"}],
        "tiers": tiers,
        "rewards": [{"id": REWARD_ID, "brand_id": BRANDS[0], "name": "Coffee Points", "type": "POINTS",
                     "attributes": {"conversion_factor": 0.01, "unit_label": "pts"}}],
    }]}


def _uuid(rng: random.Random) -> str:
    """A random version-4 UUID in canonical text (what ``str(uuid.UUID(int=..., version=4))`` gives)."""
    h = f"{rng.getrandbits(128) & _UUID_CLEAR | _UUID_V4:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_UUID_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))
_UUID_V4 = (0x4000 << 64) | (0x8000 << 48)


def _moment(rng: random.Random, first_year: int, last_year: int) -> datetime:
    start = datetime(first_year, 1, 1, tzinfo=UTC)
    span = (datetime(last_year, 12, 31, tzinfo=UTC) - start).total_seconds()
    return start + timedelta(seconds=rng.randrange(int(span)))


def created_at(index: int) -> str:
    """Creation time of the index-th row: one microsecond apart, as ``linksvc.clock.iso`` writes it."""
    return iso(EPOCH + timedelta(microseconds=index))


def _restriction(rng: random.Random, values: tuple[str, ...], null_share: float, empty_share: float,
                 sizes: tuple[int, int], flagship: str | None = None, flagship_share: float = 0.0
                 ) -> list[str] | None:
    roll = rng.random()
    if roll < null_share:
        return None
    if roll < null_share + empty_share:
        return []
    chosen = rng.sample(values, rng.randint(*sizes))
    if flagship is not None:
        chosen = [v for v in chosen if v != flagship]
        if rng.random() < flagship_share:
            chosen.insert(rng.randrange(len(chosen) + 1), flagship)
        if not chosen:
            chosen = [rng.choice([v for v in values if v != flagship])]
    return chosen


@dataclass
class Campaign:
    id: str
    body: dict[str, Any]
    columns: dict[str, Any]
    restrictions: list[tuple[str, str]] = field(default_factory=list)  # (dimension, value)


def campaign(index: int, rng: random.Random) -> Campaign:
    """A campaign: stores null for ~45%, [] for ~10%, else 1-4 stores (BENCH_STORE in ~12% of those)."""
    kind = rng.choice(TYPES)
    cid = _uuid(rng)
    stores = _restriction(rng, STORES, 0.45, 0.10, (1, 4), BENCH_STORE, 0.12)
    channels = _restriction(rng, CHANNELS, 0.70, 0.05, (1, 3))
    products = _restriction(rng, PRODUCTS, 0.85, 0.02, (1, 3))
    attributes: dict[str, Any] = {}
    if kind == "BEHAVIOR":
        attributes = {"event_type": "PURCHASE", "reward_id": REWARD_ID, "amount": 0,
                      "per_currency_unit": rng.choice((1, 2, 3)), "expires_in_days": 365,
                      "conditions": [[{"type": "Order Value", "operator": "greater than", "primitive": "number",
                                       "value": rng.choice((0, 10, 25))}]]}
    elif kind == "PUNCH_CARDS":
        attributes = {"stamps": rng.choice((5, 8, 10)), "prize": "free drink"}
    starts = _moment(rng, 2023, 2026)
    ends = None if rng.random() < 0.6 else starts + timedelta(days=rng.randrange(7, 730))
    finished = None if rng.random() < 0.95 else starts + timedelta(days=3)
    order = rng.randrange(0, 1000)
    body: dict[str, Any] = {
        "id": cid, "name": f"{kind.title().replace('_', ' ')} campaign {index}", "type": kind,
        "brand_id": rng.choice(BRANDS), "attributes": attributes,
        "stores": stores, "channels": channels, "products": products,
        "content": {"headline": {"name": "headline", "type": "input", "value": f"Offer number {index}"},
                    "banner": {"name": "banner", "type": "image",
                               "value": f"https://cdn.bench.example.com/campaigns/{index}.jpg"}},
        "template_id": None if rng.random() < 0.5 else _uuid(rng),
        "labels": rng.sample(("points", "always-on", "tier-perk", "weekend", "new", "seasonal"), rng.randint(0, 2)),
        "platforms": rng.sample(("ios", "android", "web"), rng.randint(1, 3)),
        "funded_by": rng.choice((None, "Benchmark Coffee Co.", "Supplier A")),
        "starts_at": iso(starts), "ends_at": None if ends is None else iso(ends),
        "paused": rng.random() < 0.05, "finished_at": None if finished is None else iso(finished),
        "order": order, "tier_ids": None if rng.random() < 0.8 else [rng.choice(TIERS)], "codes": None,
    }
    columns = {
        "type": kind, "brand_id": body["brand_id"], "funded_by": body["funded_by"],
        "starts_at": body["starts_at"], "ends_at": body["ends_at"], "paused": int(body["paused"]),
        "finished_at": body["finished_at"], "sort_order": float(order),
        "stores_any": int(stores is None), "channels_any": int(channels is None),
        "products_any": int(products is None),
    }
    rows = [(dim, v) for dim, values in (("store", stores), ("channel", channels), ("product", products))
            for v in values or ()]
    return Campaign(cid, body, columns, rows)


def unique_number(index: int, modulus: int, factor: int, offset: int) -> int:
    """A bijection of 0..modulus-1 (factor coprime to modulus): distinct indexes give distinct numbers."""
    return (index * factor + offset) % modulus


@dataclass
class Customer:
    id: str
    body: dict[str, Any]
    columns: dict[str, Any]
    wallet_lines: list[dict[str, Any]] = field(default_factory=list)


def _phone(index: int, rng: random.Random) -> tuple[str, str]:
    country, code, prefix = rng.choice(COUNTRIES)
    national = prefix + f"{unique_number(index, 10_000_000, 7_368_787, 1_234_567):07d}"
    a, b, c = national[:3], national[3:6], national[6:]
    style = rng.randrange(6)
    text = (f"+{code} {a} {b} {c}", f"{code}{national}", f"+{code}-{a}-{b}-{c}", f"+{code} ({a}) {b}-{c}",
            f"+{code}{national}", f"{code}.{a}.{b}.{c}")[style]
    return country, text


def _wallet(rng: random.Random, behavior_campaigns: list[str]) -> dict[str, Any] | None:
    roll = rng.random()
    if roll >= 0.6:
        return None
    lines = []
    for _ in range(1 if roll < 0.4 else 2):
        issued = _moment(rng, 2024, 2025)
        expires = rng.choice((None, "2099-12-31T23:59:59.000000Z", iso(issued + timedelta(days=365))))
        lines.append({"amount": rng.randrange(1, 5000), "reward_id": REWARD_ID,
                      "campaign_id": rng.choice(behavior_campaigns) if behavior_campaigns else None,
                      "brand_id": rng.choice(BRANDS), "issued_at": iso(issued), "expiration_date": expires,
                      "reservation_expires_at": None})
    return {"lines": lines}


def customer(index: int, rng: random.Random, behavior_campaigns: list[str]) -> Customer:
    """A customer: a unique phone (~97% have one) in one of six formats, a unique document number,
    and for ~60% an opening wallet of one or two lines."""
    cid = _uuid(rng)
    first, last = rng.choice(FIRST), rng.choice(LAST)
    country, phone = _phone(index, rng)
    has_phone = rng.random() < 0.97
    email = f"{first}.{last}.{index}@example.com".lower() if rng.random() < 0.9 else None
    tier = rng.choice(TIERS) if rng.random() < 0.7 else None
    consent_given = rng.random() < 0.5
    wallet = _wallet(rng, behavior_campaigns)
    body: dict[str, Any] = {
        "id": cid, "external_id": f"crm-{index:07d}", "name": f"{first} {last}", "email": email,
        "registration_date": iso(_moment(rng, 2019, 2025)), "status": "ACTIVE", "is_anonymous": False,
        "phone_verified": has_phone and rng.random() < 0.8, "gender": rng.choice(("FEMALE", "MALE", None)),
        "dob": iso(datetime(rng.randrange(1950, 2006), rng.randrange(1, 13), rng.randrange(1, 29), tzinfo=UTC)),
        "document_type": "CC" if country == "CO" else "ID",
        "document_number": str(10_000_000 + unique_number(index, 90_000_000, 3_000_017, 99)),
        "country": country, "phone": phone if has_phone else None, "tier_id": tier,
        "tags": {"favorite_drink": rng.choice(("latte", "flat white", "chai"))} if rng.random() < 0.3 else {},
        "metrics": {"purchase_count": rng.randrange(0, 200), "total_order_value": rng.randrange(0, 500_000) / 100},
        "metadata": {"crm": "bench-crm", "preferred_store": rng.choice(STORES)} if rng.random() < 0.5 else {},
        "consent": {
            "consent_string": None, "version": "2.2" if consent_given else None,
            "consent_timestamp": iso(_moment(rng, 2023, 2025)) if consent_given else None, "customer_id": None,
            "purposes": {p: (rng.random() < 0.9) if consent_given else None for p in PURPOSES},
            "vendors": {"meta": True, "ga4": rng.random() < 0.5} if consent_given else {},
        },
        "wallet": wallet,
    }
    columns = {
        "external_id": body["external_id"], "document_number": body["document_number"],
        "phone_digits": "".join(ch for ch in phone if ch.isdigit()) if has_phone else None,
        "email_lower": email, "tier_id": tier,
    }
    lines = [{"id": str(uuid.uuid5(_LINE_NAMESPACE, f"{cid}:{n}")), "customer_id": cid,
              "reward_id": line["reward_id"], "campaign_id": line["campaign_id"], "brand_id": line["brand_id"],
              "amount": str(line["amount"]), "issued_at": line["issued_at"],
              "expiration_date": line["expiration_date"], "reservation_expires_at": None, "source": "opening"}
             for n, line in enumerate(wallet["lines"] if wallet else [])]
    return Customer(cid, body, columns, lines)
