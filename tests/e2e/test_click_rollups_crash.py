"""The conversion report after a ``kill -9`` between the clicks' commit and the rollups' pass (issue 33): the
click writer stores clicks only and a pass counts them into the rollups later, behind a mark; the service is
killed with every click stored and none counted, restarted, and its report equals counting the stored clicks
one by one (clicks people and bots apart, unique visitors, routes) for several groupings; more clicks after the
restart are counted too, none twice. Two workers, on SQLite or on PostgreSQL (``LINKSVC_TEST_DATABASE_URL``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import urllib.error
import urllib.request
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.factories import ADMIN_TOKEN, A, B
from tests.processes import (
    NoRedirect,
    ServiceStore,
    call,
    children,
    free_port,
    ready,
    start_forwarding_service,
    stop,
    wait_for,
)

WORKERS = 2
AGENTS = ["Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 Version/17.1 Mobile/15E148 "
          "Safari/604.1",
          "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/120.0 Mobile Safari/537.36",
          "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36",
          "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_1) AppleWebKit/605.1.15 Version/17.1 Safari/605.1.15",
          "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"]
QUERIES = ["", "?utm_source=mail", "?utm_source=ads&utm_campaign=bf", "?utm_source=mail&utm_medium=email"]
GROUPS = ["link", "utm_source,platform", "day,utm_campaign", "utm_medium"]
ROUTE = {"destination": "web", "fallback": "web", "intent": "app", "deeplink": "app", "play": "store",
         "app_store": "store", "landing": "store"}
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def _start(tmp_path: Path, store: ServiceStore, extra: dict[str, str]) -> tuple[str, subprocess.Popen[bytes]]:
    port = free_port()
    process = start_forwarding_service(tmp_path, port, workers=WORKERS, database_url=store.url, extra=extra)
    base = f"http://127.0.0.1:{port}"
    if not ready(base) or not wait_for(lambda: len(children(process.pid)) == WORKERS):
        stop(process)
        raise AssertionError("the service did not start: " + (tmp_path / f"server-{port}.log").read_text())
    return base, process


def _kill_9(supervisor: subprocess.Popen[bytes]) -> None:
    """SIGKILL to the supervisor and its workers (frozen first, so that it does not stop them cleanly)."""
    os.kill(supervisor.pid, signal.SIGSTOP)
    workers = children(supervisor.pid)
    for pid in workers:
        os.kill(pid, signal.SIGKILL)
    supervisor.kill()
    supervisor.wait(timeout=10)

    def gone(pid: int) -> bool:
        try:
            return "zombie" in Path(f"/proc/{pid}/status").read_text()
        except FileNotFoundError:
            return True
    assert wait_for(lambda: all(gone(pid) for pid in workers), 10)


def _click(base: str, n: int) -> None:
    opener = urllib.request.build_opener(NoRedirect)
    request = urllib.request.Request(f"{base}/lnk{(A, B)[n % 2][:4]}{QUERIES[n % len(QUERIES)]}",
                                     headers={"User-Agent": AGENTS[(n // 2) % len(AGENTS)]})
    with pytest.raises(urllib.error.HTTPError) as answer:
        opener.open(request, timeout=10)
    assert answer.value.code == 302


def _range() -> tuple[str, str]:
    today = datetime.now(UTC).date()
    return (today - timedelta(days=6)).isoformat(), today.isoformat()


def _one_by_one(store: ServiceStore, account: str, group_by: list[str]) -> dict[tuple[str, ...], dict[str, Any]]:
    """The click figures of a report's rows, counted from the stored clicks one by one."""
    first, last = _range()
    rows: dict[tuple[str, ...], dict[str, Any]] = defaultdict(
        lambda: {"human": 0, "bot": 0, "visitors": set(), "web": 0, "app": 0, "store": 0})
    for clicked_at, link, utm, platform, bot, answer, visitor in store.rows(
            "SELECT clicked_at, link_id, utm, platform, bot, answer, visitor FROM clicks WHERE account_id = ?",
            account):
        day = clicked_at[:10]
        if not first <= day <= last:
            continue
        utm = json.loads(utm) if isinstance(utm, str) else utm
        fine = (day, link, utm.get("utm_source", ""), utm.get("utm_medium", ""), utm.get("utm_campaign", ""),
                platform)
        dims = dict(zip(("day", "link", "utm_source", "utm_medium", "utm_campaign", "platform"), fine, strict=True))
        figures = rows[tuple(dims[g] for g in group_by)]
        if bot:
            figures["bot"] += 1
            continue
        figures["human"] += 1
        if answer in ROUTE:
            figures[ROUTE[answer]] += 1
        if visitor:
            figures["visitors"].add((fine, visitor))
    return {key: {"clicks": {"human": f["human"], "bot": f["bot"]}, "visitors": len(f["visitors"]),
                  "routes": {"web": f["web"], "app": f["app"], "store": f["store"]}} for key, f in rows.items()}


def _reported(base: str, account: str, group_by: list[str]) -> dict[tuple[str, ...], dict[str, Any]]:
    first, last = _range()
    status, body, _ = call(f"{base}/api/admin/v1/accounts/{account}/reports/conversions?group_by="
                           f"{','.join(group_by)}&from={first}&to={last}&limit=1000", ADMIN)
    assert status == 200, body
    return {tuple(row["key"][g] for g in group_by): {k: row[k] for k in ("clicks", "visitors", "routes")}
            for row in body["data"]["rows"] if row["clicks"]["human"] or row["clicks"]["bot"]}


def _mark(store: ServiceStore) -> int:
    found = store.rows("SELECT counted FROM conversion_click_mark")
    return int(found[0][0]) if found else 0


def test_reports_count_every_click_once_across_a_kill_between_the_clicks_and_their_pass(
        tmp_path: Path, store: ServiceStore) -> None:
    # No pass in the background before the kill (its first click would have to be an hour old), clicks written
    # within a fifth of a second.
    base, process = _start(tmp_path, store, {"LINKSVC_CLICK_ROLLUP_SECONDS": "3600",
                                             "LINKSVC_CLICK_FLUSH_SECONDS": "0.2"})
    try:
        clicks = 160
        for n in range(clicks):
            _click(base, n)
        assert wait_for(lambda: store.count("clicks", "tracking_id <> ''") >= clicks, 30)
        stored = store.count("clicks")
        newest = int(store.rows("SELECT max(id) FROM clicks")[0][0])
        assert _mark(store) < newest  # the clicks are committed, their pass has not run
    finally:
        _kill_9(process)
    assert store.integrity() == "ok"
    assert store.count("clicks") == stored

    base, process = _start(tmp_path, store, {})
    try:
        for account in (A, B):
            for group in GROUPS:
                names = group.split(",")
                assert _reported(base, account, names) == _one_by_one(store, account, names), (account, group)
        assert _mark(store) >= newest
        # More clicks, counted by the restarted service's passes (a report, and the background one), once each.
        for n in range(clicks, clicks + 60):
            _click(base, n)
        assert wait_for(lambda: store.count("clicks") >= stored + 60, 30)
        assert wait_for(lambda: _mark(store) >= int(store.rows("SELECT max(id) FROM clicks")[0][0]), 30)
        for account in (A, B):
            for group in GROUPS:
                names = group.split(",")
                assert _reported(base, account, names) == _one_by_one(store, account, names), (account, group)
    finally:
        stop(process, grace=30)
    assert process.returncode == 0
