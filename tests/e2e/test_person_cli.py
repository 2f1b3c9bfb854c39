"""``linksvc person create``: an existing installation gets its first owner from the command line, who then
signs in to the running service with the email and password given."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.factories import A, two_accounts
from tests.processes import ServiceStore, call, free_port, ready, serve_command, stop

PASSWORD = "a password typed once"


def linksvc(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "linksvc", *args], capture_output=True, text=True, timeout=60,
                          check=False, input=stdin)


def test_a_person_made_on_the_command_line_signs_in_as_the_owner(tmp_path: Path, store: ServiceStore) -> None:
    (tmp_path / "seed.json").write_text(json.dumps(two_accounts()))
    assert linksvc("seed", str(tmp_path / "seed.json"), *store.args()).returncode == 0
    made = linksvc("person", "create", "--email", "Owner@Example.com", "--name", "Owner", "--account", A,
                   "--role", "owner", "--password-stdin", *store.args(), stdin=PASSWORD + "\n")
    assert made.returncode == 0, made.stderr
    person = json.loads(made.stdout)["created"]
    assert person["accounts"] == [{"account_id": A, "role": "owner"}] and PASSWORD not in made.stdout
    again = linksvc("person", "create", "--email", "owner@example.com", "--name", "Twin", "--account", A,
                    "--role", "analyst", "--password-stdin", *store.args(), stdin=PASSWORD + "\n")
    assert again.returncode == 1 and "Email in use" in again.stderr
    unknown = linksvc("person", "create", "--email", "x@example.com", "--name", "X", "--account", "nope",
                      "--role", "owner", "--password-stdin", *store.args(), stdin=PASSWORD + "\n")
    assert unknown.returncode == 1 and "Account not found" in unknown.stderr
    short = linksvc("person", "create", "--email", "y@example.com", "--name", "Y", "--account", A,
                    "--role", "owner", "--password-stdin", *store.args(), stdin="short\n")
    assert short.returncode == 1 and "password" in short.stderr
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with (tmp_path / "server.log").open("wb") as log:
        process = subprocess.Popen(serve_command(port, store), stdout=log, stderr=subprocess.STDOUT)
    try:
        assert ready(base), (tmp_path / "server.log").read_text()
        body = json.dumps({"email": "owner@example.com", "password": PASSWORD}).encode()
        status, _, headers = call(f"{base}/dashboard/session", {"Content-Type": "application/json"}, "POST", body)
        assert status == 200
        cookie = headers["Set-Cookie"].split(";")[0]
        status, members, _ = call(f"{base}/api/admin/v1/accounts/{A}/members",
                                  {"Cookie": cookie, "X-Requested-With": "linksvc-dashboard"})
        assert status == 200 and [m["role"] for m in members["data"]] == ["owner"]
    finally:
        stop(process)
