"""The export job on a local folder, over events stored by the real service: partitions, the lines, and each
event written exactly once across runs, also when a run dies between writing a file and recording it."""

from __future__ import annotations

import asyncio
import gzip
import json
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from linksvc.forwarding.export import ExportTarget, LocalSink, export_events
from linksvc.forwarding.export_job import ExportJob
from linksvc.loyalty import reversal
from linksvc.loyalty import service as events
from linksvc.seed import load_seed
from storage import accounts as account_repo
from storage import exports as export_repo
from storage.db import Database, fetch_one
from tests.factories import A, B, two_accounts

NOW = datetime(2024, 5, 2, 12, 0, tzinfo=UTC)
NAME = re.compile(r"^(\d{8}T\d{6}Z)-[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl\.gz$")


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(str(tmp_path / "svc.db"), "NORMAL")
    await database.open()
    await load_seed(database, two_accounts(), allow_private=True)
    yield database
    await database.close()


async def store(db: Database, account_id: str, *raws: dict[str, Any]) -> list[str]:
    """Stores events exactly as the service does; returns their ids."""
    ids = []
    async with db.transaction() as tx:
        for raw in raws:
            event_id, _ = await events.apply(tx, account_id, events.prepare(raw, "SERVER", NOW), NOW)
            ids.append(event_id)
    return ids


def view(issued_at: str, **extra: Any) -> dict[str, Any]:
    return {"type": "page_view", "issued_at": issued_at, **extra}


def exported(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Every exported file (path relative to ``folder``) with its parsed lines."""
    return {str(path.relative_to(folder)): lines_of(path.read_bytes())
            for path in sorted(folder.rglob("*.jsonl.gz"))}


def first_ts(name: str) -> str:
    """The ``first_ts`` of ``{first_ts}-{uuid5}.jsonl.gz``."""
    match = NAME.match(name)
    assert match, name
    return match.group(1)


def lines_of(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in gzip.decompress(data).splitlines()]


def snapshot(folder: Path) -> dict[Path, bytes | None]:
    return {path: path.read_bytes() if path.is_file() else None for path in folder.rglob("*")}


def ids_of(files: dict[str, list[dict[str, Any]]]) -> list[str]:
    return [line["id"] for lines in files.values() for line in lines]


ORIGINAL = {"utm_source": "newsletter", "utm_campaign": "  ", "revenue": 12.5, "currency": "COP",
            "partner": {"id": 7, "tags": ["a", "b"]}}


async def test_events_land_in_account_and_date_partitions_with_the_attribution_as_sent(
        db: Database, tmp_path: Path) -> None:
    purchase = {"type": "PURCHASE", "customer_id": "cust-aaaa", "order_id": "o-1", "currency": "COP",
                "value": 19900.5, "products": [{"sku": "SKU-1", "quantity": 2}], "issued_at": "2024-05-01T10:00:00Z",
                "utm_source": "top-level", "attribution": ORIGINAL, "properties": {"utm_medium": "email"}}
    [purchase_id, a_second_day] = await store(db, A, purchase, view("2024-05-02T09:30:00.250Z"))
    [b_first_day] = await store(db, B, view("2024-05-01T23:59:59Z", attribution={"utm_source": "b"}))
    async with db.transaction() as tx:
        await reversal.reverse(tx, A, purchase_id, "returned", NOW)
    folder = tmp_path / "exports"

    result = await export_events(db, ExportTarget("local", folder=str(folder), prefix="/events/"), NOW)

    files = exported(folder)
    assert (result.files, result.events) == (3, 3)
    assert sorted(result.keys) == sorted(files)
    # partition -> (first_ts of the file name, the ids in the file)
    partitions = {str(Path(key).parent): (first_ts(Path(key).name), [line["id"] for line in lines])
                  for key, lines in files.items()}
    assert partitions == {f"events/{A}/dt=2024-05-01": ("20240501T100000Z", [purchase_id]),
                          f"events/{A}/dt=2024-05-02": ("20240502T093000Z", [a_second_day]),
                          f"events/{B}/dt=2024-05-01": ("20240501T235959Z", [b_first_day])}
    by_id = {line["id"]: line for lines in files.values() for line in lines}
    assert by_id[b_first_day]["attribution"] == {"utm_source": "b"}
    line = by_id[purchase_id]
    assert line["attribution"] == ORIGINAL  # exactly as sent, blanks and unknown members included
    assert line["attribution_resolved"]["utm_source"] == "top-level"
    assert line["attribution_resolved"]["utm_medium"] == "email"
    assert {k: line[k] for k in ("account_id", "type", "customer_id", "order_id", "issued_at", "value", "currency")} \
        == {"account_id": A, "type": "PURCHASE", "customer_id": "cust-aaaa", "order_id": "o-1",
            "issued_at": "2024-05-01T10:00:00.000000Z", "value": 19900.5, "currency": "COP"}
    assert line["received_at"] == "2024-05-02T12:00:00.000000Z"
    assert line["products"] == [{"sku": "SKU-1", "quantity": 2}]
    assert line["reversed_at"] == "2024-05-02T12:00:00.000000Z" and line["reversal"]["reason"] == "returned"
    assert "attribution_original" not in line and "payload_hash" not in line


async def test_every_event_is_written_once_across_runs(db: Database, tmp_path: Path) -> None:
    folder = tmp_path / "exports"
    target = ExportTarget("local", folder=str(folder))
    first = await store(db, A, *(view(f"2024-05-01T10:00:0{n}Z") for n in range(5)))
    assert (await export_events(db, target, NOW, batch=2)).events == 5
    before = snapshot(folder)

    again = await export_events(db, target, NOW, batch=2)

    assert (again.files, again.events) == (0, 0)
    assert snapshot(folder) == before
    later = await store(db, A, view("2024-05-01T11:00:00Z")) + await store(db, B, view("2024-05-02T08:00:00Z"))
    third = await export_events(db, target, NOW, batch=2)
    assert (third.files, third.events) == (2, 2)
    assert sorted(ids_of(exported(folder))) == sorted(first + later)
    # Within a run an account's events go out in the order they were stored, `batch` at a time.
    assert len(list((folder / A / "dt=2024-05-01").iterdir())) == 4
    assert not list(folder.rglob("*.tmp"))


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
async def test_a_run_after_a_crash_rewrites_the_same_objects(db: Database, tmp_path: Path,
                                                             written_before_crash: int) -> None:
    folder = tmp_path / "exports"
    target = ExportTarget("local", folder=str(folder))
    claimed = await store(db, A, view("2024-05-01T10:00:00Z"), view("2024-05-02T10:00:00Z"),
                          view("2024-05-01T10:30:00Z"))
    with pytest.raises(Killed):
        await export_events(db, target, NOW, sink=DiesAfterWriting(str(folder), written_before_crash))
    after_crash = {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*.jsonl.gz")}
    assert len(after_crash) == written_before_crash
    # Events that arrive meanwhile (on a date the crashed run wrote) do not change what the claimed range was.
    newer = await store(db, A, view("2024-05-01T11:00:00Z"))

    result = await export_events(db, target, NOW)

    files = exported(folder)
    assert sorted(ids_of(files)) == sorted(claimed + newer)  # each exactly once
    assert len(files) == 3
    for key, data in after_crash.items():
        assert (folder / key).read_bytes() == data  # the same object, written again with the same bytes
    assert result.events == 4
    [progress] = await export_repo.progress(db.reader, target.identity)
    newest = await fetch_one(db.reader, "SELECT max(rowid) FROM events")
    assert newest is not None and progress.last_rowid == newest[0]
    assert progress.pending_rowid is None


async def test_a_claimed_range_belongs_to_one_exporter_until_written(db: Database) -> None:
    async with db.transaction() as tx:
        assert await export_repo.claim(tx, "t", A, 0, 10, "now")
        assert not await export_repo.claim(tx, "t", A, 0, 12, "now")
        assert not await export_repo.advance(tx, "t", A, 0, 12, "now")
        assert await export_repo.advance(tx, "t", A, 0, 10, "now")
        assert not await export_repo.advance(tx, "t", A, 0, 10, "now")
        assert not await export_repo.claim(tx, "t", A, 0, 12, "now")
        assert await export_repo.claim(tx, "t", A, 10, 12, "now")
        assert await account_repo.delete_account(tx, A)
    assert await export_repo.progress(db.reader, "t") == []  # an account's progress goes with its events


async def test_the_job_exports_periodically_until_stopped(db: Database, tmp_path: Path) -> None:
    folder = tmp_path / "exports"
    job = ExportJob(db, ExportTarget("local", folder=str(folder)), interval=0.05)
    stored = await store(db, A, view("2024-05-01T10:00:00Z"))
    job.start()
    try:
        for _ in range(100):
            await asyncio.sleep(0.02)
            if len(ids_of(exported(folder))) == 1:
                break
        stored += await store(db, B, view("2024-05-01T10:00:00Z"))
        for _ in range(100):
            await asyncio.sleep(0.02)
            if len(ids_of(exported(folder))) == 2:
                break
    finally:
        await job.stop()
    assert sorted(ids_of(exported(folder))) == sorted(stored)
    assert (await job.run_once()).events == 0


async def test_the_job_logs_a_failed_run_and_retries(db: Database, tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "exports"
    folder.write_text("a file where the folder should be")
    job = ExportJob(db, ExportTarget("local", folder=str(folder)), interval=0.05)
    stored = await store(db, A, view("2024-05-01T10:00:00Z"))
    job.start()
    try:
        for _ in range(100):
            await asyncio.sleep(0.02)
            if "export to" in caplog.text:
                break
        folder.unlink()
        for _ in range(100):
            await asyncio.sleep(0.02)
            if folder.is_dir() and ids_of(exported(folder)):
                break
    finally:
        await job.stop()
    assert "failed; will retry" in caplog.text
    assert ids_of(exported(folder)) == stored
