"""The raw clicks reach a local S3 (moto) once each after a ``kill -9`` in the middle of exporting (issue 37), and
``linksvc export`` writes them when asked (``--what``) or set (``LINKSVC_EXPORT_CLICKS``).

The service (two workers, the clicks export on, a run every half second) exports the clicks of a first round;
then S3 stops answering (moto frozen), more clicks come, an export claims them and hangs on its upload, and the
service is killed with ``kill -9``. S3 answers again (the frozen upload may then land), the service starts
again, and every click stored is in the bucket exactly once, in its own account's files. On SQLite or on
PostgreSQL (``LINKSVC_TEST_DATABASE_URL``)."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from linksvc.seed import load_seed
from storage import clicks as click_repo
from tests.e2e.s3 import AWS_ENV, BUCKET, KEY_ID, SECRET, bucket_objects, moto_server, s3_client
from tests.factories import A, B, ids, two_accounts
from tests.processes import (
    NoRedirect,
    ServiceStore,
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
          "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"]
QUERIES = ["", "?utm_source=mail&utm_campaign=bf", "?utm_source=ads"]
LINE_FIELDS = {"clicked_at", "account_id", "link_id", "code", "campaign_id", "tracking_id", "platform", "os",
               "os_version", "browser", "browser_version", "device_brand", "device_model", "bot", "country",
               "region", "city", "referrer_host", "utm_source", "utm_medium", "utm_campaign", "utm_term",
               "utm_content", "rule", "variant", "answer", "route"}


@pytest.fixture
def s3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    for name, value in AWS_ENV.items():
        monkeypatch.setenv(name, value)
    with moto_server(tmp_path) as server:
        yield server


def _start(tmp_path: Path, store: ServiceStore, endpoint: str) -> tuple[str, subprocess.Popen[bytes]]:
    port = free_port()
    process = start_forwarding_service(tmp_path, port, workers=WORKERS, database_url=store.url, extra={
        "LINKSVC_EXPORT_CLICKS": "1", "LINKSVC_EXPORT_INTERVAL_SECONDS": "0.5", "LINKSVC_CLICK_FLUSH_SECONDS": "0.2",
        "LINKSVC_EXPORT_S3_BUCKET": BUCKET, "LINKSVC_EXPORT_S3_ENDPOINT": endpoint,
        "LINKSVC_EXPORT_S3_REGION": "us-east-1", "LINKSVC_EXPORT_S3_PREFIX": "raw",
        "LINKSVC_EXPORT_S3_ACCESS_KEY_ID": KEY_ID, "LINKSVC_EXPORT_S3_SECRET_ACCESS_KEY": SECRET})
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


def _all_exported(store: ServiceStore) -> bool:
    """Every account's clicks are past its watermark, and no range is claimed."""
    behind = store.rows("SELECT count(*) FROM clicks c WHERE NOT EXISTS (SELECT 1 FROM click_export_progress p "
                        "WHERE p.account_id = c.account_id AND p.pending_id IS NULL AND p.last_id >= c.id)")
    return int(behind[0][0]) == 0


def test_every_click_reaches_s3_once_across_a_kill_9_in_the_middle_of_exporting(
        tmp_path: Path, store: ServiceStore, s3: tuple[str, subprocess.Popen[bytes]]) -> None:
    endpoint, moto = s3

    async def create_bucket() -> None:
        async with s3_client(endpoint) as client:
            await client.create_bucket(Bucket=BUCKET)
    asyncio.run(create_bucket())

    base, process = _start(tmp_path, store, endpoint)
    frozen = False
    try:
        for n in range(24):
            _click(base, n)
        assert wait_for(lambda: store.count("clicks") == 24, 30)
        assert wait_for(lambda: _all_exported(store), 30)  # the first round is in the bucket

        os.kill(moto.pid, signal.SIGSTOP)  # S3 stops answering: an upload now hangs
        frozen = True
        for n in range(24, 60):
            _click(base, n)
        assert wait_for(lambda: store.count("clicks") == 60, 30)
        # An export has claimed the new clicks and waits on its upload.
        assert wait_for(lambda: store.count("click_export_progress", "pending_id IS NOT NULL") > 0, 30)
    finally:
        _kill_9(process)
        if frozen:
            os.kill(moto.pid, signal.SIGCONT)
    assert not _all_exported(store)

    base, process = _start(tmp_path, store, endpoint)
    try:
        assert wait_for(lambda: _all_exported(store), 60)
    finally:
        stop(process)

    objects = asyncio.run(bucket_objects(endpoint))
    stored = {row[0]: row for row in store.rows("SELECT tracking_id, account_id, platform, bot FROM clicks")}
    assert len(stored) == 60
    lines = [line for found in objects.values() for line in found]
    assert Counter(line["tracking_id"] for line in lines) == Counter(list(stored))  # each click exactly once
    for key, found in objects.items():
        prefix, account, kind, day, _ = key.split("/")
        assert (prefix, kind) == ("raw", "clicks") and account in (A, B)
        for line in found:  # an account's clicks in its own files only, each as a user of the export reads it
            assert set(line) == LINE_FIELDS
            assert (line["account_id"], line["platform"], int(line["bot"])) == stored[line["tracking_id"]][1:]
            assert account == line["account_id"] and day == f"dt={line['clicked_at'][:10]}"
            assert line["code"] == f"lnk{account[:4]}"
    assert {line["utm_campaign"] for line in lines} == {None, "bf"}
    assert any(line["bot"] for line in lines) and any(line["route"] == "web" for line in lines)


def _export_command(store: ServiceStore, folder: Path, *args: str, **env: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-m", "linksvc", "export", *store.args(), "--dir", str(folder), *args],
                          env={**os.environ, "LINKSVC_LOG_FORMAT": "text", **env}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


async def test_linksvc_export_writes_the_clicks_when_asked_or_set(tmp_path: Path, store: ServiceStore) -> None:
    async with store.opened() as db:
        await load_seed(db, two_accounts(), allow_private=True)
        rows = [[account, ids(account)["links"], f"t-{n}", f"2026-11-28T10:00:0{n}.000000Z", "web", 0,
                 "destination", None, None, "{}", None, *([None] * 14)] for n, account in enumerate((A, B, A))]
        await db.write(lambda tx: click_repo.insert_clicks(tx, rows))
    folder = tmp_path / "exports"

    assert "clicks" not in _export_command(store, folder)  # the events only, unless set or asked
    assert not folder.exists() or not list(folder.rglob("*.jsonl.gz"))
    answer = _export_command(store, folder, "--what", "clicks")
    assert (answer["files"], answer["events"], answer["clicks"]) == (2, 0, 3)
    written = {str(path.relative_to(folder)).rsplit("/", 1)[0]: path for path in folder.rglob("*.jsonl.gz")}
    assert sorted(written) == [f"{A}/clicks/dt=2026-11-28", f"{B}/clicks/dt=2026-11-28"]
    assert [json.loads(line)["tracking_id"] for line in gzip.decompress(written[f"{A}/clicks/dt=2026-11-28"]
                                                                          .read_bytes()).splitlines()] == ["t-0", "t-2"]
    assert _export_command(store, folder, LINKSVC_EXPORT_CLICKS="1")["clicks"] == 0  # each click once
