"""The PostgreSQL store itself (storage/postgres.py) on a real server: migrations when several nodes start at
once, serializable units run again on conflict, read models following writes of this node and of others."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest

from storage.db import execute, fetch_one
from storage.postgres import PostgresDatabase, migration_files
from tests.pgstore import fresh_database


@pytest.fixture
async def url() -> AsyncIterator[str]:
    async with fresh_database() as database:
        yield database


async def _opened(url: str, tmp: Any) -> PostgresDatabase:
    db = PostgresDatabase(url, state_dir=str(tmp))
    await db.open()
    return db


async def test_three_nodes_starting_at_once_apply_each_migration_once(url: str, tmp_path: Any) -> None:
    nodes = await asyncio.gather(*(_opened(url, tmp_path) for _ in range(3)))
    try:
        conn = await asyncpg.connect(url)
        try:
            rows = await conn.fetch("SELECT version, count(*) FROM schema_migrations GROUP BY version ORDER BY 1")
        finally:
            await conn.close()
        assert [(r[0], r[1]) for r in rows] == [(n, 1) for n, _ in migration_files()]
        for node in nodes:
            assert await node.ping()
    finally:
        for node in nodes:
            await node.close()


async def test_a_unit_refused_as_not_serializable_runs_again(url: str, tmp_path: Any) -> None:
    """Twenty units read a counter and write it plus one, all at once, from two nodes: with one writer (SQLite)
    none is lost; here each runs serializable and the refused ones run again, so none is lost either."""
    a, b = await _opened(url, tmp_path), await _opened(url, tmp_path)
    try:
        await a.pool.execute("CREATE TABLE counter (k integer PRIMARY KEY, n integer NOT NULL)")
        await a.pool.execute("INSERT INTO counter VALUES (1, 0)")

        async def bump(tx: Any) -> int:
            row = await fetch_one(tx, "SELECT n FROM counter WHERE k = ?", (1,))
            assert row is not None
            await asyncio.sleep(0.005)  # the others read the same value meanwhile
            await execute(tx, "UPDATE counter SET n = ? WHERE k = ?", (row[0] + 1, 1))
            return int(row[0])

        seen = await asyncio.gather(*((a if i % 2 else b).write(bump) for i in range(20)))
        assert sorted(seen) == list(range(20))  # each unit saw its own, committed, predecessor
        assert await a.pool.fetchval("SELECT n FROM counter WHERE k = 1") == 20
        assert a.counters.retries + b.counters.retries > 0
    finally:
        await a.close()
        await b.close()


async def test_units_of_one_serial_key_take_turns_on_every_node(url: str, tmp_path: Any) -> None:
    """The same twenty read-then-write units, given one ``serial_key`` (an account's turn): they wait for each
    other across the two nodes instead of colliding, so each sees its predecessor and none is refused."""
    a, b = await _opened(url, tmp_path), await _opened(url, tmp_path)
    try:
        await a.pool.execute("CREATE TABLE counter (k integer PRIMARY KEY, n integer NOT NULL)")
        await a.pool.execute("INSERT INTO counter VALUES (1, 0)")
        inside = 0

        async def bump(tx: Any) -> int:
            nonlocal inside
            inside += 1
            assert inside == 1, "two units of one key ran at once"
            row = await fetch_one(tx, "SELECT n FROM counter WHERE k = ?", (1,))
            assert row is not None
            await asyncio.sleep(0.005)
            await execute(tx, "UPDATE counter SET n = ? WHERE k = ?", (row[0] + 1, 1))
            inside -= 1
            return int(row[0])

        seen = await asyncio.gather(*((a if i % 2 else b).write(bump, "account:x") for i in range(20)))
        assert sorted(seen) == list(range(20))
        assert await a.pool.fetchval("SELECT n FROM counter WHERE k = 1") == 20
        assert a.counters.retries + b.counters.retries == 0
    finally:
        await a.close()
        await b.close()


async def _wait_for(check: Any, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        await asyncio.sleep(0.02)
    return bool(check())


async def _a_link(db: PostgresDatabase) -> None:
    await db.pool.execute("INSERT INTO accounts (id, name, environment, created_at, updated_at) "
                          "VALUES ('acc', 'A', 'production', '2026-01-01T00:00:00.000000Z', "
                          "'2026-01-01T00:00:00.000000Z')")
    columns = await db.pool.fetch("SELECT column_name, data_type, is_nullable, column_default FROM "
                                  "information_schema.columns WHERE table_name = 'links'")
    values: dict[str, str] = {"id": "'l1'", "account_id": "'acc'", "code": "'abc123'"}
    for column in columns:
        name, kind, nullable, default = column
        if name in values or nullable == "YES" or default is not None:
            continue
        values[name] = {"jsonb": "'{}'", "integer": "0", "bigint": "0"}.get(kind, "'x'")
    await db.pool.execute(f"INSERT INTO links ({', '.join(values)}) VALUES ({', '.join(values.values())})")


async def test_read_models_follow_this_nodes_writes_at_once_and_the_others_by_notification(
        url: str, tmp_path: Any) -> None:
    a, b = await _opened(url, tmp_path), await _opened(url, tmp_path)
    try:
        await _a_link(a)
        before_a, before_b = a.generation("links"), b.generation("links")

        async def edit(tx: Any) -> None:
            await execute(tx, "UPDATE links SET code = ? WHERE id = ?", ("abc124", "l1"))

        await a.write(edit)
        assert a.generation("links") > before_a  # before its caller is answered: read-your-writes here
        assert await _wait_for(lambda: b.generation("links") > before_b)  # the other node, by NOTIFY
    finally:
        await a.close()
        await b.close()


async def test_a_lost_listening_connection_moves_every_model_once_back(url: str, tmp_path: Any) -> None:
    node = await _opened(url, tmp_path)
    try:
        before = {name: node.generation(name) for name in ("links", "access", "catalog")}
        await node.pool.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                "WHERE application_name = 'linksvc-listen' AND datname = current_database()")
        assert await _wait_for(lambda: all(node.generation(n) > v for n, v in before.items()), 10.0)
        moved = node.generation("links")
        await node.pool.execute("SELECT pg_notify('linksvc_generations', 'links')")
        assert await _wait_for(lambda: node.generation("links") > moved)  # listening again
    finally:
        await node.close()
