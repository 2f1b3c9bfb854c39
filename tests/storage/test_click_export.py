"""The clicks export (issue 37) on a local folder, over clicks stored as the click writer stores them, on either
store: account and date partitions apart from the events', the fields of a line, and each click written exactly
once across runs, also when a run dies between writing a file and recording it, and on SQLite when deleting a
link hands its ids to the next clicks."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from linksvc.forwarding.click_export import export_clicks
from linksvc.forwarding.export import ExportTarget, LocalSink
from linksvc.forwarding.export_job import export_all
from linksvc.loyalty import service as events
from linksvc.seed import load_seed
from linksvc.settings import Settings
from linksvc.store import Store, in_one_unit, store_of
from storage import click_exports as progress_repo
from storage import clicks as click_repo
from storage.db import dialect, execute, fetch_one
from tests.factories import A, B, ids, two_accounts

NOW = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
OTHER_LINK = "0b5e1c2a-5d7f-4c51-9d0e-3f6a7c1b2d40"
NAME = re.compile(r"^(\d{8}T\d{6}Z)-[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl\.gz$")


@pytest.fixture
async def db(settings: Settings) -> AsyncIterator[Store]:
    store = store_of(settings)
    await store.open()
    seed = two_accounts()
    seed["accounts"][0]["links"].append({"id": OTHER_LINK, "code": "othr01", "kind": "external",
                                         "destination_url": "https://shop.example/other"})
    await load_seed(store, seed, allow_private=True)
    yield store
    await store.close()


def click(account: str, tracking_id: str, clicked_at: str, link: str | None = None, *, bot: int = 0,
          answer: str = "destination", utm: dict[str, str] | None = None, referer: str | None = None,
          place: tuple[str | None, str | None, str | None] = (None, None, None), rule: str | None = None,
          variant: str | None = None) -> list[Any]:
    """A click's row as the click writer stores it (``storage.clicks.COLUMNS``)."""
    utm = utm or {}
    return [account, link or ids(account)["links"], tracking_id, clicked_at, "ios", bot, answer,
            "Mozilla/5.0 (iPhone)", referer, json.dumps(utm), utm.get("utm_source"), "Mobile Safari", "17.1", "iOS",
            "17.1", "Apple", "iPhone", "visitor-hash", json.dumps(utm), *place, rule, variant,
            click_repo.referrer_host(referer)]


async def store_clicks(db: Store, *rows: list[Any]) -> None:
    await db.write(lambda tx: click_repo.insert_clicks(tx, list(rows)))


def exported(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Every exported file (path relative to ``folder``) with its parsed lines."""
    return {str(path.relative_to(folder)): [json.loads(line) for line in gzip.decompress(path.read_bytes())
                                            .splitlines()]
            for path in sorted(folder.rglob("*.jsonl.gz"))}


def tracking_ids(files: dict[str, list[dict[str, Any]]]) -> list[str]:
    return sorted(line["tracking_id"] for lines in files.values() for line in lines)


async def test_clicks_land_in_their_accounts_click_partitions_with_what_a_click_export_holds(
        db: Store, tmp_path: Path) -> None:
    folder = tmp_path / "exports"
    target = ExportTarget("local", folder=str(folder))
    await store_clicks(
        db,
        click(A, "t-a1", "2026-11-27T23:59:58.000000Z", utm={"utm_source": "mail", "utm_campaign": "bf"},
              referer="https://User@News.Example.com:8443/a?b=c", place=("CO", "Antioquia", "Medellín"),
              rule="latam", variant="B", answer="app_store"),
        click(B, "t-b1", "2026-11-28T08:00:00.000000Z", bot=1),
        click(A, "t-a2", "2026-11-28T09:00:00.000000Z", OTHER_LINK),
    )

    result = await export_clicks(db, target, NOW)

    files = exported(folder)
    assert (result.files, result.clicks, result.events) == (3, 3, 0)
    assert sorted(result.keys) == sorted(files)
    assert sorted(key.rsplit("/", 1)[0] for key in files) == [
        f"{A}/clicks/dt=2026-11-27", f"{A}/clicks/dt=2026-11-28", f"{B}/clicks/dt=2026-11-28"]
    assert all(NAME.match(key.rsplit("/", 1)[1]) for key in files)
    for key, lines in files.items():  # each account's clicks in its own files only
        assert {line["account_id"] for line in lines} == {key.split("/", 1)[0]}
    lines = {line["tracking_id"]: line for found in files.values() for line in found}
    assert lines["t-a1"] == {
        "clicked_at": "2026-11-27T23:59:58.000000Z", "account_id": A, "link_id": ids(A)["links"],
        "code": f"lnk{A[:4]}", "campaign_id": None, "tracking_id": "t-a1", "platform": "ios", "os": "iOS",
        "os_version": "17.1", "browser": "Mobile Safari", "browser_version": "17.1", "device_brand": "Apple",
        "device_model": "iPhone", "bot": False, "country": "CO", "region": "Antioquia", "city": "Medellín",
        "referrer_host": "news.example.com", "utm_source": "mail", "utm_medium": None, "utm_campaign": "bf",
        "utm_term": None, "utm_content": None, "rule": "latam", "variant": "B", "answer": "app_store",
        "route": "store"}
    assert (lines["t-a2"]["code"], lines["t-a2"]["route"]) == ("othr01", "web")
    assert lines["t-b1"]["bot"] is True

    assert (await export_clicks(db, target, NOW)).files == 0  # nothing twice
    await store_clicks(db, click(B, "t-b2", "2026-11-28T10:00:00.000000Z"))
    later = await export_clicks(db, target, NOW)
    assert (later.files, later.clicks) == (1, 1)
    assert tracking_ids(exported(folder)) == ["t-a1", "t-a2", "t-b1", "t-b2"]


async def test_both_exports_share_the_target_without_sharing_a_partition(db: Store, tmp_path: Path) -> None:
    folder = tmp_path / "exports"
    target = ExportTarget("local", folder=str(folder), prefix="v1")
    await store_clicks(db, click(A, "t-1", "2026-11-28T08:00:00.000000Z"))
    event_id, _ = await in_one_unit(db, lambda tx: events.apply(
        tx, A, events.prepare({"type": "page_view", "issued_at": "2026-11-28T08:00:00Z"}, "SERVER", NOW), NOW))

    result = await export_all(db, target, NOW, ("events", "clicks"))

    files = exported(folder)
    assert (result.events, result.clicks, result.files) == (1, 1, 2)
    assert sorted(key.rsplit("/", 1)[0] for key in files) == [f"v1/{A}/clicks/dt=2026-11-28", f"v1/{A}/dt=2026-11-28"]
    assert [line["id"] for line in files[next(k for k in files if "/clicks/" not in k)]] == [event_id]
    await store_clicks(db, click(A, "t-2", "2026-11-28T09:00:00.000000Z"))
    assert (await export_all(db, target, NOW, ("events",))).files == 0  # the clicks wait for a clicks export


class Killed(Exception):
    pass


class DiesAfterWriting(LocalSink):
    """Writes its files, then dies before the exporter can record them, like a process killed right there."""

    def __init__(self, folder: str, files: int) -> None:
        super().__init__(folder)
        self.left = files

    async def put(self, key: str, data: bytes) -> None:
        await super().put(key, data)
        self.left -= 1
        if self.left == 0:
            raise Killed("after writing")


@pytest.mark.parametrize("written_before_crash", [1, 2])
async def test_a_run_after_a_crash_rewrites_the_same_objects(db: Store, tmp_path: Path,
                                                             written_before_crash: int) -> None:
    folder = tmp_path / "exports"
    target = ExportTarget("local", folder=str(folder))
    await store_clicks(db, click(A, "t-1", "2026-11-27T10:00:00.000000Z"),
                       click(A, "t-2", "2026-11-28T10:00:00.000000Z"),
                       click(A, "t-3", "2026-11-27T10:30:00.000000Z"))
    with pytest.raises(Killed):
        await export_clicks(db, target, NOW, sink=DiesAfterWriting(str(folder), written_before_crash))
    after_crash = {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*.jsonl.gz")}
    assert len(after_crash) == written_before_crash
    # Clicks stored meanwhile (on a date the crashed run wrote) do not change what the claimed range was.
    await store_clicks(db, click(A, "t-4", "2026-11-27T11:00:00.000000Z"))

    result = await export_clicks(db, target, NOW)

    files = exported(folder)
    assert tracking_ids(files) == ["t-1", "t-2", "t-3", "t-4"]  # each exactly once
    assert len(files) == 3
    for key, data in after_crash.items():
        assert (folder / key).read_bytes() == data  # the same object, written again with the same bytes
    assert result.clicks == 4
    progress = {row.account_id: row for row in await progress_repo.progress(db.reader, target.identity)}
    newest = await fetch_one(db.reader, "SELECT max(id) FROM clicks")
    assert newest is not None and progress[A].last_id == newest[0] and progress[A].pending_id is None


async def test_batches_of_an_account_are_files_of_their_own(db: Store, tmp_path: Path) -> None:
    folder = tmp_path / "exports"
    await store_clicks(db, *(click(A, f"t-{n:02d}", f"2026-11-28T10:{n:02d}:00.000000Z") for n in range(7)))
    result = await export_clicks(db, ExportTarget("local", folder=str(folder)), NOW, batch=3)
    files = exported(folder)
    assert (result.files, result.clicks) == (3, 7)
    assert sorted(len(lines) for lines in files.values()) == [1, 3, 3]
    assert tracking_ids(files) == [f"t-{n:02d}" for n in range(7)]


async def test_clicks_after_a_deleted_links_last_clicks_are_exported(db: Store, tmp_path: Path) -> None:
    """On SQLite a new click takes the largest id left plus one: the ids of a deleted link's last clicks, which the
    watermark had passed, are handed out again, and the watermark goes back for them."""
    folder = tmp_path / "exports"
    target = ExportTarget("local", folder=str(folder))
    await store_clicks(db, click(A, "t-1", "2026-11-28T10:00:00.000000Z"),
                       *(click(A, f"t-gone-{n}", "2026-11-28T10:01:00.000000Z", OTHER_LINK) for n in range(3)))
    assert (await export_clicks(db, target, NOW)).clicks == 4
    before = await fetch_one(db.reader, "SELECT max(id) FROM clicks")
    await db.write(lambda tx: execute(tx, "DELETE FROM links WHERE id = ?", (OTHER_LINK,)))
    await store_clicks(db, click(A, "t-2", "2026-11-28T11:00:00.000000Z"),
                       click(B, "t-3", "2026-11-28T11:00:00.000000Z"))
    reused = await fetch_one(db.reader, "SELECT min(id) FROM clicks WHERE tracking_id IN ('t-2', 't-3')")
    assert before is not None and reused is not None
    if dialect(db.reader) == "sqlite":
        assert int(reused[0]) <= int(before[0])  # the ids came round again

    assert (await export_clicks(db, target, NOW)).clicks == 2
    assert tracking_ids(exported(folder)) == ["t-1", "t-2", "t-3", "t-gone-0", "t-gone-1", "t-gone-2"]


async def test_a_claimed_range_belongs_to_one_exporter_until_written(db: Store) -> None:
    async def steps(tx: Any) -> list[bool]:
        return [await progress_repo.claim(tx, "t", A, 0, 10, "now"),
                await progress_repo.claim(tx, "t", A, 0, 12, "now"),
                await progress_repo.advance(tx, "t", A, 0, 12, "now"),
                await progress_repo.advance(tx, "t", A, 0, 10, "now"),
                await progress_repo.advance(tx, "t", A, 0, 10, "now"),
                await progress_repo.claim(tx, "t", A, 0, 12, "now"),
                await progress_repo.claim(tx, "t", A, 10, 12, "now")]

    assert await db.write(steps) == [True, False, False, True, False, False, True]
    await db.write(lambda tx: execute(tx, "DELETE FROM accounts WHERE id = ?", (A,)))
    assert await progress_repo.progress(db.reader, "t") == []  # an account's progress goes with its clicks
