"""Two ``linksvc serve`` nodes behind a real PgBouncer in transaction mode (Debian's ``pgbouncer``, installed by
scripts/ensure-postgres when absent): ``LINKSVC_DATABASE_URL`` points at PgBouncer and
``LINKSVC_DATABASE_LISTEN_URL`` at PostgreSQL itself (``LISTEN`` and the migrations' advisory lock need a
session of their own). Over HTTP: events sent to both nodes are delivered to a local receiver, each once; a
link changed on one node redirects to its new destination on the other (the read model follows through the
``LISTEN`` connection); the customer migration's rate limit holds across both. Once with asyncpg's prepared
statement cache off (``LINKSVC_DATABASE_STATEMENT_CACHE=0``), once with it on, which PgBouncer supports from
1.21 (``max_prepared_statements``); with an older PgBouncer (Debian 12 has 1.18) that case is skipped: asyncpg's
cache cannot work there, and docs/operations.md says to turn it off."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.e2e.multinode import ADMIN, delivered_once, migrations, nodes, rows, storefront
from tests.factories import A, ids
from tests.pgstore import ensure_server, fresh_database_sync, with_database
from tests.processes import NoRedirect, WebhookRecorder, call, free_port, stop

PREPARED_STATEMENTS = (1, 21)  # the first PgBouncer that keeps prepared statements in transaction mode


def pgbouncer() -> tuple[str, tuple[int, ...]]:
    """The ``pgbouncer`` program and its version; installed by scripts/ensure-postgres when absent (as root)."""
    search = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin"])  # Debian's is in sbin
    found = shutil.which("pgbouncer", path=search)
    if found is None:
        ensure_server()
        found = shutil.which("pgbouncer", path=search)
    if found is None:
        pytest.fail("this test needs PgBouncer: scripts/ensure-postgres installs it as root "
                    "(Debian: apt-get install pgbouncer)", pytrace=False)
    out = subprocess.run([found, "--version"], capture_output=True, text=True, check=True).stdout
    version = re.search(r"PgBouncer (\d+)\.(\d+)", out)
    assert version, out
    return found, (int(version[1]), int(version[2]))


@contextmanager
def running_pgbouncer(folder: Path, database_url: str, prepared_statements: int) -> Iterator[str]:
    """PgBouncer in transaction mode on a free loopback port, in front of ``database_url``'s database, keeping
    up to ``prepared_statements`` per connection when that is not 0; yields the URL of that database through
    it. It reads its configuration before it drops root (``-u postgres``: it refuses to run as root); it logs
    to ``folder/pgbouncer.log``."""
    program, _ = pgbouncer()
    target = urlsplit(database_url)
    name = target.path.lstrip("/")
    port = free_port()
    settings = {
        "listen_addr": "127.0.0.1", "listen_port": str(port), "unix_socket_dir": "", "auth_type": "trust",
        "auth_file": str(folder / "userlist.txt"), "pool_mode": "transaction", "max_client_conn": "200",
        "default_pool_size": "10",
        **({"max_prepared_statements": str(prepared_statements)} if prepared_statements else {}),
    }
    (folder / "userlist.txt").write_text(f'"{target.username}" ""\n')
    ini = folder / "pgbouncer.ini"
    ini.write_text(f"[databases]\n{name} = host={target.hostname} port={target.port or 5432} dbname={name}\n\n"
                   "[pgbouncer]\n" + "".join(f"{k} = {v}\n" for k, v in settings.items()))
    command = [program, *(["-u", "postgres"] if os.geteuid() == 0 else []), str(ini)]
    log_path = folder / "pgbouncer.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        url = with_database(database_url.replace(target.netloc, f"{target.username}@127.0.0.1:{port}"), name)
        deadline = time.monotonic() + 20
        while True:
            try:
                rows(url, "SELECT 1")
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise AssertionError("PgBouncer did not start:\n" + log_path.read_text()) from None
                time.sleep(0.1)
        yield url
    finally:
        stop(process)


@pytest.mark.parametrize("statement_cache", [0, 100], ids=["statement-cache-off", "statement-cache-on"])
def test_two_nodes_behind_pgbouncer_in_transaction_mode(tmp_path: Path, receiver: tuple[str, type[WebhookRecorder]],
                                                        statement_cache: int) -> None:
    _, version = pgbouncer()
    if statement_cache and version < PREPARED_STATEMENTS:
        pytest.skip(f"PgBouncer {'.'.join(map(str, version))} keeps no prepared statements in transaction mode "
                    "(1.21 does): behind it, LINKSVC_DATABASE_STATEMENT_CACHE=0, as docs/operations.md says")
    url, handler = receiver
    handler.up = True
    with fresh_database_sync() as direct, running_pgbouncer(tmp_path, direct, statement_cache) as pooled:
        env = {"LINKSVC_DATABASE_LISTEN_URL": direct, "LINKSVC_DATABASE_STATEMENT_CACHE": str(statement_cache)}
        with nodes(tmp_path, 2, pooled, env) as started:
            bases = started.bases
            headers = storefront(bases, url)

            # Events to both nodes: each applied once, each delivered once.
            delivered_once(direct, bases, headers, handler, "bouncer", 30)

            # A link changed on node A: node B's redirect follows.
            link = ids(A)["links"]
            code = f"lnk{A[:4]}"
            assert "/p?x=1" in _location(bases[1], code)
            status, body, _ = call(f"{bases[0]}/api/admin/v1/accounts/{A}/links/{link}", ADMIN, "PATCH",
                                   json.dumps({"destination_url": "https://shop.example/moved"}).encode())
            assert status == 200, body
            deadline = time.monotonic() + 20
            while "/moved" not in _location(bases[1], code) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert "/moved" in _location(bases[1], code)

            # The customer migration's limit (15 requests per 5 s per account) across both nodes.
            answers = migrations(bases, headers)
            assert answers[200] == 15 and answers[429] == 15, answers

            logs = "".join(p.read_text() for p in tmp_path.glob("node*/server-*.log"))
            assert "prepared statement" not in logs, logs[-3000:]


def _location(base: str, code: str) -> str:
    """Where ``/{code}`` redirects to on the node at ``base``."""
    request = urllib.request.Request(f"{base}/{code}", headers={"User-Agent": "curl/8"})
    try:
        with urllib.request.build_opener(NoRedirect).open(request, timeout=10) as response:
            raise AssertionError(f"/{code} answered {response.status}, not a redirect")
    except urllib.error.HTTPError as exc:
        assert exc.code == 302, exc.code
        return str(exc.headers["Location"])
