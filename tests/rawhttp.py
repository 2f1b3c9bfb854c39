"""HTTP/1.1 over a raw socket, for bytes no HTTP client library would send: what comes back is parsed
loosely (status, headers, body), and a connection the server closes without an answer is status 0."""

from __future__ import annotations

import contextlib
import socket
from dataclasses import dataclass, field


@dataclass
class Reply:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    raw: bytes = b""


def parse(raw: bytes) -> Reply:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    try:
        status = int(lines[0].split()[1])
    except (IndexError, ValueError):
        return Reply(0, raw=raw)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        headers[name.decode("latin-1").strip().lower()] = value.decode("latin-1").strip()
    length = headers.get("content-length")
    if length is not None and length.isdigit():
        body = body[:int(length)]
    return Reply(status, headers, body, raw)


def _whole(raw: bytes) -> bool:
    """One answer is in: its headers and as much body as its Content-Length says."""
    head, found, body = raw.partition(b"\r\n\r\n")
    if not found:
        return False
    length = parse(head + b"\r\n\r\n").headers.get("content-length")
    return length is not None and length.isdigit() and len(body) >= int(length)


def exchange(port: int, raw: bytes, timeout: float = 10.0, host: str = "127.0.0.1",
             half_close: bool = False, first_answer: bool = False) -> Reply:
    """Sends ``raw`` on a new connection and reads until the server closes it or ``timeout`` passes (send
    ``Connection: close`` to get the answer at once). ``half_close``: the client then says it sends no more
    (a body shorter than its Content-Length stays short). ``first_answer``: stop reading once one whole
    answer with a Content-Length is in, for requests that keep the connection open after it."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        with contextlib.suppress(OSError):  # the server refused and closed before all was sent: read its answer
            sock.sendall(raw)
            if half_close:
                sock.shutdown(socket.SHUT_WR)
        chunks = []
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
                if first_answer and _whole(b"".join(chunks)):
                    break
        except (TimeoutError, ConnectionResetError):
            pass
    return parse(b"".join(chunks))


def request(method: str, target: str, headers: list[tuple[str, str | bytes]] | None = None,
            body: bytes = b"") -> bytes:
    """A request's bytes exactly as given (header values may be bytes that are not UTF-8)."""
    lines = [f"{method} {target} HTTP/1.1".encode(), b"Host: 127.0.0.1"]
    for name, value in headers or []:
        lines.append(name.encode() + b": " + (value if isinstance(value, bytes) else value.encode()))
    if body and not any(name.lower() in ("content-length", "transfer-encoding") for name, _ in headers or []):
        lines.append(f"Content-Length: {len(body)}".encode())
    lines.append(b"Connection: close")
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def kept_alive(port: int, host: str, paths: list[str], headers: dict[str, str] | None = None) -> list[Reply]:
    """GETs of ``paths`` (request targets: ``/path`` or absolute ``http://host/path``) one after the other on one
    HTTP/1.1 connection with ``Host: host`` and ``headers``."""
    replies = []
    more = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        for path in paths:
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: curl/8.5.0\r\n{more}\r\n".encode())
            raw = b""
            while True:
                raw += sock.recv(65536)
                head, found, body = raw.partition(b"\r\n\r\n")
                if found:
                    length = parse(head + b"\r\n\r\n").headers.get("content-length", "0")
                    if len(body) >= int(length):
                        break
            replies.append(parse(raw))
    return replies
