"""Read models across processes: two ``Database`` objects on one file stand for two workers. What one writes is
what the other reads next (its generation moved before the write returned); writes that change nothing a model
holds leave the generations where they are; a database restored from an older copy is moved past the shared
counters, so its next change is seen."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from linksvc.accounts.service import issue_token, principal_for, revoke_key
from linksvc.campaigns.catalog import catalog_of
from linksvc.clock import utcnow
from linksvc.errors import ServiceError, Unauthorized
from linksvc.links.service import MAX_LINKS_HELD, hold_links, link_of_code
from linksvc.loyalty.service import ingest
from linksvc.readmodel import read_model
from linksvc.resources.service import Resources
from linksvc.seed import load_seed
from storage.db import Database, fetch_all
from storage.generations import MODELS, WALLET_BUCKETS
from tests.factories import KEYS, A, ids, two_accounts

CODE = f"lnk{A[:4]}"


async def _open(path: Path) -> Database:
    db = Database(str(path))
    await db.open()
    return db


@pytest.fixture
async def workers(tmp_path: Path) -> AsyncIterator[tuple[Database, Database]]:
    """Two stores on one seeded file, as two worker processes have."""
    path = tmp_path / "svc.db"
    one = await _open(path)
    await load_seed(one, two_accounts(), allow_private=True)
    other = await _open(path)
    yield one, other
    await other.close()
    await one.close()


async def test_a_link_changed_on_one_worker_is_read_afresh_on_the_other(workers: tuple[Database, Database]) -> None:
    one, other = workers
    held = await link_of_code(other, CODE)
    assert held is not None and held.link["destination_url"] == "https://shop.example/p?x=1#top"
    before = other.generation("links")
    await Resources(one, True).update(A, "links", ids(A)["links"], {"destination_url": "https://example.com/b"},
                                      partial=True)
    assert other.generation("links") == before + 1  # moved before the write returned
    changed = await link_of_code(other, CODE)
    assert changed is not None and changed.link["destination_url"] == "https://example.com/b"
    await Resources(one, True).delete(A, "links", ids(A)["links"])
    assert await link_of_code(other, CODE) is None


async def test_a_revoked_key_stops_its_tokens_on_every_worker(workers: tuple[Database, Database]) -> None:
    one, other = workers
    token, _ = await issue_token(one, KEYS[(A, "SERVER")], 3600)
    assert (await principal_for(other, token)).account_id == A  # now held by the other worker
    [key_id] = [row["id"] for row in await fetch_all(one.reader, "SELECT id FROM api_keys WHERE account_id = ? "
                                                      "AND kind = 'SERVER'", (A,))]
    await revoke_key(one, A, key_id)
    with pytest.raises(Unauthorized):
        await principal_for(other, token)


async def test_writes_that_change_no_model_leave_the_generations(tmp_path: Path) -> None:
    db = await _open(tmp_path / "svc.db")
    try:
        await load_seed(db, two_accounts(), allow_private=True)
        links, access, held = db.generation("links"), db.generation("access"), db.generation("catalog")
        event = {"type": "PURCHASE", "customer_id": ids(A)["customers"], "order_id": "o-1", "currency": "COP",
                 "value": 100, "products": [{"sku": "LATTE-12"}]}
        [result] = await ingest(db, A, [event], "SERVER", utcnow())
        assert not isinstance(result, ServiceError)
        await issue_token(db, KEYS[(A, "CLIENT")], 3600)  # a new token: nothing held can be wrong
        assert (db.generation("links"), db.generation("access"), db.generation("catalog")) == (links, access, held)
    finally:
        await db.close()


async def test_a_database_restored_from_an_older_copy_is_moved_past_the_shared_counters(tmp_path: Path) -> None:
    path = tmp_path / "svc.db"
    db = await _open(path)
    await load_seed(db, two_accounts(), allow_private=True)
    await db.close()
    shutil.copy(path, tmp_path / "old.db")
    db = await _open(path)
    await Resources(db, True).update(A, "links", ids(A)["links"], {"destination_url": "https://example.com/new"},
                                     partial=True)
    shared = db.generation("links")
    await db.close()
    shutil.copy(tmp_path / "old.db", path)  # the older copy, beside the same shared counters
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    restored = await _open(path)
    try:
        assert restored.generation("links") > shared
        [row] = await fetch_all(restored.reader, "SELECT value FROM generations WHERE name = 'links'")
        assert row["value"] == restored.generation("links")
    finally:
        await restored.close()


async def test_a_worker_holds_its_links_from_the_start_and_drops_them_on_a_change(
        workers: tuple[Database, Database]) -> None:
    one, other = workers
    assert await hold_links(other) == 2  # both accounts' links, before any click
    held = read_model(other, "links", MAX_LINKS_HELD)
    hits = held.hits
    assert (await link_of_code(other, CODE)) is not None and held.hits == hits + 1
    await Resources(one, True).update(A, "links", ids(A)["links"], {"disabled": True}, partial=True)
    changed = await link_of_code(other, CODE)
    assert changed is not None and changed.link["disabled"] is True


async def test_a_catalog_change_on_one_worker_is_read_afresh_on_the_other(
        workers: tuple[Database, Database]) -> None:
    one, other = workers
    before = await catalog_of(other, A)  # now held by the other worker
    generation = other.generation("catalog")
    brand = {"name": "A brand made on the other worker"}
    await Resources(one, True).create(A, "brands", brand)  # a NEW row changes a catalog too
    assert other.generation("catalog") > generation
    after = await catalog_of(other, A)
    assert [b["name"] for b in after.brands] == [b["name"] for b in before.brands] + [brand["name"]]


async def test_a_generations_file_made_for_fewer_models_is_grown(tmp_path: Path) -> None:
    path = tmp_path / "svc.db"
    db = await _open(path)
    await load_seed(db, two_accounts(), allow_private=True)
    await Resources(db, True).update(A, "links", ids(A)["links"], {"destination_url": "https://example.com/x"},
                                     partial=True)
    links = db.generation("links")
    await db.close()
    shared = Path(f"{path}-generations")
    shared.write_bytes(shared.read_bytes()[:16])  # the file as the two models of migration 0015 left it
    db = await _open(path)
    try:
        assert shared.stat().st_size == 8 * (len(MODELS) + WALLET_BUCKETS)
        assert db.generation("links") == links
        generation = db.generation("catalog")
        await Resources(db, True).create(A, "brands", {"name": "Another brand"})
        assert db.generation("catalog") == generation + 1
    finally:
        await db.close()
