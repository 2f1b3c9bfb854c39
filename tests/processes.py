"""The real service in end-to-end tests: its store (a SQLite file, or with ``LINKSVC_TEST_DATABASE_URL`` set a
fresh PostgreSQL database of the test's own) and what the test reads there, starting ``python -m linksvc serve``
on a free loopback port, calling it, finding its worker processes, stopping it (SIGTERM, then SIGKILL when it
does not stop in time), and a local webhook receiver that records what the service forwards."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, closing, contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from storage.db import AnyDatabase, connect_reader, open_store
from storage.postgres import translate
from storage.wallet import ledger_mismatches
from tests import pgstore
from tests.factories import ADMIN_TOKEN, two_accounts


@dataclass(frozen=True)
class ServiceStore:
    """Where the service a test starts keeps its data: the SQLite file ``path``, or, given ``url``, that
    PostgreSQL database (``path`` then only places the service's local files, such as click journals, in its
    folder). The test's reads go to the same store."""

    path: Path
    url: str | None = None

    def args(self) -> list[str]:
        """The store on a ``linksvc`` command line: ``--db PATH``, and ``--database-url URL`` on PostgreSQL."""
        return ["--db", str(self.path), *(["--database-url", self.url] if self.url else [])]

    def env(self) -> dict[str, str]:
        """The store as ``LINKSVC_DB`` and, on PostgreSQL, ``LINKSVC_DATABASE_URL``."""
        return {"LINKSVC_DB": str(self.path), **({"LINKSVC_DATABASE_URL": self.url} if self.url else {})}

    @asynccontextmanager
    async def opened(self) -> AsyncIterator[AnyDatabase]:
        """The store opened in the test's own process as a command opens it (migrated first), closed after."""
        db = open_store(str(self.path), self.url, "NORMAL")
        await db.open()
        try:
            yield db
        finally:
            await db.close()

    def rows(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """The rows of one query (``?`` parameters; SQL both stores read alike), on a connection of its own."""
        if self.url is None:
            with closing(sqlite3.connect(self.path)) as conn:
                return conn.execute(sql, params).fetchall()
        return asyncio.run(_postgres_rows(self.url, translate(sql)[0], params))

    def count(self, table: str, where: str = "TRUE") -> int:
        return int(self.rows(f"SELECT count(*) FROM {table} WHERE {where}")[0][0])

    def integrity(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` of the file ("ok" when intact). A PostgreSQL server recovers its
        own files after a crash of a client; there is nothing of the service's to check: "ok"."""
        return "ok" if self.url else str(self.rows("PRAGMA integrity_check")[0][0])

    def ledger_mismatches(self, *accounts: str) -> dict[str, list[dict[str, Any]]]:
        """:func:`storage.wallet.ledger_mismatches` of each account, read from the store as it is."""
        return asyncio.run(self._ledger_mismatches(accounts))

    async def _ledger_mismatches(self, accounts: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
        if self.url is None:
            with closing(connect_reader(str(self.path))) as reader:
                return {account: await ledger_mismatches(reader, account) for account in accounts}
        async with self.opened() as db:
            return {account: await ledger_mismatches(db.reader, account) for account in accounts}


async def _postgres_rows(url: str, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    conn = await asyncpg.connect(url)
    try:
        return [tuple(row) for row in await conn.fetch(sql, *params)]
    finally:
        await conn.close()


def sqlite_only(reason: str) -> pytest.MarkDecorator:
    """Skips a test on PostgreSQL (``LINKSVC_TEST_DATABASE_URL`` set): its subject is SQLite's own."""
    return pytest.mark.skipif(pgstore.admin_url() is not None, reason=f"SQLite only: {reason}")


def serve_command(port: int, store: ServiceStore, *args: str) -> list[str]:
    """``python -m linksvc serve`` on ``port`` and ``store``, then ``args``."""
    return [sys.executable, "-m", "linksvc", "serve", "--port", str(port), *store.args(), *args]


@contextmanager
def service_store(folder: Path, store_choice: str | None, name: str = "svc.db") -> Iterator[ServiceStore]:
    """The store of a service started in ``folder``, given the run's ``store_choice`` (the fixture of that name,
    which puts the test in the PostgreSQL run too): on PostgreSQL a fresh database (dropped at the end of the
    block), else the SQLite file ``folder/name``."""
    admin = store_choice
    if admin is None:
        yield ServiceStore(folder / name)
        return
    with pgstore.fresh_database_sync(admin) as url:
        yield ServiceStore(folder / name, url)


def free_port() -> int:
    """A loopback port the OS chose, kept from being handed out again for a minute, for a server started as
    another process (``--port``).

    A port merely bound and released may be given by the kernel to any other socket (a test server of
    another pytest worker, an outgoing connection) before the process started with it binds it. Here a
    connection is made to it and closed from the accepting side first, which leaves that side in TIME_WAIT:
    the kernel does not hand the port out while it lasts, but a server that sets ``SO_REUSEADDR`` (asyncio's
    and aiohttp's servers, ``http.server``, moto's) binds it at once.
    """
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        address = listener.getsockname()
        with socket.create_connection(address) as client:
            accepted, _ = listener.accept()
            accepted.close()  # the accepting side closes first: its end of the port waits in TIME_WAIT
            client.recv(1)  # the close has reached the client before it closes its own end
        return int(address[1])


def call(url: str, headers: dict[str, str] | None = None, method: str = "GET",
         body: bytes | None = None) -> tuple[int, Any, dict[str, str]]:
    """One JSON call: (status, parsed body, headers)."""
    request = urllib.request.Request(url, headers=headers or {}, method=method, data=body)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null"), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null"), dict(exc.headers)


def ready(base: str, seconds: float = 20) -> bool:
    """Wait until the server answers /readyz with 200."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if call(base + "/readyz")[0] == 200:
                return True
        except OSError:
            time.sleep(0.1)
    return False


def wait_for(condition: Callable[[], object], seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (the workers of a ``serve --workers N`` supervisor)."""
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """For ``urllib.request.build_opener``: a 302 is an answer to look at, not to follow."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def start_forwarding_service(folder: Path, port: int, workers: int = 1, database_url: str | None = None,
                             extra: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """``serve`` on ``folder/svc.db`` (or the PostgreSQL database ``database_url``, its local files in ``folder``)
    with :func:`tests.factories.two_accounts` as the demo data, private destinations allowed and deliveries
    retried quickly and (nearly) forever; its log in ``folder``."""
    demo = folder / "demo.json"
    demo.write_text(json.dumps(two_accounts()))
    env = {**os.environ, "LINKSVC_ADMIN_TOKEN": ADMIN_TOKEN, "LINKSVC_DEMO_FILE": str(demo),
           "LINKSVC_ALLOW_PRIVATE_DESTINATIONS": "1", "LINKSVC_DELIVERY_BACKOFF_SECONDS": "0.2",
           "LINKSVC_DELIVERY_TIMEOUT_SECONDS": "1", "LINKSVC_DELIVERY_MAX_TRIES": "1000",
           "LINKSVC_LOG_LEVEL": "WARNING", **(extra or {})}
    if database_url:
        env["LINKSVC_DATABASE_URL"] = database_url
    with (folder / f"server-{port}.log").open("wb") as log:
        return subprocess.Popen([sys.executable, "-m", "linksvc", "serve", "--port", str(port),
                                 "--db", str(folder / "svc.db"), "--workers", str(workers)],
                                env=env, stdout=log, stderr=subprocess.STDOUT)


def stop(process: subprocess.Popen[bytes], grace: float = 15.0) -> None:
    process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class WebhookRecorder(BaseHTTPRequestHandler):
    """Answers 200 and keeps the JSON body of every POST while ``up``, answers 503 otherwise.
    :func:`webhook_receiver` makes a subclass per receiver, so each has its own ``up`` and ``bodies``."""

    up = False
    bodies: list[dict[str, Any]] = []  # noqa: RUF012 (shared by the server's threads on purpose)

    def do_POST(self) -> None:  # noqa: N802 (the http.server name)
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if type(self).up:
            type(self).bodies.append(json.loads(body))
            self.send_response(200)
        else:
            self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def webhook_receiver() -> Iterator[tuple[str, type[WebhookRecorder]]]:
    """A :class:`WebhookRecorder` on 127.0.0.1, down at first: (its URL, its handler class)."""
    handler = type("Handler", (WebhookRecorder,), {"up": False, "bodies": []})
    http = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{http.server_address[1]}/hook", handler
    finally:
        http.shutdown()
        http.server_close()


@contextmanager
def demo_server(directory: Path, admin_token: str, **extra_env: str) -> Iterator[str]:
    """``linksvc serve`` on a new SQLite file in ``directory`` with the shipped demo loaded (its account and key
    as the tests name them), the log at WARNING; yields its base URL and stops it at the end of the block."""
    port = free_port()
    env = {**os.environ, "LINKSVC_ADMIN_TOKEN": admin_token, "LINKSVC_LOAD_DEMO": "1", "LINKSVC_LOG_LEVEL": "WARNING",
           **extra_env}
    env.pop("LINKSVC_DEMO_FILE", None)  # the shipped demo fixture, whose account and key the tests name
    env.pop("LINKSVC_DATABASE_URL", None)
    log_path = directory / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "linksvc", "serve", "--port", str(port), "--db", str(directory / "svc.db")],
            env=env, stdout=log, stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        if not ready(base):
            raise AssertionError("server did not start: " + log_path.read_text())
        yield base
    finally:
        stop(process)
