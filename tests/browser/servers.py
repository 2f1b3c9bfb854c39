"""What the browser tests run against, all on 127.0.0.1: the real service (``python -m linksvc serve`` with the
demo data, on a SQLite file), an HTTPS landing page that records the query of every visit (link destinations
must be https; its certificate is made here and the browser is told to accept it), and a webhook receiver."""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.processes import free_port, stop

ROOT = Path(__file__).resolve().parents[2]
ADMIN_TOKEN = "browser-admin-token-0123456789"


def call(url: str, method: str = "GET", body: Any = None, headers: dict[str, str] | None = None,
         token: str | None = ADMIN_TOKEN) -> tuple[int, Any]:
    """One JSON call; (status, parsed body). Redirects are not followed."""
    sent = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {}),
            **(headers or {})}
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers=sent)
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=10) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw.strip().startswith(b"{") else raw
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        return exc.code, json.loads(raw) if raw.strip().startswith(b"{") else raw


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def self_signed(folder: Path) -> ssl.SSLContext:
    """A server TLS context with a fresh certificate for 127.0.0.1."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "landing.crt", folder / "landing.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    return context


@dataclass
class Recorder:
    """A local HTTP(S) server that keeps the path and body of every request it gets."""

    base: str
    requests: list[dict[str, Any]] = field(default_factory=list)


@contextmanager
def recording_server(tls: ssl.SSLContext | None = None) -> Iterator[Recorder]:
    """GET answers a small landing page; POST (webhooks) answers 204 to ``event.accepted`` and 422 to any
    other kind, so that one connection shows delivered and failed deliveries."""
    recorder = Recorder("")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            recorder.requests.append({"method": "GET", "path": self.path})
            page = b"<!doctype html><title>Landing</title><h1>Landing page</h1>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            kind = json.loads(body or b"{}").get("type")
            recorder.requests.append({"method": "POST", "path": self.path, "type": kind})
            self.send_response(204 if kind == "event.accepted" else 422)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)  # the port the OS gives, kept while it listens
    recorder.base = f"{'https' if tls else 'http'}://127.0.0.1:{server.server_address[1]}"
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield recorder
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def service(folder: Path, extra: dict[str, str] | None = None) -> Iterator[str]:
    """``python -m linksvc serve`` with the demo data on a free port; yields its base URL. Its store is the
    SQLite file ``folder/service.db`` in either run of the suite: what the browser tests prove is the page's,
    and every read and write behind it is an admin or storefront API call that tests/http runs on both stores
    (docs/decisions.md, The suite's time). ``extra``: more settings."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "LINKSVC_ADMIN_TOKEN": ADMIN_TOKEN, "LINKSVC_LOAD_DEMO": "1",
           "LINKSVC_DEMO_FILE": str(ROOT / "fixtures" / "demo.json"), "LINKSVC_ALLOW_PRIVATE_DESTINATIONS": "1",
           "LINKSVC_PUBLIC_URL": base, "LINKSVC_DELIVERY_MAX_TRIES": "1", "LINKSVC_CLICK_FLUSH_SECONDS": "0.2",
           "LINKSVC_EXPORT_INTERVAL_SECONDS": "3600", "LINKSVC_LOG_FORMAT": "text", **(extra or {})}
    env.pop("LINKSVC_DATABASE_URL", None)
    log_path = folder / "service.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "linksvc", "serve", "--port", str(port),
                                    "--db", str(folder / "service.db")], cwd=ROOT, env=env, stdout=log,
                                   stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if call(base + "/readyz", token=None)[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise AssertionError("the service did not start:\n" + log_path.read_text())
            time.sleep(0.1)
        yield base
    finally:
        stop(process)
