"""The real command: ``python -m linksvc serve`` on a free loopback port, called over HTTP."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest

from linksvc.links.qr import qr_image
from tests.agents import AGENTS
from tests.factories import ADMIN_TOKEN, KEYS, A, two_accounts
from tests.processes import NoRedirect, ServiceStore, call, free_port, ready, serve_command


@pytest.fixture
def server(tmp_path: Path, store: ServiceStore) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    demo = tmp_path / "demo.json"
    demo.write_text(json.dumps(two_accounts()))
    port = free_port()
    log_path = tmp_path / "server.log"
    env = {**os.environ, "LINKSVC_ADMIN_TOKEN": ADMIN_TOKEN, "LINKSVC_DEMO_FILE": str(demo),
           "LINKSVC_LOAD_DEMO": "1", "LINKSVC_LOG_FORMAT": "json"}
    with log_path.open("wb") as log:
        process = subprocess.Popen(serve_command(port, store), env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    if not ready(base):
        process.kill()
        raise AssertionError("server did not start: " + log_path.read_text())
    yield base, process, log_path
    if process.poll() is None:
        process.kill()
        process.wait()


def test_serve_loads_the_demo_and_answers(server: tuple[str, subprocess.Popen[bytes], Path]) -> None:
    base, process, log_path = server
    status, body, _ = call(base + "/api/storefront/v1/auth/authorize", {"x-api-key": KEYS[(A, "SERVER")]})
    assert status == 200
    token = body["data"]
    status, body, headers = call(base + "/api/storefront/v1/brands",
                                 {"Authorization": f"Bearer {token}", "X-Request-Id": "e2e-trace-1"})
    assert status == 200 and body["data"][0]["name"] == "Brand of aaaa"
    assert headers["X-Request-Id"] == "e2e-trace-1"
    status, body, _ = call(base + "/api/admin/v1/accounts", {"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert status == 200 and body["count"] == 2
    status, body, _ = call(base + "/api/storefront/v1/nothing")
    assert status == 404 and set(body) == {"error", "details"}
    status, body, _ = call(base + "/api/storefront/v1/openapi.json")
    assert status == 200 and "/brands" in body["paths"]

    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=15) == 0
    lines = [json.loads(line) for line in log_path.read_text().splitlines() if line.startswith("{")]
    access = [line for line in lines if line.get("logger") == "linksvc.access"]
    traced = [line for line in access if line["request_id"] == "e2e-trace-1"]
    assert traced and traced[0]["path"] == "/api/storefront/v1/brands" and traced[0]["status"] == 200
    # Secrets never reach the log.
    text = log_path.read_text()
    assert token not in text and KEYS[(A, "SERVER")] not in text and ADMIN_TOKEN not in text


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigterm_right_after_requests_writes_every_access_line_in_order(tmp_path: Path, store: ServiceStore,
                                                                        workers: str) -> None:
    """Default settings (the access log on): the fast lanes and the handlers answer on one kept-alive connection,
    SIGTERM comes right after the last answer, and every request has its line, in the order answered (the lines
    still queued for the access log's thread are written at the stop, by a worker process too)."""
    from tests.http.test_fast_lane import _converse

    demo = tmp_path / "demo.json"
    demo.write_text(json.dumps(two_accounts()))
    port = free_port()
    log_path = tmp_path / "server.log"
    env = {**os.environ, "LINKSVC_ADMIN_TOKEN": ADMIN_TOKEN, "LINKSVC_DEMO_FILE": str(demo), "LINKSVC_LOAD_DEMO": "1"}
    env.pop("LINKSVC_LOG_LEVEL", None)
    with log_path.open("wb") as log:
        process = subprocess.Popen(serve_command(port, store, "--workers", workers), env=env, stdout=log,
                                   stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    if not ready(base):
        process.kill()
        raise AssertionError("server did not start: " + log_path.read_text())
    status, body, _ = call(base + "/api/storefront/v1/auth/authorize", {"x-api-key": KEYS[(A, "SERVER")]})
    assert status == 200
    token = body["data"]
    targets = [f"/lnk{A[:4]}", "/api/storefront/v1/customers?phone=%2B57%20300%20000%200000", "/healthz"]
    sends = [(f"GET {targets[i % 3]} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: {AGENTS['chrome_android']}\r\n"
              f"Authorization: Bearer {token}\r\nX-Request-Id: stop-{i}\r\n\r\n").encode() for i in range(90)]
    replies = _converse(port, sends, [1] * len(sends))
    process.send_signal(signal.SIGTERM)
    try:
        assert process.wait(timeout=15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert [reply.status for reply in replies] == [302, 404, 200] * 30
    lines = [json.loads(line) for line in log_path.read_text().splitlines() if line.startswith("{")]
    access = [(line["request_id"], line["path"], line["status"]) for line in lines
              if line.get("logger") == "linksvc.access" and line["request_id"].startswith("stop-")]
    assert access == [(f"stop-{i}", unquote(targets[i % 3].partition("?")[0]), [302, 404, 200][i % 3])
                      for i in range(90)]
    assert token not in log_path.read_text()


def test_restart_keeps_data_and_does_not_reload_the_demo(server: tuple[str, subprocess.Popen[bytes], Path],
                                                         tmp_path: Path, store: ServiceStore) -> None:
    base, process, _ = server
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": "application/json"}
    status, _, _ = call(base + f"/api/admin/v1/accounts/{A}/brands", headers, "POST",
                        json.dumps({"name": "Added at runtime"}).encode())
    assert status == 201
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=15) == 0
    port = free_port()
    env = {**os.environ, "LINKSVC_ADMIN_TOKEN": ADMIN_TOKEN, "LINKSVC_DEMO_FILE": str(tmp_path / "demo.json")}
    again = subprocess.Popen(serve_command(port, store), env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{port}"
        assert ready(base)
        status, body, _ = call(base + f"/api/admin/v1/accounts/{A}/brands", headers)
        assert status == 200
        assert sorted(b["name"] for b in body["data"]) == ["Added at runtime", "Brand of aaaa"]
    finally:
        again.send_signal(signal.SIGTERM)
        again.wait(timeout=15)


def _seed(path: Path, store: ServiceStore) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "linksvc", "seed", str(path), *store.args()],
                          capture_output=True, text=True, timeout=60)


def test_seed_command_reports_and_refuses(tmp_path: Path, store: ServiceStore) -> None:
    good = tmp_path / "seed.json"
    good.write_text(json.dumps(two_accounts()))
    first = _seed(good, store)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["changed"]["accounts"] == 2
    second = _seed(good, store)
    assert set(json.loads(second.stdout)["changed"].values()) == {0}
    bad_doc = two_accounts()
    bad_doc["accounts"][1]["campaigns"][0]["stores"] = "everywhere"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(bad_doc))
    refused = _seed(bad, store)
    assert refused.returncode == 1
    assert "accounts[1].campaigns[0].stores" in refused.stderr


def test_bad_setting_names_the_variable(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "linksvc", "serve", "--db", str(tmp_path / "x.db")],
                            env={**os.environ, "LINKSVC_TOKEN_TTL_SECONDS": "soon"},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "LINKSVC_TOKEN_TTL_SECONDS" in result.stderr


def test_sigterm_writes_every_buffered_click(tmp_path: Path, store: ServiceStore) -> None:
    demo = tmp_path / "demo.json"
    demo.write_text(json.dumps(two_accounts()))
    port = free_port()
    env = {**os.environ, "LINKSVC_ADMIN_TOKEN": ADMIN_TOKEN, "LINKSVC_DEMO_FILE": str(demo),
           "LINKSVC_CLICK_FLUSH_SECONDS": "3600"}  # nothing is written before the shutdown
    process = subprocess.Popen(serve_command(port, store), env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{port}"
        assert ready(base)
        opener = urllib.request.build_opener(NoRedirect)
        for _ in range(40):
            try:
                opener.open(base + "/lnkaaaa", timeout=10)
            except urllib.error.HTTPError as exc:
                assert exc.code == 302
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
    assert store.count("clicks") == 40


def test_a_second_serve_on_a_port_in_use_says_so_in_one_line(store: ServiceStore) -> None:
    """The README's old walkthrough started a second ``serve`` beside the first: that must be a clear error,
    not a traceback."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        env = {**os.environ, "LINKSVC_ADMIN_TOKEN": ADMIN_TOKEN, "LINKSVC_LOAD_DEMO": "0"}
        done = subprocess.run(serve_command(port, store), env=env, capture_output=True, timeout=60)
    err = done.stderr.decode()
    assert done.returncode == 1
    assert f"error: cannot listen on 127.0.0.1:{port}: address already in use" in err
    assert "Traceback" not in err


# --- issue 32: which hosts serve what (the port, the public URL) ---

@pytest.mark.parametrize(("args", "env", "named"), [
    (["--port", "99999"], {}, "--port"), (["--port", "65536"], {}, "--port"), (["--port", "-1"], {}, "--port"),
    ([], {"LINKSVC_PORT": "99999"}, "LINKSVC_PORT"), ([], {"LINKSVC_PORT": "-5"}, "LINKSVC_PORT"),
    ([], {"LINKSVC_PORT": "eighty"}, "LINKSVC_PORT"),
])
def test_a_port_that_is_not_one_fails_at_once_naming_the_flag_or_variable(tmp_path: Path, args: list[str],
                                                                          env: dict[str, str], named: str) -> None:
    result = subprocess.run([sys.executable, "-m", "linksvc", "serve", "--db", str(tmp_path / "x.db"), *args],
                            env={**os.environ, "LINKSVC_ADMIN_TOKEN": ADMIN_TOKEN, **env}, capture_output=True,
                            text=True, timeout=30)
    assert result.returncode == 2
    assert f"error: {named} must be a port number (0-65535" in result.stderr
    assert "listening" not in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "x.db").exists()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_port_in_use_fails_before_the_demo_is_loaded(tmp_path: Path, store: ServiceStore, workers: str) -> None:
    demo = tmp_path / "demo.json"
    demo.write_text(json.dumps(two_accounts()))
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        env = {**os.environ, "LINKSVC_ADMIN_TOKEN": ADMIN_TOKEN, "LINKSVC_LOAD_DEMO": "1",
               "LINKSVC_DEMO_FILE": str(demo), "LINKSVC_WORKERS": workers}
        done = subprocess.run(serve_command(port, store), env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert f"error: cannot listen on 127.0.0.1:{port}: address already in use" in done.stderr
    assert "Traceback" not in done.stderr and "loaded the demo" not in done.stderr
    # The empty database stayed empty: the next start on a free port loads the demo as a first start does.
    assert store.url is not None or not store.path.exists()
    if store.url is not None:
        assert store.rows("SELECT count(*) FROM information_schema.tables WHERE table_name = 'accounts'") == [(0,)]


def _started(command: list[str], env: dict[str, str], log_path: Path,
             address: str = "127.0.0.1") -> tuple[subprocess.Popen[bytes], str]:
    """``command`` started, and the base URL its "listening" line names (the port the system chose for 0)."""
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    found = re.compile(rf"linksvc listening on (http://{re.escape(address)}:\d+)")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        match = found.search(log_path.read_text())
        if match and ready(match.group(1)):
            return process, match.group(1)
        time.sleep(0.1)
    process.kill()
    raise AssertionError("server did not start: " + log_path.read_text())


@pytest.mark.parametrize("port", ["free", "0"])
def test_the_public_url_follows_the_port_when_it_is_not_set(tmp_path: Path, store: ServiceStore, port: str) -> None:
    """Short links, QR codes, install referrers and previews' og:url name where the service listens."""
    demo = tmp_path / "demo.json"
    demo.write_text(json.dumps(two_accounts()))
    env = {key: value for key, value in os.environ.items() if key != "LINKSVC_PUBLIC_URL"}
    env.update(LINKSVC_ADMIN_TOKEN=ADMIN_TOKEN, LINKSVC_DEMO_FILE=str(demo), LINKSVC_LOAD_DEMO="1",
               LINKSVC_ALLOW_PRIVATE_DESTINATIONS="1", LINKSVC_LOG_FORMAT="text")
    listen = str(free_port()) if port == "free" else "0"
    process, base = _started(serve_command(int(listen), store), env, tmp_path / "server.log")
    try:
        if port == "free":
            assert base == f"http://127.0.0.1:{listen}"
        admin = {"Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": "application/json"}
        link = {"code": "follows", "kind": "external", "destination_url": "https://shop.example/p",
                "android": {"package": "com.demo.app"}, "preview": {"title": "Follows"}}
        status, created, _ = call(f"{base}/api/admin/v1/accounts/{A}/links", admin, "POST", json.dumps(link).encode())
        assert status == 201, created
        status, page, _ = call(f"{base}/api/admin/v1/accounts/{A}/links/overview?q=follows", admin)
        assert status == 200 and page["data"][0]["short_url"] == f"{base}/follows"
        qr = urllib.request.urlopen(urllib.request.Request(
            f"{base}/api/admin/v1/accounts/{A}/links/{created['data']['id']}/qr?format=svg", headers=admin), timeout=10)
        assert qr.read() == qr_image(f"{base}/follows", "svg", 8)[0]
        opener = urllib.request.build_opener(NoRedirect)
        with pytest.raises(urllib.error.HTTPError) as redirect:
            opener.open(urllib.request.Request(f"{base}/follows", headers={"User-Agent": AGENTS["chrome_android"]}),
                        timeout=10)
        assert f"link={base}/follows" in unquote(unquote(unquote(redirect.value.headers["Location"])))  # an intent
        preview = opener.open(urllib.request.Request(f"{base}/follows", headers={"User-Agent": "Slackbot 1.0"}),
                              timeout=10).read().decode()
        assert f'<meta property="og:url" content="{base}/follows">' in preview, preview
    finally:
        process.terminate()
        process.wait(timeout=15)


# --- issue 32: second look, links and hosts ---

def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback on this machine")
def test_a_service_listening_on_an_ipv6_address_answers_its_short_links_there(tmp_path: Path,
                                                                             store: ServiceStore) -> None:
    """``serve --host ::1``: the listening line names ``http://[::1]:PORT`` (not ``http://::1:PORT``), and the short
    links it publishes under that address answer there (they were 404: the public URL's host was read as ``:``)."""
    demo = tmp_path / "demo.json"
    demo.write_text(json.dumps(two_accounts()))
    env = {key: value for key, value in os.environ.items() if key not in ("LINKSVC_PUBLIC_URL", "LINKSVC_HOST")}
    env.update(LINKSVC_ADMIN_TOKEN=ADMIN_TOKEN, LINKSVC_DEMO_FILE=str(demo), LINKSVC_LOAD_DEMO="1",
               LINKSVC_LOG_FORMAT="text")
    process, base = _started([*serve_command(0, store), "--host", "::1"], env, tmp_path / "server.log", "[::1]")
    try:
        admin = {"Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": "application/json"}
        link = {"code": "on-six", "kind": "external", "destination_url": "https://shop.example/p"}
        status, created, _ = call(f"{base}/api/admin/v1/accounts/{A}/links", admin, "POST", json.dumps(link).encode())
        assert status == 201, created
        status, page, _ = call(f"{base}/api/admin/v1/accounts/{A}/links/overview?q=on-six", admin)
        assert status == 200 and page["data"][0]["short_url"] == f"{base}/on-six"
        opener = urllib.request.build_opener(NoRedirect)
        with pytest.raises(urllib.error.HTTPError) as redirect:
            opener.open(f"{base}/on-six", timeout=10)
        assert redirect.value.code == 302 and redirect.value.headers["Location"].startswith("https://shop.example/p")
    finally:
        process.terminate()
        process.wait(timeout=15)
