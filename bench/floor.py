"""The floor of a redirect that stores its click: the bare 302 handler of ``bench.baseline`` plus the least
a click must cost to be kept, with none of the service's code.

Each ``GET /{code}`` appends one row to a list (a fresh random tracking id, the time, the user agent, the
referer, the UTM of the query) and answers the fixed 302; a thread writes the list every 0.5 s into the
``clicks`` table of the database given (the service's own schema, with its three indexes), in one
transaction of multi-row ``INSERT`` statements, WAL and ``synchronous=FULL``, as the service's click writer
does. No decision, no link read, no metrics, no journal, no user-agent parse.

With ``--processes N`` the handler runs in N forked processes sharing one listening socket, each writing its
own clicks to the same file, as ``linksvc serve --workers N`` does.

Run by ``bench.redirects`` beside the bare handler and the service (``python -m bench.floor --port P
--db PATH``); it tells how much of the gap between them no redirect that keeps its clicks in SQLite can
close by itself (the service's fast lane skips aiohttp's request and response objects, which this pays).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import ctypes
import json
import os
import signal
import socket
import sqlite3
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from aiohttp import web

from bench.baseline import REDIRECT_TO

COLUMNS = ("account_id", "link_id", "tracking_id", "clicked_at", "platform", "bot", "answer", "user_agent",
           "referer", "utm", "utm_source")
ROW_MARKS = "(" + ", ".join("?" for _ in COLUMNS) + ")"
PER_STATEMENT = 1000
UTM = ("utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content")
ACCOUNT = "bench-floor"


class Clicks:
    def __init__(self, db: str) -> None:
        self.db = db
        self.rows: list[tuple[object, ...]] = []
        self.stored = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="floor-clicks", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        conn = sqlite3.connect(self.db, isolation_level=None, check_same_thread=False, timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        while True:
            stopping = self._stop.wait(0.5)
            count = len(self.rows)  # the handler only appends: take the rows up to here, leave the rest
            rows = self.rows[:count]
            del self.rows[:count]
            if rows:
                conn.execute("BEGIN IMMEDIATE")
                for start in range(0, len(rows), PER_STATEMENT):
                    chunk = rows[start:start + PER_STATEMENT]
                    conn.execute(f"INSERT INTO clicks ({', '.join(COLUMNS)}) VALUES "
                                 f"{', '.join([ROW_MARKS] * len(chunk))}", [v for row in chunk for v in row])
                conn.execute("COMMIT")
                self.stored += len(rows)
            if stopping:
                conn.close()
                return


def make_app(clicks: Clicks) -> web.Application:
    async def redirect(request: web.Request) -> web.Response:
        query = request.query
        utm = {key: query[key] for key in UTM if key in query}
        clicks.rows.append((
            ACCOUNT, request.match_info["code"], base64.urlsafe_b64encode(os.urandom(16)).rstrip(b"=").decode(),
            datetime.now(UTC).isoformat(timespec="milliseconds"), "web", 0, "web",
            request.headers.get("User-Agent"), request.headers.get("Referer"), json.dumps(utm),
            utm.get("utm_source")))
        location = f"{REDIRECT_TO}&{request.query_string}" if request.query_string else REDIRECT_TO
        return web.Response(status=302, headers={"Location": location, "Cache-Control": "no-store"})

    async def healthz(request: web.Request) -> web.Response:
        return web.Response(body=b'{"status":"ok"}', content_type="application/json")

    async def on_cleanup(app: web.Application) -> None:
        clicks.stop()

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/{code:[A-Za-z0-9][A-Za-z0-9_-]{2,63}}", redirect)
    app.on_cleanup.append(on_cleanup)
    return app


def _die_with_parent() -> None:
    """A fork gets SIGTERM when its parent ends, however it ends (Linux ``PR_SET_PDEATHSIG``)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def serve(sock: socket.socket, db: str, on_stop: Callable[[], None] | None = None) -> None:
    clicks = Clicks(db)
    clicks.start()
    app = make_app(clicks)
    if on_stop is not None:
        async def shutdown(app: web.Application) -> None:
            on_stop()
        app.on_shutdown.append(shutdown)
    web.run_app(app, sock=sock, access_log=None, print=None)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.floor", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--db", required=True, help="a database with the service's schema (its clicks table)")
    parser.add_argument("--processes", type=int, default=1)
    args = parser.parse_args(argv)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(1024)
    children: list[int] = []
    for _ in range(args.processes - 1):
        pid = os.fork()
        if pid == 0:
            _die_with_parent()
            serve(sock, args.db)
            os._exit(0)
        children.append(pid)

    def stop_children() -> None:  # at the start of the parent's shutdown: each fork writes its rows and ends
        for pid in children:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue

    try:
        serve(sock, args.db, stop_children)
    finally:
        stop_children()
        for pid in children:
            os.waitpid(pid, 0)

if __name__ == "__main__":
    main()
