"""Where the store named by the settings cannot be opened, each command says where and why in one line (no
trace, no password) and exits 1; a PostgreSQL database that does not exist yet is made, as a SQLite file is."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest

from linksvc.settings import REPO_ROOT
from tests.pgstore import DEFAULT_ADMIN, with_database
from tests.processes import free_port


def _linksvc(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    inherited = {k: v for k, v in os.environ.items() if k != "LINKSVC_DATABASE_URL"}
    environment = {**inherited, "LINKSVC_LOG_FORMAT": "text", "LINKSVC_ADMIN_TOKEN": "t", **env}
    return subprocess.run([sys.executable, "-m", "linksvc", *args], cwd=REPO_ROOT, env=environment,
                          capture_output=True, text=True, timeout=120)


def _one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.stderr
    return errors[0]


@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["serve", "--workers", "2"],
                                     ["seed", str(REPO_ROOT / "fixtures" / "demo.json")], ["export"]])
def test_a_server_that_does_not_answer_is_one_line_naming_it(command: list[str]) -> None:
    port = free_port()  # nothing listens there
    url = f"postgresql://postgres:s3cret-pass@127.0.0.1:{port}/linksvc"
    result = _linksvc(*command, LINKSVC_DATABASE_URL=url, LINKSVC_PORT=str(free_port()))
    assert result.returncode == 1
    line = _one_error_line(result)
    assert f"cannot open the PostgreSQL database at 127.0.0.1:{port}/linksvc: Connection refused" in line
    assert "s3cret-pass" not in result.stderr + result.stdout


def test_credentials_the_server_refuses_are_its_own_sentence() -> None:
    url = with_database(DEFAULT_ADMIN, "postgres").replace("postgres@", "nobody_here@", 1)
    result = _linksvc("seed", str(REPO_ROOT / "fixtures" / "demo.json"), LINKSVC_DATABASE_URL=url)
    assert result.returncode == 1
    assert 'role "nobody_here" does not exist' in _one_error_line(result)


URL_OF_ANOTHER_KIND = "mysql://app:s3cret-pass@db.example/linksvc"


@pytest.mark.parametrize(("name", "args", "env"), [
    ("LINKSVC_DATABASE_URL", [], {"LINKSVC_DATABASE_URL": URL_OF_ANOTHER_KIND}),
    ("--database-url", ["--database-url", URL_OF_ANOTHER_KIND], {}),
])
def test_a_url_of_another_kind_is_a_settings_error(name: str, args: list[str], env: dict[str, str]) -> None:
    result = _linksvc("serve", *args, **env)
    assert result.returncode == 2
    line = _one_error_line(result)
    assert line.startswith(f"error: {name} must be postgresql://user@host:port/database or sqlite:///path")
    assert "s3cret-pass" not in result.stderr


def test_a_sqlite_file_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    path = tmp_path / "a-file" / "linksvc.db"
    result = _linksvc("serve", "--port", "0", "--db", str(path))
    assert result.returncode == 1
    assert _one_error_line(result).startswith(f"error: cannot open the SQLite database at {path}: ")


async def test_a_database_that_does_not_exist_yet_is_made_and_migrated() -> None:
    name = f"linksvc_t_{secrets.token_hex(6)}"
    url = with_database(DEFAULT_ADMIN, name)
    try:
        result = _linksvc("seed", str(REPO_ROOT / "fixtures" / "demo.json"), LINKSVC_DATABASE_URL=url)
        assert result.returncode == 0, result.stderr
        assert f"created the PostgreSQL database 127.0.0.1:5432/{name}" in result.stderr
        conn = await asyncpg.connect(url)
        try:
            assert await conn.fetchval("SELECT count(*) FROM accounts") == 2  # fixtures/demo.json's
            assert await conn.fetchval("SELECT count(*) FROM schema_migrations") > 0
        finally:
            await conn.close()
        again = _linksvc("seed", str(REPO_ROOT / "fixtures" / "demo.json"), LINKSVC_DATABASE_URL=url)
        assert again.returncode == 0, again.stderr
        assert "created the PostgreSQL database" not in again.stderr
    finally:
        admin = await asyncpg.connect(DEFAULT_ADMIN)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()
