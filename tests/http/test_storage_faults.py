"""A full disk gives a clear 503 and no half-written data; the service goes on once there is room again.

SQLite's ``max_page_count`` caps the file at its current size on the writer connection: every write that
needs a new page then fails exactly as on a full disk (SQLITE_FULL). PostgreSQL cannot cap a table, so there a
trigger on the written tables raises what the server raises when it cannot extend a file (``disk_full``,
SQLSTATE 53100, with the server's own message).
"""

from __future__ import annotations

from aiohttp.test_utils import TestClient

from api.appkeys import DB
from storage import wallet as wallet_repo
from storage.db import Row, dialect, execute, fetch_one
from tests.conftest import bearer, token_for
from tests.factories import A


async def _on_writer(client: TestClient, sql: str) -> Row | None:
    """A statement on the writer's connection (its pragmas are its own), in a transaction of its own."""
    async with client.app[DB].transaction() as tx:
        return await fetch_one(tx, sql)


_PG_FULL = """
CREATE FUNCTION linksvc_test_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'could not extend file "base/16384/16402": No space left on device'
        USING ERRCODE = 'disk_full', HINT = 'Check free disk space.';
END;
$$;
CREATE TRIGGER linksvc_test_disk_full BEFORE INSERT OR UPDATE ON events
    FOR EACH ROW EXECUTE FUNCTION linksvc_test_disk_full();
CREATE TRIGGER linksvc_test_disk_full BEFORE INSERT OR UPDATE ON ledger_entries
    FOR EACH ROW EXECUTE FUNCTION linksvc_test_disk_full();
"""


async def _disk_full(client: TestClient, full: bool) -> None:
    """The store's disk full (no write that needs room goes through), or room again."""
    if dialect(client.app[DB].reader) == "postgresql":
        async with client.app[DB].transaction() as tx:
            await execute(tx, _PG_FULL if full else "DROP FUNCTION linksvc_test_disk_full() CASCADE")
        return
    if full:
        row = await _on_writer(client, "PRAGMA page_count")
        assert row is not None
        await _on_writer(client, f"PRAGMA max_page_count = {row[0]}")
    else:
        await _on_writer(client, "PRAGMA max_page_count = 1073741823")


async def _count(client: TestClient, table: str) -> int:
    row = await fetch_one(client.app[DB].reader, f"SELECT count(*) AS n FROM {table}")
    return int(row["n"]) if row else 0


async def test_a_full_disk_is_a_clear_503_and_nothing_half_written(seeded: TestClient) -> None:
    client = seeded
    headers = bearer(await token_for(client, A))
    await _disk_full(client, True)
    events_before, entries_before = await _count(client, "events"), await _count(client, "ledger_entries")
    big = "x" * 200_000  # needs new pages whatever free space the file has
    answered = []
    for n in range(3):
        event = {"type": "PURCHASE", "customer_id": "cust-aaaa", "order_id": f"full-{n}", "currency": "COP",
                 "value": 10, "products": [{"sku": "A"}], "properties": {"note": big}}
        response = await client.post("/api/storefront/v1/behavior/events", json=event, headers=headers)
        answered.append((response.status, await response.json()))
    assert {status for status, _ in answered} == {503}
    for _, body in answered:
        assert body["error"] == "Storage unavailable" and "full" in body["details"]
    assert await _count(client, "events") == events_before
    assert await _count(client, "ledger_entries") == entries_before
    # Room again: the same order goes through, once.
    await _disk_full(client, False)
    response = await client.post("/api/storefront/v1/behavior/events", headers=headers, json={
        "type": "PURCHASE", "customer_id": "cust-aaaa", "order_id": "full-0", "currency": "COP", "value": 10,
        "products": [{"sku": "A"}], "properties": {"note": big}})
    assert response.status == 202
    assert await _count(client, "events") == events_before + 1
    assert await wallet_repo.ledger_mismatches(client.app[DB].reader, A) == []
    if dialect(client.app[DB].reader) == "sqlite":  # SQLite's check of its file; PostgreSQL's is its own
        integrity = await _on_writer(client, "PRAGMA integrity_check")
        assert integrity is not None and integrity[0] == "ok"
