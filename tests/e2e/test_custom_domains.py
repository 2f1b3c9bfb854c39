"""Custom domains end to end: ``linksvc serve`` (two workers) on a free loopback port, domains added and
verified over the admin API (the verification fetch connects back to the service itself), then raw HTTP/1.1
requests to 127.0.0.1 with several ``Host`` headers: the shared host, account A's live domain, account B's live
domain, account C's pending domain and a host nobody claimed. Each host's requests go over one kept-alive
connection, twice: the first answer of a held link comes from the handler, the next ones from the fast lane."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.factories import ADMIN_TOKEN, A, B, two_accounts
from tests.processes import ServiceStore, call, free_port, ready, serve_command
from tests.rawhttp import kept_alive

C = "cccccccc-0000-4000-8000-000000000003"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": "application/json"}
IOS_A = {"team_id": "AAAAAAAAAA", "bundle_id": "com.a.app", "app_store_id": "111"}
ANDROID_B = {"package": "com.b.app", "sha256_cert_fingerprints": ["BB:" * 31 + "BB"]}
ANDROID_C = {"package": "com.c.app", "sha256_cert_fingerprints": ["CC:" * 31 + "CC"]}


@pytest.fixture
def service(tmp_path: Path, store: ServiceStore) -> Iterator[tuple[str, int]]:
    demo = tmp_path / "demo.json"
    demo.write_text(json.dumps(two_accounts()))
    port = free_port()
    env = {**os.environ, "LINKSVC_ADMIN_TOKEN": ADMIN_TOKEN, "LINKSVC_DEMO_FILE": str(demo), "LINKSVC_LOAD_DEMO": "1",
           "LINKSVC_LOG_LEVEL": "WARNING", "LINKSVC_WORKERS": "2", "LINKSVC_DOMAIN_VERIFY_SCHEME": "http",
           "LINKSVC_DOMAIN_VERIFY_CONNECT": f"127.0.0.1:{port}", "LINKSVC_PUBLIC_URL": f"http://127.0.0.1:{port}"}
    log_path = tmp_path / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(serve_command(port, store), env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        if not ready(base):
            raise AssertionError("server did not start: " + log_path.read_text())
        yield base, port
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def admin(base: str, method: str, path: str, body: Any = None) -> Any:
    status, answer, _ = call(f"{base}/api/admin/v1{path}", ADMIN, method,
                             None if body is None else json.dumps(body).encode())
    assert status in (200, 201), (method, path, status, answer)
    return answer["data"]


def link(base: str, account: str, code: str, **fields: Any) -> None:
    admin(base, "POST", f"/accounts/{account}/links",
          {"code": code, "kind": "external", "destination_url": f"https://{code}.example/", **fields})


def live_domain(base: str, account: str, host: str) -> None:
    domain = admin(base, "POST", f"/accounts/{account}/domains", {"host": host})
    assert admin(base, "POST", f"/accounts/{account}/domains/{domain['id']}/verify")["status"] == "live"


def statuses(port: int, host: str, codes: list[str]) -> dict[str, tuple[int, str]]:
    """Each code's answer (status, Location) on ``host``, asked three times on one connection: the answers
    must agree (the handler's, then the fast lane's)."""
    replies = kept_alive(port, host, [f"/{code}" for code in codes] * 3)
    found = [(reply.status, reply.headers.get("location", "").split("?")[0]) for reply in replies]
    for code, first, second, third in zip(codes, found, found[len(codes):], found[2 * len(codes):], strict=False):
        assert first == second == third, (host, code, first, second, third)
    return dict(zip(codes, found, strict=False))


def test_links_resolve_by_host_and_code(service: tuple[str, int]) -> None:
    base, port = service
    admin(base, "POST", "/accounts", {"id": C, "name": "Account C", "environment": "production"})
    live_domain(base, A, "a.example.com")
    live_domain(base, B, "b.example.com")
    admin(base, "POST", f"/accounts/{C}/domains", {"host": "pending.example.com"})
    link(base, A, "a-plain", ios=IOS_A)
    link(base, A, "a-only", domain="a.example.com")
    link(base, B, "b-plain", android=ANDROID_B)
    link(base, C, "c-plain", android=ANDROID_C)
    codes = ["a-plain", "a-only", "b-plain", "c-plain", "lnkaaaa", "lnkbbbb", "nothing"]
    found = {host: statuses(port, host, codes) for host in
             (f"127.0.0.1:{port}", "A.EXAMPLE.COM:443", "b.example.com.", "pending.example.com", "unknown.example.com")}

    assert found[f"127.0.0.1:{port}"] == {
        "a-plain": (302, "https://a-plain.example/"), "a-only": (404, ""), "b-plain": (302, "https://b-plain.example/"),
        "c-plain": (302, "https://c-plain.example/"), "lnkaaaa": (302, "https://shop.example/p"),
        "lnkbbbb": (302, "https://shop.example/p"), "nothing": (404, "")}
    # On A's domain: A's links, the one that names it included; B's and C's are as unknown as a missing code.
    assert found["A.EXAMPLE.COM:443"] == {
        "a-plain": (302, "https://a-plain.example/"), "a-only": (302, "https://a-only.example/"),
        "b-plain": (404, ""), "c-plain": (404, ""), "lnkaaaa": (302, "https://shop.example/p"), "lnkbbbb": (404, ""),
        "nothing": (404, "")}
    assert found["b.example.com."] == {
        "a-plain": (404, ""), "a-only": (404, ""), "b-plain": (302, "https://b-plain.example/"), "c-plain": (404, ""),
        "lnkaaaa": (404, ""), "lnkbbbb": (302, "https://shop.example/p"), "nothing": (404, "")}
    for host in ("pending.example.com", "unknown.example.com"):
        assert {code: status for code, (status, _) in found[host].items()} == dict.fromkeys(codes, 404), host


def test_association_files_list_the_hosts_apps(service: tuple[str, int]) -> None:
    base, port = service
    admin(base, "POST", "/accounts", {"id": C, "name": "Account C", "environment": "production"})
    live_domain(base, A, "a.example.com")
    live_domain(base, B, "b.example.com")
    admin(base, "POST", f"/accounts/{C}/domains", {"host": "pending.example.com"})
    link(base, A, "a-app", ios=IOS_A, android={"package": "com.a.app", "sha256_cert_fingerprints": ["AA:" * 31 + "AA"]})
    link(base, B, "b-app", android=ANDROID_B, ios={"team_id": "BBBBBBBBBB", "bundle_id": "com.b.app"})
    link(base, C, "c-app", android=ANDROID_C)
    paths = ["/.well-known/apple-app-site-association", "/.well-known/assetlinks.json", "/"]

    def listed(host: str) -> tuple[list[str], list[str], int]:
        apple, android, root = kept_alive(port, host, paths)
        assert (apple.status, android.status) == (200, 200), host
        app_ids = [detail["appID"] for detail in json.loads(apple.body)["applinks"]["details"]]
        return app_ids, [entry["target"]["package_name"] for entry in json.loads(android.body)], root.status

    assert listed("a.example.com") == (["AAAAAAAAAA.com.a.app"], ["com.a.app"], 404)
    assert listed("b.example.com") == (["BBBBBBBBBB.com.b.app"], ["com.b.app"], 404)
    # The shared host lists the apps of the accounts without a live domain: C's (pending) only.
    assert listed(f"127.0.0.1:{port}") == ([], ["com.c.app"], 404)
    for host in ("pending.example.com", "unknown.example.com"):
        replies = kept_alive(port, host, paths)
        assert [reply.status for reply in replies] == [404, 404, 404], host
        assert all(set(json.loads(reply.body)) == {"error", "details"} for reply in replies[:2])
