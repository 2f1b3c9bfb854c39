"""Frozen service settings, read from ``LINKSVC_*`` environment variables.

Every setting has a default so that ``linksvc serve`` works with no configuration. A malformed value
raises :class:`SettingsError` naming the variable, so a typo in a deployment fails at start-up, not at
the first request. Tests build :class:`Settings` directly.

A settings object's ``repr`` (and so any log line or traceback that shows one) leaves out the admin token
the S3 secret and the SMTP URL, and masks credentials in URL settings (``LINKSVC_EXPORT_S3_ENDPOINT``,
``LINKSVC_PUBLIC_URL``): ``https://********@host``.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from yarl import URL

from linksvc import mail
from linksvc.client_address import parse_networks
from linksvc.redaction import mask_url_credentials, masked_repr
from linksvc.rules.geo import check_mmdb

REPO_ROOT = Path(__file__).resolve().parent.parent


class SettingsError(ValueError):
    """A ``LINKSVC_*`` variable holds a value that cannot be used."""


MAX_WORKERS = 64


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8080
    db_path: str = "data/linksvc.db"
    # postgresql://user@host:port/database selects PostgreSQL; empty, the SQLite file db_path is the store.
    database_url: str = field(default="", repr=False)
    # PostgreSQL only: connections per process at most; the URL LISTEN uses when database_url goes through
    # PgBouncer in transaction mode (empty: database_url); statements kept prepared per connection (0 behind
    # a PgBouncer older than 1.21, which cannot keep them).
    database_pool_size: int = 10
    database_listen_url: str = field(default="", repr=False)
    database_statement_cache: int = 100
    # Empty means: generate a random token at start-up and log it once.
    admin_token: str = field(default="", repr=False)
    token_ttl_seconds: int = 3600
    max_body_bytes: int = 1024 * 1024
    max_bulk_body_bytes: int = 10 * 1024 * 1024
    # The body of an import (a Dynamic Links export, 20,000 rows at most: linksvc.links.fdl_service.MAX_ROWS).
    max_import_body_bytes: int = 16 * 1024 * 1024
    load_demo: bool = True
    demo_file: str = str(REPO_ROOT / "fixtures" / "demo.json")
    log_level: str = "INFO"
    log_format: str = "json"
    allow_private_destinations: bool = False
    db_synchronous: str = "FULL"
    db_cache_mb: int = 64
    # The address short links are published under (the `link` of install referrers). Empty: where the service
    # listens, http://{host}:{port} (127.0.0.1 for a wildcard host), filled in by __post_init__.
    public_url: str = ""
    # utm_source of internal email, push and WhatsApp links that carry none.
    service_label: str = "linksvc"
    click_flush_seconds: float = 0.5
    # How often stored clicks are counted into the conversion rollups (off the click path; a report counts
    # what waits first, so it is always exact).
    click_rollup_seconds: float = 1.0
    # The live feed (issue 37): how often each worker reads what was stored for the feeds it serves, and how
    # often an idle stream sends a heartbeat comment (proxies close connections that stay silent).
    feed_poll_seconds: float = 1.0
    feed_heartbeat_seconds: float = 15.0
    # On PostgreSQL, how old an event is before the feed shows it (storage.feed.EVENT_SETTLE_SECONDS): a batch of
    # events taken at one moment may commit after one taken later, and the feed reads events by their time.
    feed_event_settle_seconds: float = 5.0
    # Longest time an /api/ request may take to arrive and be answered (408 beyond).
    request_timeout_seconds: float = 30.0
    # Longest time a request's headers may take to arrive, from its first byte (408 and closed beyond).
    header_timeout_seconds: float = 10.0
    # Processes serving the port (SO_REUSEPORT); more than 1 uses more cores.
    workers: int = 1
    # Forwarding: deliveries in flight per process, tries before "dead", first retry delay, request timeout.
    delivery_concurrency: int = 16
    delivery_max_tries: int = 8
    delivery_backoff_seconds: float = 1.0
    delivery_timeout_seconds: float = 10.0
    # The export job: S3 (any S3-compatible endpoint) when a bucket is set, else a local folder; an empty
    # folder means "exports" beside the database file. Runs at start, then every interval, and on `linksvc export`.
    export_dir: str = ""
    export_s3_endpoint: str = ""
    export_s3_bucket: str = ""
    export_s3_prefix: str = ""
    export_s3_region: str = ""
    export_s3_access_key_id: str = ""
    export_s3_secret_access_key: str = field(default="", repr=False)
    export_interval_seconds: float = 300.0
    # The raw clicks too (linksvc.forwarding.click_export), to the same target, by the same job and command.
    export_clicks: bool = False
    # Guesses: after this many failed admin-token, API-key or sign-in attempts of one kind from one client
    # address within the window, further attempts of that kind from it answer 429 until the window passes.
    auth_failure_limit: int = 30
    auth_failure_window_seconds: int = 600
    # Password-protected links: how long the cookie a right password sets spares the browser the question.
    link_password_cookie_seconds: int = 43_200
    # Proxies whose X-Forwarded-For is believed: comma-separated IPs or CIDR networks; empty: the TCP peer is
    # the client.
    trusted_proxies: str = ""
    # A MaxMind, DB-IP or IPinfo .mmdb file for the region and city of clicks (and their country where it has
    # one); empty: countries from the registries' data the iptocc package ships (linksvc.rules.geo).
    geo_mmdb: str = ""
    # How often seed, export and migrations write a progress line when stderr is not a terminal.
    progress_seconds: float = 5.0
    # Custom domains: the hosts every account shares besides the public URL's (comma list); how the verification
    # fetch reaches a domain: its scheme, a host:port to connect to instead of resolving the domain (the Host
    # header stays the domain; tests reach 127.0.0.1 so), and its timeout.
    shared_hosts: str = "localhost,127.0.0.1"
    domain_verify_scheme: str = "https"
    domain_verify_connect: str = ""
    domain_verify_timeout_seconds: float = 5.0
    # Email (linksvc.mail): the SMTP server (smtp:// STARTTLS, smtps:// TLS, smtp+insecure:// none; empty: no
    # mail, links are shown to pass on), the From of every letter (empty: linksvc <no-reply@public host>), a PEM
    # bundle of the authorities its certificate may come from (empty: the system's), the time a letter may take.
    smtp_url: str = field(default="", repr=False)
    smtp_from: str = ""
    smtp_ca_file: str = ""
    smtp_timeout_seconds: float = 10.0

    # Whether public_url was made from host and port (LINKSVC_PUBLIC_URL not set): it follows them then.
    public_url_follows: bool = field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.public_url:
            object.__setattr__(self, "public_url", listening_url(self.host, self.port))
            object.__setattr__(self, "public_url_follows", True)

    def __repr__(self) -> str:
        return masked_repr(self)

    def with_overrides(self, **changes: object) -> Settings:
        """These settings with the given values (None: unchanged); a public URL made from host and port is made
        again from the new ones."""
        given: dict[str, object] = {k: v for k, v in changes.items() if v is not None}
        if self.public_url_follows:
            given.setdefault("public_url", "")
        return replace(self, **given)  # type: ignore[arg-type]

    @property
    def store_name(self) -> str:
        """Where the data is, for logs: the database URL without its password, or the SQLite file."""
        return mask_url_credentials(self.database_url) if self.database_url else self.db_path

    @property
    def mail_server(self) -> mail.Server | None:
        """The SMTP server letters go through (None: mail is off)."""
        return mail.server_of(self.smtp_url, self.smtp_ca_file, self.smtp_timeout_seconds)

    @property
    def mail_sender(self) -> str:
        """The ``From`` of every letter."""
        return mail.sender_of(self.smtp_from, URL(self.public_url).host or "localhost")

    def resolved_admin_token(self) -> Settings:
        if self.admin_token:
            return self
        return replace(self, admin_token=secrets.token_urlsafe(32))


WILDCARD_HOSTS = {"", "0.0.0.0", "::", "[::]"}


def listening_url(host: str, port: int) -> str:
    """``http://host:port``, the address of a service listening there: the loopback address for a wildcard host
    (every address: none of them is more the service's than another), an IPv6 address in brackets."""
    if host in WILDCARD_HOSTS:
        host = "127.0.0.1"
    elif ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"


def check_port(name: str, port: int, given: str | None = None) -> None:
    """A port to listen on: 0 (the system chooses one) to 65535; ``given``: the value as written, to quote."""
    if not 0 <= port <= 65535:
        raise SettingsError(f"{name} must be a port number (0-65535; 0: any free port), got {given or port}")


ZERO_ALLOWED = {"port", "database_statement_cache"}  # integers for which 0 means something (any port; none kept)

# Each setting: environment variable, attribute, parser. The README table lists the same names.
ENV_NAMES: dict[str, str] = {
    "LINKSVC_HOST": "host",
    "LINKSVC_PORT": "port",
    "LINKSVC_DB": "db_path",
    "LINKSVC_DATABASE_URL": "database_url",
    "LINKSVC_DATABASE_POOL_SIZE": "database_pool_size",
    "LINKSVC_DATABASE_LISTEN_URL": "database_listen_url",
    "LINKSVC_DATABASE_STATEMENT_CACHE": "database_statement_cache",
    "LINKSVC_ADMIN_TOKEN": "admin_token",
    "LINKSVC_TOKEN_TTL_SECONDS": "token_ttl_seconds",
    "LINKSVC_MAX_BODY_BYTES": "max_body_bytes",
    "LINKSVC_MAX_BULK_BODY_BYTES": "max_bulk_body_bytes",
    "LINKSVC_MAX_IMPORT_BODY_BYTES": "max_import_body_bytes",
    "LINKSVC_LOAD_DEMO": "load_demo",
    "LINKSVC_DEMO_FILE": "demo_file",
    "LINKSVC_LOG_LEVEL": "log_level",
    "LINKSVC_LOG_FORMAT": "log_format",
    "LINKSVC_ALLOW_PRIVATE_DESTINATIONS": "allow_private_destinations",
    "LINKSVC_DB_SYNCHRONOUS": "db_synchronous",
    "LINKSVC_DB_CACHE_MB": "db_cache_mb",
    "LINKSVC_PUBLIC_URL": "public_url",
    "LINKSVC_SERVICE_LABEL": "service_label",
    "LINKSVC_CLICK_FLUSH_SECONDS": "click_flush_seconds",
    "LINKSVC_CLICK_ROLLUP_SECONDS": "click_rollup_seconds",
    "LINKSVC_FEED_POLL_SECONDS": "feed_poll_seconds",
    "LINKSVC_FEED_HEARTBEAT_SECONDS": "feed_heartbeat_seconds",
    "LINKSVC_FEED_EVENT_SETTLE_SECONDS": "feed_event_settle_seconds",
    "LINKSVC_REQUEST_TIMEOUT_SECONDS": "request_timeout_seconds",
    "LINKSVC_HEADER_TIMEOUT_SECONDS": "header_timeout_seconds",
    "LINKSVC_WORKERS": "workers",
    "LINKSVC_DELIVERY_CONCURRENCY": "delivery_concurrency",
    "LINKSVC_DELIVERY_MAX_TRIES": "delivery_max_tries",
    "LINKSVC_DELIVERY_BACKOFF_SECONDS": "delivery_backoff_seconds",
    "LINKSVC_DELIVERY_TIMEOUT_SECONDS": "delivery_timeout_seconds",
    "LINKSVC_EXPORT_DIR": "export_dir",
    "LINKSVC_EXPORT_S3_ENDPOINT": "export_s3_endpoint",
    "LINKSVC_EXPORT_S3_BUCKET": "export_s3_bucket",
    "LINKSVC_EXPORT_S3_PREFIX": "export_s3_prefix",
    "LINKSVC_EXPORT_S3_REGION": "export_s3_region",
    "LINKSVC_EXPORT_S3_ACCESS_KEY_ID": "export_s3_access_key_id",
    "LINKSVC_EXPORT_S3_SECRET_ACCESS_KEY": "export_s3_secret_access_key",
    "LINKSVC_EXPORT_INTERVAL_SECONDS": "export_interval_seconds",
    "LINKSVC_EXPORT_CLICKS": "export_clicks",
    "LINKSVC_AUTH_FAILURE_LIMIT": "auth_failure_limit",
    "LINKSVC_AUTH_FAILURE_WINDOW_SECONDS": "auth_failure_window_seconds",
    "LINKSVC_LINK_PASSWORD_COOKIE_SECONDS": "link_password_cookie_seconds",
    "LINKSVC_TRUSTED_PROXIES": "trusted_proxies",
    "LINKSVC_GEO_MMDB": "geo_mmdb",
    "LINKSVC_PROGRESS_SECONDS": "progress_seconds",
    "LINKSVC_SHARED_HOSTS": "shared_hosts",
    "LINKSVC_DOMAIN_VERIFY_SCHEME": "domain_verify_scheme",
    "LINKSVC_DOMAIN_VERIFY_CONNECT": "domain_verify_connect",
    "LINKSVC_DOMAIN_VERIFY_TIMEOUT_SECONDS": "domain_verify_timeout_seconds",
    "LINKSVC_SMTP_URL": "smtp_url",
    "LINKSVC_SMTP_FROM": "smtp_from",
    "LINKSVC_SMTP_CA_FILE": "smtp_ca_file",
    "LINKSVC_SMTP_TIMEOUT_SECONDS": "smtp_timeout_seconds",
}

_CHOICES = {
    "log_level": {"DEBUG", "INFO", "WARNING", "ERROR"},
    "log_format": {"json", "text"},
    "db_synchronous": {"NORMAL", "FULL"},
}


def _parse(name: str, attr: str, raw: str, kind: type) -> object:
    if kind is bool:
        lowered = raw.strip().lower()
        if lowered in {"1", "true", "yes", "on"}:
            return True
        if lowered in {"0", "false", "no", "off", ""}:
            return False
        raise SettingsError(f"{name} must be 1/0, true/false, yes/no or on/off, got {raw!r}")
    if kind is float:
        try:
            number = float(raw)
        except ValueError:
            raise SettingsError(f"{name} must be a number, got {raw!r}") from None
        if not 0 < number <= 3600:
            raise SettingsError(f"{name} must be between 0 and 3600 seconds, got {raw!r}")
        return number
    if kind is int:
        try:
            value = int(raw)
        except ValueError:
            what = "a port number (0-65535; 0: any free port)" if attr == "port" else "an integer"
            raise SettingsError(f"{name} must be {what}, got {raw!r}") from None
        if attr == "port":
            check_port(name, value, repr(raw))
        if value < 0 or (value == 0 and attr not in ZERO_ALLOWED):
            raise SettingsError(f"{name} must be positive, got {raw!r}")
        if attr == "workers" and value > MAX_WORKERS:
            raise SettingsError(f"{name} must be at most {MAX_WORKERS}, got {raw!r}")
        return value
    if attr == "public_url":
        if not _base_url(raw):
            raise SettingsError(f"{name} must be an http(s) base URL with a host and no user, query or fragment "
                                f"(https://links.example.com), got {mask_url_credentials(raw)!r}")
        return raw.rstrip("/")
    if attr in ("database_url", "database_listen_url"):
        check_database_url(name, raw.strip())
        return raw.strip()
    if attr == "trusted_proxies":
        try:
            parse_networks(raw)
        except ValueError as exc:
            raise SettingsError(f"{name} must be comma-separated IP addresses or CIDR networks, got {raw!r}: "
                                f"{exc}") from None
        return raw.strip()
    if attr == "geo_mmdb" and raw.strip():
        problem = check_mmdb(raw.strip())
        if problem is not None:
            raise SettingsError(f"{name} must be a readable .mmdb file, got {raw!r}: {problem}")
        return raw.strip()
    if attr == "domain_verify_scheme":
        if raw.strip().lower() not in ("http", "https"):
            raise SettingsError(f"{name} must be http or https, got {raw!r}")
        return raw.strip().lower()
    if attr == "domain_verify_connect" and raw.strip():
        host, colon, port = raw.strip().rpartition(":")
        if not colon or not host or not port.isdigit() or not 0 < int(port) <= 65535:
            raise SettingsError(f"{name} must be host:port, got {raw!r}")
        return raw.strip()
    if attr == "smtp_url":
        try:
            mail.server_of(raw)
        except mail.MailSettingsError as exc:
            raise SettingsError(f"{name} {exc}") from None
        return raw.strip()
    if attr == "smtp_from":
        try:
            mail.sender_of(raw, "example.com")
        except mail.MailSettingsError as exc:
            raise SettingsError(f"{name} {exc}") from None
        return raw.strip()
    if attr == "smtp_ca_file" and raw.strip() and not os.path.isfile(raw.strip()):
        raise SettingsError(f"{name} must be a readable PEM file, got {raw!r}")
    if attr in _CHOICES:
        value_s = raw.strip().upper() if attr != "log_format" else raw.strip().lower()
        if value_s not in _CHOICES[attr]:
            raise SettingsError(f"{name} must be one of {sorted(_CHOICES[attr])}, got {raw!r}")
        return value_s
    return raw


_HOST_NAME = re.compile(r"[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?\.?", re.IGNORECASE)


def _base_url(raw: str) -> bool:
    """Whether ``raw`` can be the address short links are published under: ``http(s)://host[:port][/path]``, the
    host a DNS name or an IP address, nothing else (``http://`` alone, ``http://:8080``, a port past 65535 or a
    space in the host would make every short link a broken address, or stop the start with a traceback)."""
    if not raw.startswith(("http://", "https://")) or "?" in raw or "#" in raw:
        return False
    try:
        url = URL(raw)
        host, port = url.raw_host or "", url.port
    except (ValueError, TypeError, UnicodeError):
        return False
    if url.raw_user is not None or url.raw_password is not None or not port or not host:
        return False
    return bool(_HOST_NAME.fullmatch(host)) or ":" in host and raw.split("//", 1)[1].startswith("[")


def check_database_url(name: str, url: str) -> None:
    """A database URL is empty (SQLite at ``LINKSVC_DB``), ``postgresql://...`` or ``sqlite:///path``."""
    if url and not url.startswith(("postgresql://", "postgres://", "sqlite:///")):
        raise SettingsError(f"{name} must be postgresql://user@host:port/database or sqlite:///path, "
                            f"got {mask_url_credentials(url)!r}")


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Build settings from the environment (``os.environ`` by default)."""
    env = os.environ if environ is None else environ
    kinds = {f.name: f.type for f in fields(Settings)}
    values: dict[str, object] = {}
    for name, attr in ENV_NAMES.items():
        if name in env:
            kind = {"int": int, "bool": bool, "float": float}.get(str(kinds[attr]), str)
            values[attr] = _parse(name, attr, env[name], kind)
    return Settings(**values)  # type: ignore[arg-type]
