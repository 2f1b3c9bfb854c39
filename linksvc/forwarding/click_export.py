"""The clicks export (issue 37): every stored click, exactly once across runs, as gzipped JSON lines in
``{prefix}/{account_id}/clicks/dt=YYYY-MM-DD/{first_ts}-{uuid}.jsonl.gz``, to the events export's target (a
local folder or S3-compatible storage), by the same job and command (:mod:`linksvc.forwarding.export`).

It reads stored clicks in the background (the store's background reader), never the click path: the resolver
and the click writer do nothing for it. Exactly once rests on the events export's three rules, with the click
id for the rowid:

- an account's clicks are taken in id order after its watermark (:mod:`storage.click_exports`), only up to a
  horizon under which every id is committed (:func:`storage.conversions.click_horizon`, as the rollups' pass
  takes it): on PostgreSQL ids commit out of order, and a click committed late below the watermark would be
  skipped;
- before writing, the exporter claims the range (``last_id``, ``pending_id``] it is about to write, so that the
  run after a crash writes exactly that range again, whatever arrived meanwhile;
- an object's name and bytes derive from (target, account, date, the claimed range) and the clicks alone, so
  writing a range again replaces its objects. The watermark moves only after every object of the range is
  written.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import logging
import uuid
from collections.abc import Collection
from datetime import datetime
from functools import partial
from typing import Any

from linksvc.clock import iso, parse_iso
from linksvc.forwarding.export import NAMESPACE, ExportFile, ExportResult, ExportTarget, Sink, open_sink
from linksvc.jsoncodec import dumpb
from linksvc.progress import SILENT, Progress
from linksvc.reports.rollups import HORIZON_TURN
from linksvc.store import Store
from storage import click_exports as repo
from storage.click_exports import ClickExportProgress, StoredClick
from storage.conversions import ROUTES, click_horizon

log = logging.getLogger("linksvc.export")

UTM_FIELDS = ("utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content")
ROUTE_NAMES = ("web", "app", "store")


def click_line(click: StoredClick) -> dict[str, Any]:
    """One click as exported: what Dub's and Shlink's exports give (time, link, where from, what device, UTM)
    and what this service adds (tracking id, rule, variant, the answer and its route). Never the client's address
    (no click holds it) nor the visitor hash made from it; the referrer as its host only."""
    route = ROUTES.get(click.answer)
    return {
        "clicked_at": click.clicked_at, "account_id": click.account_id, "link_id": click.link_id,
        "code": click.code, "campaign_id": click.campaign_id, "tracking_id": click.tracking_id,
        "platform": click.platform, "os": click.os_family, "os_version": click.os_version,
        "browser": click.browser_family, "browser_version": click.browser_version,
        "device_brand": click.device_brand, "device_model": click.device_model, "bot": click.bot,
        "country": click.country, "region": click.region, "city": click.city,
        "referrer_host": click.referrer_host,
        **{name: click.utm.get(name) or None for name in UTM_FIELDS},
        "rule": click.rule, "variant": click.variant, "answer": click.answer,
        "route": None if route is None else ROUTE_NAMES[route],
    }


def build_click_files(target: ExportTarget, account_id: str, after: int, upto: int,
                      clicks: list[StoredClick]) -> list[ExportFile]:
    """One file per click date (UTC) of the range (``after``, ``upto``], in id order. Same range and clicks, same
    names and bytes."""
    days: dict[str, list[StoredClick]] = {}
    for click in clicks:
        days.setdefault(parse_iso(click.clicked_at).date().isoformat(), []).append(click)
    files = []
    for day, group in days.items():
        name = uuid.uuid5(NAMESPACE, f"{target.identity}|clicks|{account_id}|{day}|{after}|{upto}")
        first_ts = parse_iso(group[0].clicked_at).strftime("%Y%m%dT%H%M%SZ")
        parts = (target.prefix.strip("/"), account_id, "clicks", f"dt={day}", f"{first_ts}-{name}.jsonl.gz")
        lines = b"".join(dumpb(click_line(click)) + b"\n" for click in group)
        # mtime=0: the same clicks give the same bytes, so a rewrite after a crash is identical.
        files.append(ExportFile("/".join(p for p in parts if p), gzip.compress(lines, mtime=0), len(group)))
    return files


async def _export_account(db: Store, target: ExportTarget, sink: Sink, account: ClickExportProgress,
                          horizon: int, now: str, batch: int, result: ExportResult, progress: Progress) -> None:
    account_id, identity = account.account_id, target.identity
    last, pending = account.last_id, account.pending_id
    while True:
        if pending is not None:  # a range claimed by a run that did not finish: write exactly it again
            clicks = await repo.clicks_between(db.background, account_id, last, pending)
        else:
            clicks = await repo.clicks_between(db.background, account_id, last, horizon, batch)
            if not clicks:
                return
            # A short batch reaches the horizon: the range then ends there, and reads back the same clicks.
            pending = clicks[-1].id if len(clicks) == batch else horizon
            if not await db.write(partial(repo.claim, target=identity, account_id=account_id, last_id=last,
                                          pending_id=pending, now=now)):
                log.info("another exporter is writing the clicks of account %s to %s", account_id, target.shown)
                return
        files = await asyncio.to_thread(build_click_files, target, account_id, last, pending, clicks)
        for file in files:
            await sink.put(file.key, file.data)
            progress.advance(file.events)
        await db.write(partial(repo.advance, target=identity, account_id=account_id, last_id=last,
                               pending_id=pending, now=now))
        result.files += len(files)
        result.clicks += len(clicks)
        result.keys.extend(file.key for file in files)
        last, pending = pending, None


async def export_clicks(db: Store, target: ExportTarget, now: datetime, batch: int = 10_000,
                        sink: Sink | None = None, accounts: Collection[str] | None = None,
                        progress: Progress | None = None) -> ExportResult:
    """Writes every click stored before the call and not yet exported to ``target`` (only ``accounts``' when
    given), ``batch`` clicks of an account at a time. ``sink`` replaces the target's own writer (tests).
    ``progress``, when given, counts the clicks written (their number is counted first)."""
    if batch < 1:
        raise ValueError("batch must be positive")
    result = ExportResult()
    horizon = await db.write(click_horizon, HORIZON_TURN)
    todo = [row for row in await repo.accounts_to_export(db.background, target.identity, horizon)
            if accounts is None or row.account_id in accounts]
    if not todo:
        return result
    if progress is None:
        progress = SILENT
    else:
        progress.stage(f"export of clicks to {target.kind}: counting", None, "clicks")
        total = 0
        for account in todo:
            total += await repo.count_clicks_between(db.background, account.account_id, account.last_id,
                                                     max(horizon, account.pending_id or 0))
        progress.stage(f"export of clicks to {target.kind}", total, "clicks")
    async with contextlib.AsyncExitStack() as stack:
        writer = sink if sink is not None else await stack.enter_async_context(open_sink(target))
        for account in todo:
            await _export_account(db, target, writer, account, horizon, iso(now), batch, result, progress)
    if result.clicks:
        log.info("exported %d clicks in %d files to %s", result.clicks, result.files, target.shown)
    return result

