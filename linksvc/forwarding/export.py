"""The export job (product decisions, section 10, ``s3_export``): every stored event, exactly once across runs,
as gzipped JSON lines in ``{prefix}/{account_id}/dt=YYYY-MM-DD/{first_ts}-{uuid}.jsonl.gz``, in a local folder or
on S3-compatible storage.

Exactly once rests on three rules:

- an account's events are taken in rowid order after a watermark (:mod:`storage.exports`); on PostgreSQL,
  where no number follows commit order across nodes, each batch of events not yet claimed is numbered when
  it is claimed, and the positions stand for the rowids;
- before writing, the exporter claims the range it is about to write, so that the run after a crash writes
  exactly that range again, whatever arrived meanwhile;
- an object's name and bytes derive from (target, account, date, first and last rowid) and the events alone,
  so writing a range again replaces its objects instead of adding copies. The watermark moves only after
  every object of the range is written.

A crash between writing and moving the watermark costs a rewrite, never a duplicate or a gap. An event is
exported as it is at export time: a reversal that comes later is not exported again.

The job and ``linksvc export`` (:mod:`linksvc.forwarding.export_job`) also write the raw clicks when asked
(:mod:`linksvc.forwarding.click_export`), to the same target.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import logging
import os
import tempfile
import uuid
from collections.abc import AsyncIterator, Collection
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from linksvc.clock import iso, parse_iso
from linksvc.identity import USER_AGENT
from linksvc.jsoncodec import dumpb
from linksvc.progress import SILENT, Progress
from linksvc.redaction import mask_url_credentials, masked_repr
from storage import events
from storage import exports as repo
from storage.db import AnyDatabase
from storage.events import StoredEvent
from storage.exports import ExportProgress
from storage.postgres import PgConnection, PostgresDatabase

if TYPE_CHECKING:
    from linksvc.settings import Settings

log = logging.getLogger("linksvc.export")

NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "urn:linksvc:export")


@dataclass(frozen=True)
class ExportTarget:
    """Where events go: a local ``folder``, or an S3 ``bucket`` (any S3-compatible ``endpoint_url``)."""

    kind: Literal["local", "s3"]
    folder: str = ""
    prefix: str = ""
    bucket: str = ""
    endpoint_url: str = ""
    region: str = ""
    access_key_id: str = ""
    secret_access_key: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        if self.kind == "local" and not self.folder:
            raise ValueError("a local export target needs a folder")
        if self.kind == "s3" and not self.bucket:
            raise ValueError("an S3 export target needs a bucket")
        if bool(self.access_key_id) != bool(self.secret_access_key):
            raise ValueError("give both the access key id and the secret access key, or neither")

    def __repr__(self) -> str:
        return masked_repr(self)

    @property
    def identity(self) -> str:
        """Names the destination in the progress table: the same place keeps its progress across restarts."""
        prefix = self.prefix.strip("/")
        if self.kind == "local":
            return f"local:{Path(self.folder).resolve()}/{prefix}"
        return f"s3:{self.endpoint_url.rstrip('/') or 'aws'}/{self.bucket}/{prefix}"

    @property
    def shown(self) -> str:
        """The identity as logs and the command line show it: credentials in the endpoint URL masked."""
        return mask_url_credentials(self.identity)


def export_target(folder: str, s3_bucket: str = "", s3_endpoint: str = "", s3_prefix: str = "", s3_region: str = "",
                  s3_access_key_id: str = "", s3_secret_access_key: str = "") -> ExportTarget:
    """The target the settings name: S3 when a bucket is set, else the local folder."""
    if s3_bucket:
        return ExportTarget("s3", prefix=s3_prefix, bucket=s3_bucket, endpoint_url=s3_endpoint, region=s3_region,
                            access_key_id=s3_access_key_id, secret_access_key=s3_secret_access_key)
    return ExportTarget("local", folder=folder)


def export_target_of(settings: Settings) -> ExportTarget:
    """The export target the settings name: S3 when a bucket is set, else the local folder (``exports`` beside
    the database unless ``LINKSVC_EXPORT_DIR`` says otherwise)."""
    folder = settings.export_dir or str(Path(settings.db_path).parent / "exports")
    return export_target(folder, settings.export_s3_bucket, settings.export_s3_endpoint, settings.export_s3_prefix,
                         settings.export_s3_region, settings.export_s3_access_key_id,
                         settings.export_s3_secret_access_key)


@dataclass
class ExportResult:
    files: int = 0
    events: int = 0
    keys: list[str] = field(default_factory=list)
    clicks: int = 0  # the clicks export's (linksvc.forwarding.click_export)

    def add(self, other: ExportResult) -> ExportResult:
        """This result and ``other``'s together (a run of both exports)."""
        return ExportResult(self.files + other.files, self.events + other.events, self.keys + other.keys,
                            self.clicks + other.clicks)


@dataclass(frozen=True)
class ExportFile:
    key: str
    data: bytes
    events: int


def export_line(event: StoredEvent) -> dict[str, Any]:
    """One event as exported: its stored body, ``attribution`` as the client sent it, the resolved one
    beside it, and the stored columns."""
    body = dict(event.body)
    resolved = body.pop("attribution", None)
    original = body.pop("attribution_original", None)
    return {
        **body,
        "id": event.id, "account_id": event.account_id, "type": event.type, "customer_id": event.customer_id,
        "order_id": event.order_id, "issued_at": event.issued_at, "received_at": event.received_at,
        "attribution": original, "attribution_resolved": resolved,
        "reversed_at": event.reversed_at, "reversal": event.reversal,
    }


def build_files(target: ExportTarget, account_id: str, rows: list[tuple[int, StoredEvent]]) -> list[ExportFile]:
    """One file per issue date (UTC) of the events (each with its rowid), in rowid order. Same rows, same
    names and bytes."""
    days: dict[str, list[tuple[int, StoredEvent]]] = {}
    for rowid, event in rows:
        days.setdefault(parse_iso(event.issued_at).date().isoformat(), []).append((rowid, event))
    files = []
    for day, group in days.items():
        first, last = group[0][0], group[-1][0]
        name = uuid.uuid5(NAMESPACE, f"{target.identity}|{account_id}|{day}|{first}|{last}")
        first_ts = parse_iso(group[0][1].issued_at).strftime("%Y%m%dT%H%M%SZ")
        parts = (target.prefix.strip("/"), account_id, f"dt={day}", f"{first_ts}-{name}.jsonl.gz")
        lines = b"".join(dumpb(export_line(event)) + b"\n" for _, event in group)
        # mtime=0: the same events give the same bytes, so a rewrite after a crash is identical.
        files.append(ExportFile("/".join(p for p in parts if p), gzip.compress(lines, mtime=0), len(group)))
    return files


class Sink(Protocol):
    async def put(self, key: str, data: bytes) -> None: ...


class LocalSink:
    """Writes each object to a temporary name in its folder, syncs it, then renames it: a reader never sees
    half a file, and a file the progress counts as written is on disk."""

    def __init__(self, folder: str) -> None:
        self.folder = Path(folder).resolve()

    async def put(self, key: str, data: bytes) -> None:
        await asyncio.to_thread(self._write, key, data)

    def _write(self, key: str, data: bytes) -> None:
        path = (self.folder / key).resolve()
        if not path.is_relative_to(self.folder):
            raise ValueError(f"export key {key!r} leaves the export folder")
        path.parent.mkdir(parents=True, exist_ok=True)
        # A unique temporary name: two exporters rewriting the same range never write into one file.
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


class S3Sink:
    def __init__(self, client: Any, bucket: str) -> None:
        self.client = client
        self.bucket = bucket

    async def put(self, key: str, data: bytes) -> None:
        await self.client.put_object(Bucket=self.bucket, Key=key, Body=data, ContentType="application/gzip")


@contextlib.asynccontextmanager
async def open_sink(target: ExportTarget) -> AsyncIterator[Sink]:
    if target.kind == "local":
        yield LocalSink(target.folder)
        return
    # Imported here: botocore takes a noticeable time to import, and only S3 targets need it.
    from aiobotocore.config import AioConfig
    from aiobotocore.session import get_session

    options: dict[str, Any] = {"region_name": target.region or None}
    if target.endpoint_url:
        options["endpoint_url"] = target.endpoint_url
    if target.access_key_id:  # otherwise botocore's own chain (environment, profile, instance role)
        options["aws_access_key_id"] = target.access_key_id
        options["aws_secret_access_key"] = target.secret_access_key
    config = AioConfig(connect_timeout=10, read_timeout=60, retries={"max_attempts": 5, "mode": "standard"},
                       s3={"addressing_style": "path"} if target.endpoint_url else None,
                       user_agent_extra=USER_AGENT)
    async with get_session().create_client("s3", config=config, **options) as client:
        yield S3Sink(client, target.bucket)


async def _export_account(db: AnyDatabase, target: ExportTarget, sink: Sink, account: ExportProgress, now: str,
                          batch: int, result: ExportResult, progress: Progress) -> None:
    account_id: str = account.account_id
    last: int = account.last_rowid
    pending: int | None = account.pending_rowid
    if isinstance(db, PostgresDatabase):
        await _export_account_pg(db, target, sink, account_id, last, pending, now, batch, result, progress)
        return
    while True:
        if pending is not None:  # a range claimed by a run that did not finish: write exactly it again
            rows = await events.events_between(db.background, account_id, last, pending)
        else:
            rows = await events.events_after(db.background, account_id, last, batch)
            if not rows:
                return
            pending = rows[-1][0]
            async with db.transaction() as tx:
                claimed = await repo.claim(tx, target.identity, account_id, last, pending, now)
            if not claimed:
                log.info("another exporter is writing account %s to %s", account_id, target.shown)
                return
        files = await asyncio.to_thread(build_files, target, account_id, rows)
        for file in files:
            await sink.put(file.key, file.data)
            progress.advance(file.events)
        async with db.transaction() as tx:
            await repo.advance(tx, target.identity, account_id, last, pending, now)
        result.files += len(files)
        result.events += len(rows)
        result.keys.extend(file.key for file in files)
        last, pending = pending, None


async def _export_account_pg(db: PostgresDatabase, target: ExportTarget, sink: Sink, account_id: str, last: int,
                             pending: int | None, now: str, batch: int, result: ExportResult,
                             progress: Progress) -> None:
    """:func:`_export_account` on PostgreSQL, where several nodes write events at once: each batch is claimed
    (numbered) under the progress row's lock before it is written (:func:`storage.exports.claim_next`)."""
    identity = target.identity
    # One node at a time writes an account: a range claimed by a node that is still writing it is not written
    # again beside it. The lock belongs to a transaction held open (and idle) while this node writes: a node
    # that dies lets it go with its connection, and the next node writes the range it left claimed; and it
    # holds behind PgBouncer in transaction mode, where a session's lock would not.
    async with db.pool.acquire() as conn, conn.transaction(isolation="read_committed"):
        if not await repo.try_lock_account(PgConnection(conn), identity, account_id):
            log.info("another node is writing account %s to %s", account_id, target.shown)
            return
        await _export_account_pg_locked(db, target, sink, account_id, last, pending, now, batch, result, progress)


async def _export_account_pg_locked(db: PostgresDatabase, target: ExportTarget, sink: Sink, account_id: str,
                                    last: int, pending: int | None, now: str, batch: int, result: ExportResult,
                                    progress: Progress) -> None:
    identity = target.identity
    await db.write(partial(repo.ensure_progress, target=identity, account_id=account_id, now=now))
    progress_row = await repo.progress_of(db.background, identity, account_id)
    if progress_row is not None:  # as it is now that this node holds the account (another may have moved it)
        last, pending = progress_row.last_rowid, progress_row.pending_rowid
    while True:
        if pending is None:
            pending = await db.write(partial(repo.claim_next, target=identity, account_id=account_id,
                                             last_rowid=last, limit=batch, now=now))
            if pending is None:  # nothing left, or another node is writing this account
                return
        rows = await repo.claimed_events(db.background, identity, account_id, last, pending)
        files = await asyncio.to_thread(build_files, target, account_id, rows)
        for file in files:
            await sink.put(file.key, file.data)
            progress.advance(file.events)
        await db.write(partial(repo.advance, target=identity, account_id=account_id, last_rowid=last,
                               pending_rowid=pending, now=now))
        result.files += len(files)
        result.events += len(rows)
        result.keys.extend(file.key for file in files)
        last, pending = pending, None


async def export_events(db: AnyDatabase, target: ExportTarget, now: datetime, batch: int = 10_000,
                        sink: Sink | None = None, accounts: Collection[str] | None = None,
                        progress: Progress | None = None) -> ExportResult:
    """Writes every event not yet exported to ``target`` (only ``accounts``' when given), ``batch`` events
    of an account at a time. ``sink`` replaces the target's own writer (tests). ``progress``, when given,
    counts the events written (their number is counted first, which the service's own runs skip)."""
    if batch < 1:
        raise ValueError("batch must be positive")
    result = ExportResult()
    todo = [row for row in await repo.accounts_to_export(db.background, target.identity)
            if accounts is None or row.account_id in accounts]
    if not todo:
        return result
    if progress is None:
        progress = SILENT
    else:
        progress.stage(f"export to {target.kind}: counting", None, "events")
        total = 0
        for account in todo:
            if isinstance(db, PostgresDatabase):
                total += await repo.count_unclaimed(db.background, target.identity, account.account_id)
                total += (account.pending_rowid or account.last_rowid) - account.last_rowid
            else:
                total += await events.count_events_after(db.background, account.account_id, account.last_rowid)
        progress.stage(f"export to {target.kind}", total, "events")
    async with contextlib.AsyncExitStack() as stack:
        writer = sink if sink is not None else await stack.enter_async_context(open_sink(target))
        for account in todo:
            await _export_account(db, target, writer, account, iso(now), batch, result, progress)
    if result.events:
        log.info("exported %d events in %d files to %s", result.events, result.files, target.shown)
    return result


EXPORTS = ("events", "clicks")
"""What an export run may write: the events, and the raw clicks (:mod:`linksvc.forwarding.click_export`)."""


def exports_of(settings: Settings) -> tuple[str, ...]:
    """What the settings export: the events, and the clicks with ``LINKSVC_EXPORT_CLICKS``."""
    return ("events", "clicks") if settings.export_clicks else ("events",)
