"""Several worker processes on one port, so that the service uses every core.

One Python process answers on one core. With ``LINKSVC_WORKERS`` (or ``serve --workers``) above 1 the
``serve`` process becomes a small supervisor:

- it opens the database once first (migrations, the demo data), so workers never race on either;
- it forks the workers; each runs the whole service (``create_app``) on the same host and port with
  ``SO_REUSEPORT``, so the kernel spreads new connections over them;
- SIGTERM or SIGINT to the supervisor is passed on as SIGTERM to every worker, whose clean shutdown writes
  its buffered clicks, and the supervisor waits for them all;
- a worker that dies on its own is started again (after a second), and a worker whose supervisor dies is
  sent SIGTERM by the kernel (``PR_SET_PDEATHSIG``), so no worker outlives it.

Workers share everything through SQLite (rate limits, tokens, campaign versions, clicks); what a worker
keeps in memory is either checked against the store on use or, like the metrics, shared through files.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable
from types import FrameType

from linksvc.app import load_demo_if_empty
from linksvc.settings import Settings
from linksvc.store import store_of

log = logging.getLogger("linksvc")

PR_SET_PDEATHSIG = 1
RESTART_DELAY_SECONDS = 1.0


async def prepare_database(settings: Settings) -> None:
    """Migrations and the demo data, once, before any worker starts."""
    db = store_of(settings)
    await db.open()
    try:
        await load_demo_if_empty(db, settings)
    finally:
        await db.close()


def _die_with_parent() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: the worker then outlives a killed supervisor
        pass


def supervise(settings: Settings, count: int, run_worker: Callable[[Settings, str], None]) -> int:
    """Run ``count`` workers until SIGTERM/SIGINT; returns the exit code."""
    asyncio.run(prepare_database(settings))
    metrics_dir = tempfile.mkdtemp(prefix="linksvc-metrics-")
    workers: dict[int, int] = {}  # pid -> slot
    stopping = False
    parent = os.getpid()

    def start(slot: int) -> None:
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                os.setpgid(0, 0)  # a terminal's Ctrl-C reaches the supervisor only, which stops workers once
                _die_with_parent()
                if os.getppid() != parent:  # the supervisor died before the line above
                    os._exit(0)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                run_worker(settings, metrics_dir)
            except BaseException:
                log.exception("worker %d failed", slot)
                code = 1
            finally:
                logging.shutdown()
                os._exit(code)
        workers[pid] = slot
        if stopping:  # the signal came while this worker was being forked
            os.kill(pid, signal.SIGTERM)

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(workers):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for slot in range(count):
        start(slot)
    log.info("linksvc listening on http://%s:%s with %d workers (database %s)",
             settings.host, settings.port, count, settings.store_name)
    failed = False
    while workers:
        pid, status = os.wait()
        slot = workers.pop(pid, -1)
        if slot < 0:
            continue
        code = os.waitstatus_to_exitcode(status)
        if stopping:
            failed = failed or code not in (0, -signal.SIGTERM)
            continue
        log.error("worker %d (pid %d) exited with %d; starting it again", slot, pid, code)
        time.sleep(RESTART_DELAY_SECONDS)
        if not stopping:
            start(slot)
    shutil.rmtree(metrics_dir, ignore_errors=True)
    return 1 if failed else 0
