"""``linksvc db copy``: the demo install (accounts, links, clicks, events, wallets, deliveries) moved from its
SQLite file into an empty PostgreSQL database with one command, verified, and refused into a database that is
not empty."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import asyncpg

from linksvc.app import load_demo_if_empty
from linksvc.settings import REPO_ROOT, Settings
from storage.db import Database
from tests.pgstore import fresh_database


async def _demo_install(path: Path) -> None:
    settings = Settings(db_path=str(path), load_demo=True, allow_private_destinations=True)
    db = Database(str(path))
    await db.open()
    try:
        await load_demo_if_empty(db, settings)
    finally:
        await db.close()


def _linksvc(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LINKSVC_LOG_FORMAT": "text"}
    return subprocess.run([sys.executable, "-m", "linksvc", *args], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


async def test_an_install_moves_to_postgresql_with_one_command(tmp_path: Path) -> None:
    source = tmp_path / "linksvc.db"
    await _demo_install(source)
    exported = _linksvc("export", "--db", str(source), "--dir", str(tmp_path / "exports"))
    assert exported.returncode == 0, exported.stderr
    lite = sqlite3.connect(source)
    # (wallet_buckets: the held lookups' stamps, SQLite's alone; PostgreSQL holds no lookups)
    tables = [r[0] for r in lite.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                                         "'sqlite_%' AND name NOT IN ('generations', 'wallet_buckets')")]
    counts = {t: lite.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    amounts = sum((Decimal(r[0]) for r in lite.execute("SELECT amount FROM wallet_lines")), Decimal(0))
    lite.close()
    assert counts["links"] and counts["clicks"] and counts["events"] and counts["wallet_lines"]

    async with fresh_database() as url:
        done = _linksvc("db", "copy", "--from", f"sqlite:///{source}", "--to", url)
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert {t: n for t, n in report["copied"].items() if t in counts} == counts
        # what SQLite had exported is exported on PostgreSQL too (export_events, made from the rowids)
        assert report["copied"]["export_events"] == counts["events"] > 0
        assert Decimal(report["sums"]["wallet_lines.amount"]) == amounts

        conn = await asyncpg.connect(url)
        try:
            for table, n in counts.items():
                assert await conn.fetchval(f'SELECT count(*) FROM "{table}"') == n, table
            assert Decimal(await conn.fetchval("SELECT sum(amount)::text FROM wallet_lines")) == amounts
            # the identity sequences moved past the copied ids: a new click takes a new id
            top = await conn.fetchval("SELECT max(id) FROM clicks")
            new = await conn.fetchval(
                "INSERT INTO clicks (account_id, link_id, tracking_id, clicked_at, platform, bot, answer, utm) "
                "SELECT account_id, link_id, 'copied-then-new', clicked_at, platform, bot, answer, utm "
                "FROM clicks LIMIT 1 RETURNING id")
            assert new > top
            # the planner knows the moved tables' sizes at once (ANALYZE after the copy, not autovacuum later)
            unanalyzed = await conn.fetch("SELECT relname FROM pg_stat_user_tables WHERE n_live_tup > 0 "
                                          "AND last_analyze IS NULL AND last_autoanalyze IS NULL")
            assert [r[0] for r in unanalyzed] == []
        finally:
            await conn.close()

        # an export on PostgreSQL after the move writes nothing again: each event once across both stores
        files_before = sorted(p.name for p in (tmp_path / "exports").rglob("*.jsonl.gz"))
        after = _linksvc("export", "--database-url", url, "--dir", str(tmp_path / "exports"))
        assert after.returncode == 0, after.stderr
        assert sorted(p.name for p in (tmp_path / "exports").rglob("*.jsonl.gz")) == files_before

        again = _linksvc("db", "copy", "--from", f"sqlite:///{source}", "--to", url)
        assert again.returncode == 1
        assert "not empty" in again.stderr


def test_the_command_says_what_it_takes(tmp_path: Path) -> None:
    done = _linksvc("db", "copy", "--from", str(tmp_path / "x.db"), "--to", "postgresql://127.0.0.1/x")
    assert done.returncode == 2
    assert "sqlite:///" in done.stderr
