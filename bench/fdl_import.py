"""How long a Dynamic Links export takes to import: ``.venv/bin/python -m bench.fdl_import``.

Starts ``linksvc serve`` (one worker, SQLite ``synchronous=FULL``, a fresh database file per size) on 127.0.0.1,
creates an account and one custom domain through the admin API, then POSTs one FDL export (CSV) of each size
to ``/api/admin/v1/accounts/{id}/links/fdl-import`` and measures, from the client, the seconds until the
answer; then sends the same file again (the retry of a client that lost the answer), and measures that too.
The export's rows look like a Firebase console export: a link name, the short link at a 4-to-12 character
path, and a long link with ``link``, ``apn``, ``ibi``, ``isi``, ``ofl``, fallbacks, UTM and a preview title in
a third of them (about 350 bytes a row).

``--limits-off`` raises the service's request deadline and body limits so that a slow importer can be timed
to its end rather than cut off (how the "before" figures were measured); without it the service runs with
its defaults. Writes its section to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from bench import load, postgres

COMMAND = ".venv/bin/python -m bench.fdl_import"
HOST = "go.bench.example"
ADMIN_API = "/api/admin/v1"
SERVICE_ENV = {**load.DEFAULTS, "LINKSVC_LOAD_DEMO": "0", "LINKSVC_DB_SYNCHRONOUS": "FULL"}
NO_LIMITS = {"LINKSVC_REQUEST_TIMEOUT_SECONDS": "3600", "LINKSVC_MAX_BODY_BYTES": str(64 * 1024 * 1024),
             "LINKSVC_MAX_BULK_BODY_BYTES": str(64 * 1024 * 1024)}
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def export(rows: int, seed: int = 32) -> bytes:
    """An export of ``rows`` rows, each at its own short path."""
    pick = random.Random(seed)
    lines = ["Link name,Short Dynamic Link,Long Dynamic Link"]
    codes: set[str] = set()
    while len(codes) < rows:
        codes.add("".join(pick.choice(ALPHABET) for _ in range(pick.randint(4, 12))))
    for n, code in enumerate(sorted(codes)):
        product = pick.randint(1, 99_999)
        long = (f"https://{HOST}/?link=https%3A%2F%2Fshop.example%2Fproduct%2F{product}%3Fref%3Dfdl"
                f"&apn=com.shop.app&afl=https%3A%2F%2Fshop.example%2Fandroid%2F{product}"
                f"&ibi=com.shop.ios&isi=1234567&ifl=https%3A%2F%2Fshop.example%2Fios%2F{product}"
                f"&ofl=https%3A%2F%2Fshop.example%2Fp%2F{product}"
                f"&utm_source=newsletter&utm_medium=email&utm_campaign=campaign-{n % 40}")
        if n % 3 == 0:
            long += f"&st=Product+{product}&sd=Half+price+this+week"
        lines.append(f"Product {product},https://{HOST}/{code},\"{long}\"")
    return ("\r\n".join(lines) + "\r\n").encode()


def post_csv(server: load.Server, path: str, body: bytes, timeout: float) -> tuple[int, Any, float]:
    """(status, answer text, seconds) of one POST of ``body`` as text/csv."""
    request = urllib.request.Request(server.url(path), data=body,
                                     headers={**load.ADMIN, "Content-Type": "text/csv"})
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, answer.read().decode(), time.monotonic() - started
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode(errors="replace"), time.monotonic() - started


def summary(status: int, text: str) -> str:
    """What the answer says: rows per outcome, or the error."""
    try:
        answer = json.loads(text)
    except ValueError:
        return text[:80]
    data = answer.get("data") if isinstance(answer, dict) else None
    if status == 200 and isinstance(data, dict):
        parts = [f"{len(data.get(key) or []):,} {key}" for key in ("created", "unchanged", "failed") if key in data]
        return ", ".join(parts)
    return f"{answer.get('error')}" if isinstance(answer, dict) else text[:80]


def measure(rows: int, limits_off: bool, timeout: float, admin_url: str | None) -> list[list[str]]:
    """The two imports of an export of ``rows`` rows, on a fresh SQLite file or (``admin_url``) a fresh
    PostgreSQL database."""
    url = postgres.create(admin_url) if admin_url else None
    try:
        return _measure(rows, limits_off, timeout, url)
    finally:
        if admin_url and url:
            postgres.drop(admin_url, url)


def _measure(rows: int, limits_off: bool, timeout: float, url: str | None) -> list[list[str]]:
    body = export(rows)
    env = {**SERVICE_ENV, **(NO_LIMITS if limits_off else {}), **postgres.environment(url)}
    found = []
    with tempfile.TemporaryDirectory() as directory, \
            load.service(f"linksvc ({rows:,} rows)", Path(directory) / "import.db", env) as server:
        status, answer = load.post_json(server.url(f"{ADMIN_API}/accounts"), {"name": "Bench"}, load.ADMIN)
        if status != 201:
            raise SystemExit(f"creating the account answered {status}: {answer}")
        account = answer["data"]["id"]
        status, answer = load.post_json(server.url(f"{ADMIN_API}/accounts/{account}/domains"), {"host": HOST},
                                        load.ADMIN)
        if status != 201:
            raise SystemExit(f"adding the domain answered {status}: {answer}")
        path = f"{ADMIN_API}/accounts/{account}/links/fdl-import"
        for attempt in ("first", "same file again"):
            print(f"importing {rows:,} rows ({attempt}) ...")
            status, text, seconds = post_csv(server, path, body, timeout)
            label = f"{rows:,}" + (postgres.SUFFIX if url else "")
            found.append([label, f"{len(body) / 1024 / 1024:.1f}", attempt, str(status), f"{seconds:.2f}",
                          f"{rows / seconds:,.0f}", summary(status, text)])
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fdl_import", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", default="9000,20000,30000", help="export sizes, comma separated [9000,20000,30000]")
    parser.add_argument("--limits-off", action="store_true",
                        help="raise the request deadline and body limits (to time an importer to its end)")
    parser.add_argument("--timeout", type=float, default=3600.0, help="client timeout per request, s [3600]")
    parser.add_argument("--section", default="fdl-import", help="the section of docs/benchmarks.md [fdl-import]")
    parser.add_argument("--title", default="Dynamic Links import (issue 32)", help="the section's heading")
    postgres.add_argument(parser)
    load.output_options(parser, "500 rows")
    args = parser.parse_args(argv)
    sizes = [500] if args.smoke else [int(size) for size in args.rows.split(",")]
    stores = [None, args.postgresql] if args.postgresql else [None]
    lines = [line for store in stores for size in sizes
             for line in measure(size, args.limits_off, args.timeout, store)]
    limits = ("with the request deadline and body limits raised (`--limits-off`)" if args.limits_off
              else "with the service's default limits (30 s request deadline; 16 MiB and 20,000 rows for the import)")
    text = "\n".join([
        f"## {args.title}", "",
        f"`{COMMAND}{' --limits-off' if args.limits_off else ''}`: `linksvc serve` (one worker, SQLite, "
        f"`synchronous=FULL`, a fresh database per size) {limits}; one account with one custom domain; one FDL "
        "export per size (link name, short link, long link with link/apn/afl/ibi/isi/ifl/ofl/UTM and a preview "
        "in a third of the rows) POSTed to `/links/fdl-import`, then the same file again; seconds until the "
        "answer, from the client.", "",
        load.table(["rows", "MiB", "request", "status", "seconds", "rows/s", "answer"], lines), "",
        *(["Rows \"on PostgreSQL\": the same service with `LINKSVC_DATABASE_URL` on a new, empty database of the "
           "machine's PostgreSQL (127.0.0.1), dropped afterwards.", ""] if args.postgresql else []),
        f"Machine: {load.machine().line()}. Measured at {load.revision()}.",
    ])
    print(text)
    load.publish(args.section, text, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
