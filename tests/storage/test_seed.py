"""Seed files: an upsert by id that is idempotent, and a bad file refused whole with the path of the bad field.

The library calls (:func:`load_seed`, :func:`load_seed_file`) run against a real temporary SQLite file; the
command line (``python -m linksvc seed``) runs as a subprocess. What was stored is read back through the
same service the admin API uses.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from linksvc.errors import BadRequest, InvalidField, ServiceError
from linksvc.jsoncodec import dumpb, loads
from linksvc.resources.service import Resources
from linksvc.seed import LOAD_ORDER, load_seed, load_seed_file
from linksvc.settings import REPO_ROOT
from storage import accounts as account_repo
from storage.db import Database
from tests.factories import KEYS, A, B, ids, two_accounts

C = "cccccccc-0000-4000-8000-000000000003"
MISSING = "0f0f0f0f-0000-4000-8000-000000000000"
ZERO = {"accounts": 0, "api_keys": 0, **{name: 0 for name in LOAD_ORDER}}


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(str(tmp_path / "seed.db"), "NORMAL")
    await database.open()
    yield database
    await database.close()


def rich_seed() -> dict[str, Any]:
    """The two test accounts plus fields whose storage is easy to get subtly unequal (dates, decimals, codes)."""
    doc = two_accounts()
    account = doc["accounts"][0]
    mine = ids(A)
    account["tiers"][0]["entry_conditions"] = [[{"type": "Order Value", "operator": "grater than", "value": 9.99}]]
    account["campaigns"].append({
        "id": "aaaaaaaa-0010-4000-8000-000000000010", "name": "Coupons", "type": "COUPONS", "order": 2.5,
        "starts_at": "2024-01-01T10:00:00+02:00", "ends_at": "2999-01-01T00:00:00Z", "stores": ["s1"],
        "channels": [], "tier_ids": [mine["tiers"]],
        "codes": [{"code": "C-1"}, {"code": "C-2", "status": "REDEEMED", "expires_at": "2030-01-01T00:00:00Z"}],
    })
    account["customers"][0]["wallet"]["lines"].append(
        {"amount": 0.25, "reward_id": mine["rewards"], "expiration_date": "2031-05-05T05:05:05Z"})
    account["customers"][0]["consent"] = {"purposes": {"coupon_campaigns": False}, "vendors": {"meta": False}}
    account["contacts"][0]["dob"] = "1990-02-03"
    return doc


async def snapshot(db: Database) -> dict[str, Any]:
    """Everything observable through the admin service: accounts, keys and every resource of every account."""
    resources = Resources(db, allow_private_destinations=True)
    accounts = [asdict(row) for row in await account_repo.list_accounts(db.reader, 100, 0)]
    state: dict[str, Any] = {"accounts": accounts}
    for account in accounts:
        keys = await account_repo.list_keys(db.reader, account["id"])
        state[f"keys {account['id']}"] = [asdict(row) for row in keys]
        for name in LOAD_ORDER:
            state[f"{name} {account['id']}"] = await resources.list(account["id"], name, 500, 0)
    return dict(loads(dumpb(state)))  # as the admin API answers it


async def count_accounts(db: Database) -> int:
    return await account_repo.count_accounts(db.reader)


# --- loading and reloading ------------------------------------------------------------------------------

async def test_first_load_counts_everything_and_stores_it(db: Database) -> None:
    counts = await load_seed(db, rich_seed(), allow_private=False)
    assert counts == {"accounts": 2, "api_keys": 4, "brands": 2, "tiers": 2, "rewards": 2, "campaigns": 3,
                      "contacts": 2, "customers": 2, "custom_event_types": 2, "connections": 2, "links": 2}
    resources = Resources(db, allow_private_destinations=False)
    coupons = await resources.get(A, "campaigns", "aaaaaaaa-0010-4000-8000-000000000010")
    assert coupons["starts_at"] == "2024-01-01T08:00:00.000000Z"  # stored in UTC
    assert [c["code"] for c in coupons["codes"]] == ["C-1", "C-2"]
    customer = loads(dumpb(await resources.get(A, "customers", ids(A)["customers"])))  # as the admin API answers
    assert sorted(line["amount"] for line in customer["wallet"]["lines"]) == [0.25, 100]


async def test_loading_twice_changes_nothing(db: Database) -> None:
    await load_seed(db, rich_seed(), allow_private=False)
    before = await snapshot(db)
    assert await load_seed(db, rich_seed(), allow_private=False) == ZERO
    assert await snapshot(db) == before


async def test_loading_the_demo_file_twice_changes_nothing(db: Database) -> None:
    demo = REPO_ROOT / "fixtures" / "demo.json"
    first = await load_seed_file(db, demo, allow_private=True)
    assert first["accounts"] >= 1
    before = await snapshot(db)
    assert await load_seed_file(db, demo, allow_private=True) == ZERO
    assert await snapshot(db) == before


async def test_reloading_a_changed_file_updates_only_what_changed(db: Database) -> None:
    await load_seed(db, two_accounts(), allow_private=False)
    before = await snapshot(db)
    doc = two_accounts()
    doc["accounts"][1]["brands"][0]["name"] = "Renamed brand"
    doc["accounts"][0]["name"] = "Renamed account"
    counts = await load_seed(db, doc, allow_private=False)
    assert counts == {**ZERO, "accounts": 1, "brands": 1}
    after = await snapshot(db)
    changed = {key for key in before if before[key] != after[key]}
    assert changed == {"accounts", f"brands {B}"}
    (brands, total) = after[f"brands {B}"]
    assert total == 1 and brands[0]["name"] == "Renamed brand"
    assert brands[0]["created_at"] == before[f"brands {B}"][0][0]["created_at"]


# --- bad files ------------------------------------------------------------------------------------------

def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        node = doc
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value
    return change


def _delete(path: list[Any]) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        node = doc
        for part in path[:-1]:
            node = node[part]
        del node[path[-1]]
    return change


def _second_campaign_with_stores(doc: dict[str, Any]) -> None:
    doc["accounts"][0]["campaigns"].append(
        {"id": "aaaaaaaa-0011-4000-8000-000000000011", "name": "Bad", "type": "COUPONS", "stores": "x"})


BAD_FILES: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("type error", _second_campaign_with_stores, "accounts[0].campaigns[1].stores"),
    ("unknown resource field", _set(["accounts", 1, "brands", 0, "colour"], "red"), "accounts[1].brands[0].colour"),
    ("unknown account field", _set(["accounts", 0, "plan"], "gold"), "accounts[0].plan"),
    ("unknown top-level field", _set(["version"], 2), "version"),
    ("accounts not a list", _set(["accounts"], {"id": A}), "accounts"),
    ("missing resource id", _delete(["accounts", 0, "tiers", 0, "id"]), "accounts[0].tiers[0].id"),
    ("missing account id", _delete(["accounts", 1, "id"]), "accounts[1].id"),
    ("missing brand", _set(["accounts", 0, "campaigns", 0, "brand_id"], MISSING), "accounts[0].campaigns[0].brand_id"),
    ("brand of another account", _set(["accounts", 1, "campaigns", 0, "brand_id"], ids(A)["brands"]),
     "accounts[1].campaigns[0].brand_id"),
    ("missing reward in a wallet", _set(["accounts", 0, "customers", 0, "wallet", "lines", 0, "reward_id"], MISSING),
     "accounts[0].customers[0].wallet.lines[0].reward_id"),
    ("bad key kind", _set(["accounts", 0, "api_keys", 0, "kind"], "ROOT"), "accounts[0].api_keys[0].kind"),
    ("key too short", _set(["accounts", 0, "api_keys", 1, "key"], "short"), "accounts[0].api_keys[1].key"),
    ("key without a secret", _delete(["accounts", 0, "api_keys", 1, "key"]), "accounts[0].api_keys[1].key"),
    ("one key for two accounts", _set(["accounts", 1, "api_keys", 0, "key"], KEYS[(A, "SERVER")]),
     "accounts[1].api_keys[0].key"),
    ("tier operator", _set(["accounts", 0, "tiers", 0, "entry_conditions"],
                           [[{"type": "Order Value", "operator": "about", "value": 1}]]),
     "accounts[0].tiers[0].entry_conditions[0][0].operator"),
    ("http destination", _set(["accounts", 1, "links", 0, "destination_url"], "http://shop.example/"),
     "accounts[1].links[0].destination_url"),
    ("destination with a line break", _set(["accounts", 0, "links", 0, "destination_url"],
                                           "https://shop.example/\r\nX: y"), "accounts[0].links[0].destination_url"),
    ("javascript deeplink", _set(["accounts", 1, "links", 0, "deeplink"], "JavaScript:alert(1)"),
     "accounts[1].links[0].deeplink"),
    ("deeplink with intent extras", _set(["accounts", 0, "links", 0, "deeplink"], "app://x#Intent;S.a=1;end"),
     "accounts[0].links[0].deeplink"),
    ("android fallback with a space", _set(["accounts", 0, "links", 0, "android"],
                                           {"package": "com.demo.app", "fallback_url": "https://a.example/ x"}),
     "accounts[0].links[0].android.fallback_url"),
    ("webhook without whsec", _set(["accounts", 0, "connections", 0, "config", "secret"], "plain"),
     "accounts[0].connections[0].config.secret"),
    ("private endpoint", _set(["accounts", 0, "connections", 0, "config", "endpoint_url"], "http://10.1.2.3/"),
     "accounts[0].connections[0].config.endpoint_url"),
]


def bad_path(exc: ServiceError) -> str:
    """The path a refusal names: an InvalidField's path, or the field of a conflict's details."""
    if isinstance(exc, InvalidField):
        return exc.path
    assert isinstance(exc.details, dict), exc.details
    return str(exc.details["field"])


async def test_a_bad_file_is_refused_whole_naming_the_first_bad_field(db: Database) -> None:
    found: dict[str, object] = {}
    expected: dict[str, object] = {}
    for label, change, path in BAD_FILES:
        doc = two_accounts()
        change(doc)
        try:
            await load_seed(db, doc, allow_private=False)
        except ServiceError as exc:
            found[label] = (exc.status, bad_path(exc))
        else:
            found[label] = "loaded"
        expected[label] = (400, path)
        # Nothing of the file is stored, not even the objects before the bad one.
        assert await count_accounts(db) == 0, label
    assert found == expected


async def test_a_bad_file_names_every_bad_field(db: Database) -> None:
    doc = two_accounts()
    doc["accounts"][0]["brands"][0]["status"] = "WHAT"
    doc["accounts"][0]["customers"][0].update(email="not-an-email", status="GONE")
    doc["accounts"][1]["links"][0]["kind"] = "sms"
    del doc["accounts"][1]["tiers"][0]["id"]
    with pytest.raises(InvalidField) as refused:
        await load_seed(db, doc, allow_private=False)
    assert refused.value.error == "Invalid seed file"
    assert [(i.path, i.type, i.accepted) for i in refused.value.issues] == [
        ("accounts[0].brands[0].status", "enum", ("ACTIVE", "INACTIVE")),
        ("accounts[0].customers[0].email", "format", None),
        ("accounts[0].customers[0].status", "enum", ("ACTIVE", "INACTIVE", "BLOCKED", "DELETED")),
        ("accounts[1].tiers[0].id", "missing", None),
        ("accounts[1].links[0].kind", "enum", ("campaign", "email", "push", "whatsapp", "in_app", "news_feed",
                                               "external")),
    ]
    assert await count_accounts(db) == 0


async def test_a_bad_file_changes_nothing_already_stored(db: Database) -> None:
    await load_seed(db, two_accounts(), allow_private=False)
    before = await snapshot(db)
    doc = two_accounts()
    doc["accounts"][0]["name"] = "Renamed"
    doc["accounts"][0]["brands"][0]["name"] = "Renamed brand"
    doc["accounts"][0]["api_keys"].append({"kind": "SERVER", "key": "lk_new_key_000000000000000000009"})
    doc["accounts"].append({"id": C, "name": "New", "brands": [{"id": MISSING, "name": "x"}]})
    doc["accounts"][1]["links"][0]["destination_url"] = "ftp://nope.example/"
    with pytest.raises(InvalidField) as refused:
        await load_seed(db, doc, allow_private=False)
    assert refused.value.path == "accounts[1].links[0].destination_url"
    assert await snapshot(db) == before


async def test_duplicate_customer_document_in_a_file_names_the_second(db: Database) -> None:
    doc = two_accounts()
    doc["accounts"][0]["customers"].append({"id": "cust-dup", "document_number": "CC100"})
    with pytest.raises(InvalidField) as refused:
        await load_seed(db, doc, allow_private=False)
    # In a file a value held twice is one of its issues (every bad field is named), not a conflict apart.
    assert refused.value.status == 400
    assert [(i.path, i.type) for i in refused.value.issues] == [("accounts[0].customers[1].document_number",
                                                                 "duplicate")]
    assert await count_accounts(db) == 0


async def test_a_key_of_another_account_is_refused(db: Database) -> None:
    await load_seed(db, two_accounts(), allow_private=False)
    before = await snapshot(db)
    intruder = {"accounts": [{"id": C, "name": "Intruder",
                              "api_keys": [{"kind": "SERVER", "key": KEYS[(B, "SERVER")]}]}]}
    with pytest.raises(InvalidField) as refused:
        await load_seed(db, intruder, allow_private=False)
    assert refused.value.path == "accounts[0].api_keys[0].key"
    assert await snapshot(db) == before


async def test_an_id_of_another_account_is_refused(db: Database) -> None:
    await load_seed(db, two_accounts(), allow_private=False)
    before = await snapshot(db)
    intruder = {"accounts": [{"id": C, "name": "Intruder", "brands": [{"id": ids(A)["brands"], "name": "Mine"}]}]}
    with pytest.raises(ServiceError) as refused:
        await load_seed(db, intruder, allow_private=False)
    assert bad_path(refused.value) == "accounts[0].brands[0].id"
    assert await snapshot(db) == before


async def test_unreadable_files_name_the_file(db: Database, tmp_path: Path) -> None:
    not_json = tmp_path / "broken.json"
    not_json.write_text('{"accounts": [', encoding="utf-8")
    missing = tmp_path / "absent.json"
    for path, error in ((not_json, "Seed file is not JSON"), (missing, "Cannot read seed file")):
        with pytest.raises(BadRequest) as refused:
            await load_seed_file(db, path, allow_private=False)
        assert refused.value.error == error
        assert str(path) in str(refused.value.details)
    assert await count_accounts(db) == 0


# --- the command line -----------------------------------------------------------------------------------

def run_seed(file: Path, db_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LINKSVC_")}
    return subprocess.run(
        [sys.executable, "-m", "linksvc", "seed", str(file), "--db", str(db_path)],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
    )


async def test_cli_loads_a_file_and_reloading_changes_nothing(tmp_path: Path) -> None:
    file, db_path = tmp_path / "seed.json", tmp_path / "cli.db"
    file.write_text(json.dumps(rich_seed()), encoding="utf-8")
    first = run_seed(file, db_path)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout.strip().splitlines()[-1])
    assert report["loaded"] == str(file)
    assert report["changed"]["accounts"] == 2 and report["changed"]["campaigns"] == 3
    second = run_seed(file, db_path)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout.strip().splitlines()[-1])["changed"] == ZERO

    database = Database(str(db_path), "NORMAL")
    await database.open()
    try:
        assert sorted(a.id for a in await account_repo.list_accounts(database.reader, 10, 0)) == [A, B]
    finally:
        await database.close()


async def test_cli_refuses_a_bad_file_with_exit_code_1_and_the_path(tmp_path: Path) -> None:
    bad = two_accounts()
    _second_campaign_with_stores(bad)
    bad["accounts"][1]["brands"][0]["status"] = "WHAT"
    files = {
        "bad field": (json.dumps(bad), "accounts[0].campaigns[1].stores"),
        "every bad field": (json.dumps(bad), "accounts[1].brands[0].status: must be one of ACTIVE, INACTIVE"),
        "missing": (None, "absent.json"),
    }
    for label, (text, needle) in files.items():
        file = tmp_path / ("absent.json" if text is None else f"{label.replace(' ', '_')}.json")
        if text is not None:
            file.write_text(text, encoding="utf-8")
        db_path = tmp_path / f"{label.replace(' ', '_')}.db"
        result = run_seed(file, db_path)
        assert result.returncode == 1, (label, result.stdout, result.stderr)
        assert needle in result.stderr, (label, result.stderr)
        assert str(file) in result.stderr, (label, result.stderr)
        assert "Traceback" not in result.stderr

        database = Database(str(db_path), "NORMAL")
        await database.open()
        try:
            assert await count_accounts(database) == 0, label
        finally:
            await database.close()



async def test_a_changed_key_kind_is_applied_or_refused(db: Database) -> None:
    await load_seed(db, two_accounts(), allow_private=False)
    doc = two_accounts()
    doc["accounts"][0]["api_keys"][0]["kind"] = "CLIENT"  # the SERVER key of account A, downgraded
    try:
        counts = await load_seed(db, doc, allow_private=False)
    except InvalidField as exc:
        assert exc.path == "accounts[0].api_keys[0].kind"
        return
    kinds = sorted(row.kind for row in await account_repo.list_keys(db.reader, A))
    assert (counts["api_keys"], kinds) == (1, ["CLIENT", "CLIENT"])
