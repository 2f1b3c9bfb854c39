"""Shared fixtures: settings on a temporary SQLite file, an app client, two seeded accounts."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from hypothesis import settings as hypothesis_settings

from api.appkeys import DB, SETTINGS
from api.server import ServiceRunner
from linksvc.app import create_app
from linksvc.seed import load_seed
from linksvc.settings import Settings
from storage.db import Database
from tests import pgstore
from tests.factories import ADMIN_TOKEN, KEYS, two_accounts

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}

# Property tests check what they find, not how fast: no per-example deadline (a shared machine's pauses made
# Hypothesis's default 200 ms fail examples that take microseconds).
hypothesis_settings.register_profile("linksvc", deadline=None)
hypothesis_settings.load_profile("linksvc")


# The units that take longest go out first (``--dist loadfile`` hands out files in order): the fuzz run, the
# browser package and the end-to-end files, each minutes of one worker's time made of service processes, then
# the in-process files, most tests first. pytest-xdist's own order (most tests first) would leave the fuzz
# run's two tests, or a one-test kill -9 scenario, for the end, with the other worker idle meanwhile.
SLOW_FIRST = ("tests/fuzz/", "tests/browser/", "tests/e2e/")


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` (pyproject's addopts) with the browser tests as one unit: every file goes whole to
    one worker, so a module-scoped service is started once, and so does ``tests/browser/``, whose service,
    scene and Chromium are package fixtures shared by its files. (pytest-xdist's ``loadgroup`` and its
    ``xdist_group`` mark would say this, but they group nothing on pytest 9.2: pytest-xdist issue #1386.)
    Units go out in the order of ``SLOW_FIRST``."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    def slow_first(unit: tuple[str, dict[str, bool]]) -> tuple[int, int]:
        scope, tests = unit
        rank = next((i for i, folder in enumerate(SLOW_FIRST) if scope.startswith(folder)), len(SLOW_FIRST))
        return rank, -len(tests)

    class FilesAndBrowserPackage(LoadFileScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return "tests/browser/" if path.startswith("tests/browser/") else path

        def _assign_work_unit(self, node: Any) -> None:
            if not self.ordered:  # the first assignment: the queue of every unit is complete
                self.ordered = True
                units = sorted(self.workqueue.items(), key=slow_first)
                self.workqueue.clear()
                self.workqueue.update(units)
            super()._assign_work_unit(node)

    return FilesAndBrowserPackage(config, log)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (pyproject's addopts): two workers per core. A worker spends much of its time waiting (on a
    service process starting, a click flush, a browser, a socket's deadline), so one per core leaves the cores
    idle a third of the time (the suite measured at 123% of two cores with two workers, 156% with four:
    docs/decisions.md, "The suite's time: two workers per core, kept bytecode")."""
    return 2 * len(os.sched_getaffinity(0))


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # once, in the process that starts the workers
        keep_bytecode()
        pgstore.ensure_server()


def keep_bytecode() -> None:
    """Lets the processes the suite starts (the workers, every service and command) keep the bytecode they
    compile, as Python does by default: a machine that sets ``PYTHONDONTWRITEBYTECODE`` has each of them compile
    the project's 243 modules again (0.2 s of the 1.1 s a service's start costs), and each worker rewrite and
    compile every test file (6 s of its 9 s of collection). The files go to ``__pycache__/`` beside the sources,
    which git ignores (docs/decisions.md, "The suite's time: two workers per core, kept bytecode")."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def pytest_sessionfinish(session: pytest.Session) -> None:
    for error in pgstore.finish_drops():
        print(f"tests/pgstore.py: a test database was not dropped: {error}", file=sys.stderr)


# The two runs (docs/decisions.md, "The suite's time"). The SQLite run runs every test. The PostgreSQL run
# (LINKSVC_TEST_DATABASE_URL set) runs only the tests whose store follows the run: those that request
# ``store_choice``, directly or through a fixture (``pg_database``, so ``settings``, ``client``, ``seeded``...;
# e2e's ``store``; any fixture that starts a service on ``service_store``). Every other test opens no store,
# or always the same one (SQLite in memory, a fixed PostgreSQL database, the browser tests' SQLite file): it
# would run the same way twice. A test that reads the run's store without requesting ``store_choice`` fails
# (tests/pgstore.py, ``admin_url``), so none can drop out of the PostgreSQL run unnoticed.
STORE_CHOICE = "store_choice"


def follows_the_run(item: pytest.Item) -> bool:
    return STORE_CHOICE in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not pgstore.admin_url():
        return
    once = [item for item in items if not follows_the_run(item)]
    if once:
        config.hook.pytest_deselected(items=once)
        items[:] = [item for item in items if follows_the_run(item)]


def pytest_report_header(config: pytest.Config) -> str:
    if pgstore.admin_url():
        return ("store: PostgreSQL; only the tests that request store_choice (the rest ran in the SQLite run: "
                "docs/decisions.md, The suite's time)")
    return "store: SQLite files (every test)"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    pgstore.FOLLOWS_THE_RUN = follows_the_run(item)
    try:
        return (yield)
    finally:
        pgstore.FOLLOWS_THE_RUN = None


@pytest.fixture(scope="session")
def store_choice() -> str | None:
    """The store this run tests: the PostgreSQL URL the tests may create databases from
    (``LINKSVC_TEST_DATABASE_URL``), or None for SQLite files. Requesting it, directly or through a fixture,
    is what puts a test in the PostgreSQL run too."""
    return pgstore.admin_url()


@pytest.fixture(scope="session")
def pg_database(store_choice: str | None) -> Iterator[pgstore.TestDatabase | None]:
    """With ``LINKSVC_TEST_DATABASE_URL`` set, this test process's own PostgreSQL database (tests/pgstore.py)."""
    yield from pgstore.session_database()


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file as the service makes it on first start (every migration applied, nothing else), made once
    per test process: each test's store starts as a copy of it (:func:`migrated_copy`)."""
    path = tmp_path_factory.mktemp("migrated") / "linksvc.db"

    async def migrate() -> None:
        db = Database(str(path), "NORMAL")
        await db.open()
        await db.close()

    with ThreadPoolExecutor(1) as thread:  # its own event loop, whether or not the caller runs in one
        thread.submit(asyncio.run, migrate()).result()
    return path


def migrated_copy(request: pytest.FixtureRequest, path: Path) -> Path:
    """``path``, a new SQLite file with every migration applied, as the service would leave it on first start.

    Applying the 41 migrations takes 0.1 to 0.3 s on these machines, for each of the thousand-odd tests that
    open a store of their own; copying a file migrated once per process takes a millisecond. The service then
    opens it as it opens any file already migrated (nothing pending). The migrations still run from scratch
    once in each test process (here), in every store opened in memory and in every service the end-to-end
    tests start; tests/e2e/test_progress.py runs them on an older file."""
    shutil.copyfile(request.getfixturevalue("migrated_sqlite"), path)
    return path


@pytest.fixture
def settings(request: pytest.FixtureRequest, tmp_path: Path, pg_database: pgstore.TestDatabase | None) -> Settings:
    if pg_database is not None:
        pg_database.reset()
    else:
        migrated_copy(request, tmp_path / "linksvc.db")
    return Settings(
        db_path=str(tmp_path / "linksvc.db"),
        database_url=pg_database.url if pg_database is not None else "",
        admin_token=ADMIN_TOKEN,
        load_demo=False,
        allow_private_destinations=True,
        db_synchronous="NORMAL",
    )


class ServiceTestServer(TestServer):
    """aiohttp's test server with the service's own runner (what ``linksvc serve`` runs): the protocol that
    answers malformed requests with JSON and closes connections whose headers are too slow."""

    async def _make_runner(self, **kwargs: Any) -> web.BaseRunner:
        return ServiceRunner(self.app, header_timeout=self.app[SETTINGS].header_timeout_seconds, **kwargs)


def service_server(app: web.Application) -> ServiceTestServer:
    return ServiceTestServer(app, host="127.0.0.1")


@pytest.fixture
async def client(aiohttp_client: Any, settings: Settings) -> TestClient:
    return await aiohttp_client(service_server(create_app(settings)))


@pytest.fixture
async def seeded(client: TestClient) -> TestClient:
    """A client whose store holds the two accounts of :func:`tests.factories.two_accounts`."""
    await load_seed(client.app[DB], two_accounts(), allow_private=True)
    return client


async def token_for(client: TestClient, account_id: str, kind: str = "SERVER") -> str:
    response = await client.get("/api/storefront/v1/auth/authorize", headers={"x-api-key": KEYS[(account_id, kind)]})
    assert response.status == 200, await response.text()
    return str((await response.json())["data"])


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
