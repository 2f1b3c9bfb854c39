"""The command line: ``linksvc serve``, ``linksvc seed FILE``, ``linksvc export``, ``linksvc route CODE``,
``linksvc import VENDOR FILE``, ``linksvc person create`` (also ``python -m linksvc``)."""

from __future__ import annotations

import argparse
import asyncio
import errno
import getpass
import json
import logging
import re
import socket
import sys
import time
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from linksvc.clock import parse_iso
from linksvc.errors import InvalidField, ServiceError
from linksvc.identity import VERSION
from linksvc.imports.vendors import VENDORS
from linksvc.logs import configure_logging
from linksvc.people.roles import ROLES
from linksvc.progress import Progress, shown
from linksvc.redaction import mask_url_credentials
from linksvc.settings import (
    MAX_WORKERS,
    WILDCARD_HOSTS,
    Settings,
    SettingsError,
    check_database_url,
    check_port,
    load_settings,
)
from storage.errors import StoreUnavailable

# Each command imports what it alone needs, in its own function: a command starts in the time of its own
# modules (``--version`` and ``mail test`` in a fifth of a second, ``seed`` without the HTTP stack, ``serve``
# alone with the application).

log = logging.getLogger("linksvc")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="linksvc", description="Deeplinks, short links and loyalty campaigns.")
    parser.add_argument("--version", action="version", version=f"linksvc {VERSION}")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the service (loads the demo data into an empty database)")
    serve.add_argument("--host", help="address to listen on [LINKSVC_HOST, 127.0.0.1]")
    serve.add_argument("--port", type=int, help="port to listen on [LINKSVC_PORT, 8080]")
    serve.add_argument("--db", help="SQLite database file [LINKSVC_DB, data/linksvc.db]")
    serve.add_argument("--database-url", help="postgresql://user@host:port/db selects PostgreSQL "
                                              "[LINKSVC_DATABASE_URL; unset: the SQLite file]")
    serve.add_argument("--workers", type=int, help="processes serving the port [LINKSVC_WORKERS, 1]")
    seed = commands.add_parser("seed", help="load a seed file (an upsert by id: loading twice changes nothing)")
    seed.add_argument("file", help="the seed file (JSON)")
    seed.add_argument("--db", help="SQLite database file [LINKSVC_DB, data/linksvc.db]")
    seed.add_argument("--database-url", help="PostgreSQL instead of the file [LINKSVC_DATABASE_URL]")
    export = commands.add_parser("export", help="write the events (and the clicks) not exported yet as gzipped "
                                                "JSON lines")
    export.add_argument("--db", help="SQLite database file [LINKSVC_DB, data/linksvc.db]")
    export.add_argument("--database-url", help="PostgreSQL instead of the file [LINKSVC_DATABASE_URL]")
    export.add_argument("--dir", help="local export folder [LINKSVC_EXPORT_DIR, exports beside the database]; "
                                      "ignored when LINKSVC_EXPORT_S3_BUCKET is set")
    export.add_argument("--what", choices=("events", "clicks", "all"),
                        help="what to export [events, and the clicks too with LINKSVC_EXPORT_CLICKS]")
    route = commands.add_parser("route", help="what the resolver would answer a click on a link, and why")
    route.add_argument("code", help="the link's code")
    route.add_argument("--user-agent", default="", help="the click's User-Agent header")
    route.add_argument("--query", default="", help="the click's query string, e.g. utm_source=news&$app-found=true")
    route.add_argument("--accept-json", action="store_true", help="the click sends Accept: application/json")
    route.add_argument("--country", help="the client's country (ISO 3166-1 alpha-2), for the link's rules")
    route.add_argument("--ip", help="the client's address, placed as the resolver places it (country; region and "
                                    "city with LINKSVC_GEO_MMDB)")
    route.add_argument("--language", default="", help="the click's Accept-Language header, e.g. 'pt-BR,pt;q=0.9'")
    route.add_argument("--referer", default="", help="the click's Referer header")
    route.add_argument("--cookie", help="the click's Cookie header as the browser sends it, e.g. 'lsv_<link id>=B' "
                                        "(a returning visitor's variant) or 'linksvc_pw_<code>=...' (a password given "
                                        "before); given, a protected link without a valid password cookie answers its "
                                        "page")
    route.add_argument("--at", help="the click's time (ISO 8601, e.g. 2026-03-02T21:30:00+09:00) [now]")
    route.add_argument("--json", action="store_true", help="print a JSON object instead of text")
    route.add_argument("--db", help="SQLite database file [LINKSVC_DB, data/linksvc.db]")
    import_ = commands.add_parser("import", help="bring in the links of another link service's export")
    import_.add_argument("vendor", choices=sorted(VENDORS), help="whose export the file is")
    import_.add_argument("file", help="the export as downloaded (JSON; Bitly: JSON or CSV)")
    import_.add_argument("--account", required=True, help="the id of the account the links join")
    import_.add_argument("--dry-run", action="store_true", help="say what would happen to each row, write nothing")
    import_.add_argument("--new-codes", action="store_true",
                         help="a row whose code another account's link has, or that is not a code here, gets a "
                              "fresh code instead of an error")
    import_.add_argument("--json", action="store_true", help="print the whole answer as JSON instead of text")
    import_.add_argument("--db", help="SQLite database file [LINKSVC_DB, data/linksvc.db]")
    import_.add_argument("--database-url", help="PostgreSQL instead of the file [LINKSVC_DATABASE_URL]")
    database = commands.add_parser("db", help="move an install between stores")
    actions = database.add_subparsers(dest="action", required=True)
    copy = actions.add_parser("copy", help="copy a SQLite install into an empty PostgreSQL database, verified")
    copy.add_argument("--from", dest="source", required=True, help="sqlite:///path/to/linksvc.db")
    copy.add_argument("--to", dest="target", required=True, help="postgresql://user@host:port/database (empty)")
    route.add_argument("--database-url", help="PostgreSQL instead of the file [LINKSVC_DATABASE_URL]")
    mail_ = commands.add_parser("mail", help="email through LINKSVC_SMTP_URL")
    mail_actions = mail_.add_subparsers(dest="action", required=True)
    test = mail_actions.add_parser("test", help="send a test letter, to check the SMTP settings")
    test.add_argument("to", help="the address to send it to")
    person = commands.add_parser("person", help="people who sign in to the back office")
    person_actions = person.add_subparsers(dest="action", required=True)
    create = person_actions.add_parser("create", help="create a person, a member of an account with a role")
    create.add_argument("--email", required=True, help="the email they sign in with (unique, any case)")
    create.add_argument("--name", required=True, help="their name")
    create.add_argument("--account", required=True, help="the id of the account they join")
    create.add_argument("--role", required=True, choices=ROLES, help="their role there (owner: every right)")
    create.add_argument("--password-stdin", action="store_true",
                        help="read the password from the first line of standard input instead of a prompt")
    create.add_argument("--db", help="SQLite database file [LINKSVC_DB, data/linksvc.db]")
    create.add_argument("--database-url", help="PostgreSQL instead of the file [LINKSVC_DATABASE_URL]")
    return parser


def _query_of(text: str) -> dict[str, str]:
    """The click's query as the resolver reads it: the first value of each name."""
    query: dict[str, str] = {}
    for key, value in parse_qsl(text.removeprefix("?"), keep_blank_values=True):
        query.setdefault(key, value)
    return query


def _route_click_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with ``route``'s description of the click (named by its option), or None."""
    from linksvc.rules.geo import parse_address

    if args.country is not None and not re.fullmatch(r"[A-Za-z]{2}", args.country):
        return f"--country must be an ISO 3166-1 alpha-2 code like FR, got {args.country!r}"
    if args.ip is not None and parse_address(args.ip) is None:
        return f"--ip must be an IPv4 or IPv6 address, got {args.ip!r}"
    if args.at is not None:
        try:
            parse_iso(args.at)
        except ValueError:
            return f"--at must be an ISO 8601 time with its offset, like 2026-03-02T21:30:00+09:00, got {args.at!r}"
    return None


def _route_text(answer: dict[str, Any]) -> str:
    lines = [f"{answer['status']} {HTTPStatus(answer['status']).phrase}"]
    if answer["location"] is not None:
        lines.append(f"Location: {answer['location']}")
    if answer["body"] is not None:
        lines.append(json.dumps(answer["body"]))
    labels = {"device": "why", "route": "route", "preview": "preview", "skipped": "skipped",
              "tracking_id": "tracking_id", "client": "client", "rule": "rule", "rules": "rules",
              "variant": "variant", "password": "password"}
    for step in answer["explanation"]:
        label = labels.get(step["step"])
        lines.append(f"{label}: {step['text']}" if label else step["text"])
    return "\n".join(lines)


async def _route(settings: Settings, args: argparse.Namespace) -> int:
    problem = _route_click_problem(args)
    if problem is not None:  # said before the resolver's modules are imported
        print(f"error: {problem}", file=sys.stderr)
        return 2
    from linksvc.links.overview import ClickAt, route_of_code
    from linksvc.rules.geo import Geo
    from linksvc.store import store_of
    from storage.postgres import is_postgres_url

    at = parse_iso(args.at).timestamp() if args.at else time.time()
    click = ClickAt(args.country, args.ip, args.language, args.referer, args.cookie)
    on_postgres = is_postgres_url(settings.database_url)
    where = mask_url_credentials(settings.database_url) if on_postgres else settings.db_path
    if not on_postgres and settings.db_path != ":memory:" and not Path(settings.db_path).is_file():
        print(f"error: there is no database at {settings.db_path}", file=sys.stderr)
        return 1
    db = store_of(settings)
    with shown(interval=settings.progress_seconds) as progress:  # an older database is migrated first
        await db.open(progress)
    try:
        answer = await route_of_code(db.reader, args.code, args.user_agent, _query_of(args.query), args.accept_json,
                                     settings.public_url, settings.service_label, at, click,
                                     Geo(settings.geo_mmdb or None))
    finally:
        await db.close()
    if answer is None:
        print(f"error: no link has the code {args.code!r} in {where} (the resolver answers 404)",
              file=sys.stderr)
        return 1
    print(json.dumps(answer, indent=2) if args.json else _route_text(answer))
    return 0


async def _export(settings: Settings, what: str | None = None) -> int:
    from linksvc.forwarding.export import EXPORTS, export_target_of, exports_of
    from linksvc.forwarding.export_job import run_export

    target = export_target_of(settings)
    chosen = exports_of(settings) if what is None else EXPORTS if what == "all" else (what,)
    try:
        with shown(interval=settings.progress_seconds) as progress:
            result = await run_export(settings.db_path, target, synchronous=settings.db_synchronous,
                                      progress=progress, database_url=settings.database_url or None, what=chosen)
    except Exception as exc:  # S3 and disk errors alike; what was written stays recorded, a re-run goes on
        print(mask_url_credentials(f"error: export to {target.shown} failed: {exc}"), file=sys.stderr)
        return 1
    print(json.dumps({"target": target.shown, "files": result.files, "events": result.events,
                      **({"clicks": result.clicks} if "clicks" in chosen else {})}))
    return 0


def _run(settings: Settings, metrics_dir: str | None = None) -> None:
    """Serves one process: binds the port first (raises OSError if it cannot), then builds the app, whose store
    opens (and loads the demo into an empty database) when it starts."""
    # Imported here: only serve needs the HTTP stack and the application (seed, export and route start in
    # about half the time without them).
    import uvloop

    from api import server
    from api.access_log import AccessLogger
    from linksvc.app import FREEZE_HELD, create_app

    sockets = server.bind(settings.host, settings.port, reuse_port=metrics_dir is not None)
    try:
        if settings.port == 0:  # the port the system chose; a public URL made from the port follows it
            settings = settings.with_overrides(port=int(sockets[0].getsockname()[1]))
        if metrics_dir is None:
            host = settings.host
            shown = f"[{host}]" if ":" in host and not host.startswith("[") else host  # an IPv6 address
            log.info("linksvc listening on http://%s:%s (database %s; short links under %s)", shown,
                     settings.port, settings.store_name, mask_url_credentials(settings.public_url))
        # uvloop's event loop (libuv) does the same I/O in about half the CPU of asyncio's own.
        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
        app = create_app(settings, metrics_dir)
        app[FREEZE_HELD] = True
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    server.run(app, sockets, header_timeout=settings.header_timeout_seconds, access_log_class=AccessLogger,
               access_log=logging.getLogger("linksvc.access"), keepalive_timeout=75.0)


def _cannot_listen(settings: Settings, exc: OSError) -> int:
    reason = exc.strerror or str(exc)
    hint = (" (is another linksvc serve running there? stop it, or choose another --port / LINKSVC_PORT)"
            if exc.errno == errno.EADDRINUSE else "")
    print(f"error: cannot listen on {settings.host}:{settings.port}: {reason.lower()}{hint}", file=sys.stderr)
    return 1


def _serve(settings: Settings) -> int:
    settings = settings.resolved_admin_token()
    if not load_settings().admin_token:
        log.warning("LINKSVC_ADMIN_TOKEN is not set; this run's admin token is %s", settings.admin_token)
    if settings.public_url_follows and settings.host in WILDCARD_HOSTS:
        log.warning("LINKSVC_PUBLIC_URL is not set and the service listens on every address: short links, QR "
                    "codes and install referrers say %s; set LINKSVC_PUBLIC_URL to the address people click",
                    settings.public_url)
    if settings.workers > 1:
        if settings.port == 0:
            print("error: several workers need a fixed port, not 0", file=sys.stderr)
            return 2
        from api import server
        from linksvc.workers import supervise

        try:  # the port must be free before the demo is loaded and the workers start (they bind it each)
            server.bind(settings.host, settings.port, listen=False)
        except OSError as exc:
            return _cannot_listen(settings, exc)
        return supervise(settings, settings.workers, _run)
    try:
        _run(settings)
    except OSError as exc:
        if exc.errno not in _CANNOT_LISTEN and not isinstance(exc, socket.gaierror):
            raise
        return _cannot_listen(settings, exc)
    return 0


_CANNOT_LISTEN = {errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES}
"""Errors of binding the listening socket: answered with one line instead of a traceback."""


async def _copy(settings: Settings, source: str, target: str) -> int:
    from storage.copy import CopyRefused, copy_sqlite_to_postgres
    from storage.db import Database
    from storage.postgres import is_postgres_url

    if not source.startswith("sqlite:///") or not is_postgres_url(target):
        print("error: linksvc db copy --from sqlite:///path --to postgresql://user@host:port/database",
              file=sys.stderr)
        return 2
    path = source.removeprefix("sqlite:///")
    try:
        with shown(interval=settings.progress_seconds) as progress:
            if Path(path).is_file():  # the source at the latest migration first, as the service would make it
                lite = Database(path, settings.db_synchronous)
                await lite.open(progress)
                await lite.close()
            report = await copy_sqlite_to_postgres(path, target, progress)
    except CopyRefused as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps({"copied": report.rows, "sums": report.sums, "to": mask_url_credentials(target)}))
    return 0


async def _load(settings: Settings, path: str, progress: Progress) -> dict[str, int]:
    from linksvc.seed import load_seed_file
    from linksvc.store import store_of

    db = store_of(settings)
    await db.open(progress)
    try:
        return await load_seed_file(db, path, allow_private=settings.allow_private_destinations, progress=progress)
    finally:
        await db.close()


async def _seed(settings: Settings, path: str) -> int:
    try:
        with shown(interval=settings.progress_seconds) as progress:
            counts = await _load(settings, path, progress)
    except InvalidField as exc:
        for issue in exc.issues:  # every bad field, one a line
            print(f"error: {path}: {issue.path}: {issue.message}", file=sys.stderr)
        return 1
    except ServiceError as exc:
        print(f"error: {path}: {exc.error}: {exc.details}", file=sys.stderr)
        return 1
    print(json.dumps({"loaded": path, "changed": counts}))
    return 0


def _import_text(answer: dict[str, Any]) -> str:
    """One line a row (its place in the file, what happens to it, its code, why), then the summary."""
    lines = []
    for row in answer["rows"]:
        code = row["code"] or (f"(new code for {row['original_code']})" if row["original_code"] else "(new code)")
        if row["status"] == "error":
            details = row["details"]
            why = f"{details.get('field')}: {details.get('message')}" if isinstance(details, dict) else details
            lines.append(f"row {row['row']}: error {row['original_code'] or ''}: {row['error']}: {why}")
        else:
            verb = "would be created" if answer["dry_run"] and row["status"] == "created" else row["status"]
            reason = f" ({row['reason']})" if row["reason"] else ""
            lines.append(f"row {row['row']}: {verb} {code} -> {row['destination_url']}{reason}")
    summary = answer["summary"]
    lines.append(f"{'dry run: ' if answer['dry_run'] else ''}{summary['rows']} rows: {summary['created']} "
                 f"{'to create' if answer['dry_run'] else 'created'}, {summary['skipped']} skipped, "
                 f"{summary['failed']} failed")  # the command line has no deadline: nothing is ever pending
    return "\n".join(lines)


async def _import(settings: Settings, args: argparse.Namespace) -> int:
    from linksvc.imports.service import ImportOptions, import_links
    from linksvc.store import store_of

    try:
        text = Path(args.file).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: cannot read {args.file}: {exc}", file=sys.stderr)
        return 1
    options = ImportOptions(dry_run=args.dry_run, new_codes=args.new_codes,
                            allow_private=settings.allow_private_destinations)
    db = store_of(settings)
    try:
        with shown(interval=settings.progress_seconds) as progress:
            await db.open(progress)
            try:
                answer = await import_links(db, args.account, args.vendor, text, options, progress)
            finally:
                await db.close()
    except InvalidField as exc:
        for issue in exc.issues:
            print(f"error: {args.file}: {issue.message}" if issue.path == "body" else f"error: {issue.path}: "
                  f"{issue.message}", file=sys.stderr)
        return 1
    except ServiceError as exc:
        print(f"error: {exc.error}: {exc.details}", file=sys.stderr)
        return 1
    print(json.dumps(answer, indent=2) if args.json else _import_text(answer))
    return 1 if answer["summary"]["failed"] else 0


def _password(from_stdin: bool) -> str | None:
    """The new person's password: the first line of standard input, or typed twice at a prompt."""
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass("Password: ")
    if getpass.getpass("Password again: ") != first:
        print("error: the two passwords differ", file=sys.stderr)
        return None
    return first


def _person_create(settings: Settings, args: argparse.Namespace) -> int:
    from linksvc.people import service as people
    from linksvc.store import store_of

    password = _password(args.password_stdin)
    if password is None:
        return 1

    async def create() -> dict[str, Any]:
        db = store_of(settings)
        await db.open()
        try:
            return await people.create_person(db, args.email, args.name, password, args.account, args.role)
        finally:
            await db.close()

    try:
        person = asyncio.run(create())
    except InvalidField as exc:
        for issue in exc.issues:
            print(f"error: {issue.path}: {issue.message}", file=sys.stderr)
        return 1
    except ServiceError as exc:
        print(f"error: {exc.error}: {exc.details}", file=sys.stderr)
        return 1
    print(json.dumps({"created": person}))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = load_settings().with_overrides(
            host=getattr(args, "host", None), port=getattr(args, "port", None), db_path=getattr(args, "db", None),
            database_url=getattr(args, "database_url", None),
            workers=getattr(args, "workers", None), export_dir=getattr(args, "dir", None),
        )
        if getattr(args, "port", None) is not None:
            check_port("--port", args.port)
        check_database_url("--database-url", settings.database_url)
        if not 1 <= settings.workers <= MAX_WORKERS:
            raise SettingsError(f"--workers must be between 1 and {MAX_WORKERS}, got {settings.workers}")
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level, settings.log_format)
    try:
        return _command(settings, args)
    except StoreUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


async def _mail_test(settings: Settings, to: str) -> int:
    """``linksvc mail test ADDRESS``: a letter through the configured server; what the server said."""
    from linksvc import mail

    if "@" not in to or any(c.isspace() for c in to):
        print(f"error: {to!r} is not an email address", file=sys.stderr)
        return 2
    letter = mail.Letter(to=to, subject="linksvc: a test letter",
                         text=f"This letter checks the mail settings of linksvc at {settings.public_url}.\n"
                              "Nothing needs doing.\n")
    outcome = await mail.send(settings.mail_server, settings.mail_sender, letter)
    print(outcome.detail, file=sys.stdout if outcome.sent else sys.stderr)
    return 0 if outcome.sent else 1


def _command(settings: Settings, args: argparse.Namespace) -> int:
    if args.command == "serve":
        return _serve(settings)
    if args.command == "export":
        return asyncio.run(_export(settings, args.what))
    if args.command == "route":
        return asyncio.run(_route(settings, args))
    if args.command == "db":
        return asyncio.run(_copy(settings, args.source, args.target))
    if args.command == "mail":
        return asyncio.run(_mail_test(settings, args.to))
    if args.command == "person":
        return _person_create(settings, args)
    if args.command == "import":
        return asyncio.run(_import(settings, args))
    return asyncio.run(_seed(settings, args.file))


if __name__ == "__main__":
    sys.exit(main())
