"""load_settings: every LINKSVC_* variable parsed; a bad value raises SettingsError naming the variable."""

from __future__ import annotations

import pytest

from linksvc.settings import ENV_NAMES, Settings, SettingsError, load_settings

GOOD: list[tuple[str, str, str, object]] = [
    ("LINKSVC_HOST", "0.0.0.0", "host", "0.0.0.0"),
    ("LINKSVC_PORT", "9090", "port", 9090),
    ("LINKSVC_PORT", "0", "port", 0),  # 0: any free port
    ("LINKSVC_PORT", "65535", "port", 65535),
    ("LINKSVC_DB", "/var/lib/linksvc/db.sqlite", "db_path", "/var/lib/linksvc/db.sqlite"),
    ("LINKSVC_DATABASE_URL", "postgresql://linksvc@db.internal:5432/linksvc", "database_url",
     "postgresql://linksvc@db.internal:5432/linksvc"),
    ("LINKSVC_DATABASE_POOL_SIZE", "20", "database_pool_size", 20),
    ("LINKSVC_DATABASE_LISTEN_URL", "postgresql://linksvc@db-primary:5432/linksvc", "database_listen_url",
     "postgresql://linksvc@db-primary:5432/linksvc"),
    ("LINKSVC_DATABASE_STATEMENT_CACHE", "0", "database_statement_cache", 0),
    ("LINKSVC_ADMIN_TOKEN", "s3cret-admin", "admin_token", "s3cret-admin"),
    ("LINKSVC_TOKEN_TTL_SECONDS", "60", "token_ttl_seconds", 60),
    ("LINKSVC_MAX_BODY_BYTES", "2048", "max_body_bytes", 2048),
    ("LINKSVC_MAX_BULK_BODY_BYTES", "4096", "max_bulk_body_bytes", 4096),
    ("LINKSVC_MAX_IMPORT_BODY_BYTES", "8192", "max_import_body_bytes", 8192),
    ("LINKSVC_LOAD_DEMO", "0", "load_demo", False),
    ("LINKSVC_LOAD_DEMO", "no", "load_demo", False),
    ("LINKSVC_LOAD_DEMO", "Off", "load_demo", False),
    ("LINKSVC_LOAD_DEMO", "false", "load_demo", False),
    ("LINKSVC_DEMO_FILE", "/tmp/demo.json", "demo_file", "/tmp/demo.json"),
    ("LINKSVC_LOG_LEVEL", "debug", "log_level", "DEBUG"),
    ("LINKSVC_LOG_LEVEL", " WARNING ", "log_level", "WARNING"),
    ("LINKSVC_LOG_FORMAT", "TEXT", "log_format", "text"),
    ("LINKSVC_ALLOW_PRIVATE_DESTINATIONS", "1", "allow_private_destinations", True),
    ("LINKSVC_ALLOW_PRIVATE_DESTINATIONS", "TRUE", "allow_private_destinations", True),
    ("LINKSVC_ALLOW_PRIVATE_DESTINATIONS", " yes ", "allow_private_destinations", True),
    ("LINKSVC_ALLOW_PRIVATE_DESTINATIONS", "on", "allow_private_destinations", True),
    ("LINKSVC_DB_SYNCHRONOUS", "normal", "db_synchronous", "NORMAL"),
    ("LINKSVC_DB_SYNCHRONOUS", "FULL", "db_synchronous", "FULL"),
    ("LINKSVC_DB_CACHE_MB", "8", "db_cache_mb", 8),
    ("LINKSVC_PUBLIC_URL", "https://go.example.com/", "public_url", "https://go.example.com"),
    ("LINKSVC_SERVICE_LABEL", "democoffee", "service_label", "democoffee"),
    ("LINKSVC_CLICK_FLUSH_SECONDS", "2.5", "click_flush_seconds", 2.5),
    ("LINKSVC_CLICK_ROLLUP_SECONDS", "10", "click_rollup_seconds", 10.0),
    ("LINKSVC_FEED_POLL_SECONDS", "2", "feed_poll_seconds", 2.0),
    ("LINKSVC_FEED_EVENT_SETTLE_SECONDS", "1.5", "feed_event_settle_seconds", 1.5),
    ("LINKSVC_FEED_HEARTBEAT_SECONDS", "30", "feed_heartbeat_seconds", 30.0),
    ("LINKSVC_REQUEST_TIMEOUT_SECONDS", "5", "request_timeout_seconds", 5.0),
    ("LINKSVC_HEADER_TIMEOUT_SECONDS", "2.5", "header_timeout_seconds", 2.5),
    ("LINKSVC_WORKERS", "2", "workers", 2),
    ("LINKSVC_WORKERS", "64", "workers", 64),
    ("LINKSVC_DELIVERY_CONCURRENCY", "4", "delivery_concurrency", 4),
    ("LINKSVC_DELIVERY_MAX_TRIES", "3", "delivery_max_tries", 3),
    ("LINKSVC_DELIVERY_BACKOFF_SECONDS", "0.05", "delivery_backoff_seconds", 0.05),
    ("LINKSVC_DELIVERY_TIMEOUT_SECONDS", "2.5", "delivery_timeout_seconds", 2.5),
    ("LINKSVC_EXPORT_DIR", "/var/lib/linksvc/exports", "export_dir", "/var/lib/linksvc/exports"),
    ("LINKSVC_EXPORT_S3_ENDPOINT", "https://s3.example.com", "export_s3_endpoint", "https://s3.example.com"),
    ("LINKSVC_EXPORT_S3_BUCKET", "events", "export_s3_bucket", "events"),
    ("LINKSVC_EXPORT_S3_PREFIX", "linksvc/v1", "export_s3_prefix", "linksvc/v1"),
    ("LINKSVC_EXPORT_S3_REGION", "eu-west-1", "export_s3_region", "eu-west-1"),
    ("LINKSVC_EXPORT_S3_ACCESS_KEY_ID", "AKIDEXAMPLE", "export_s3_access_key_id", "AKIDEXAMPLE"),
    ("LINKSVC_EXPORT_S3_SECRET_ACCESS_KEY", "s3cret", "export_s3_secret_access_key", "s3cret"),
    ("LINKSVC_EXPORT_INTERVAL_SECONDS", "60", "export_interval_seconds", 60.0),
    ("LINKSVC_EXPORT_CLICKS", "1", "export_clicks", True),
    ("LINKSVC_AUTH_FAILURE_LIMIT", "5", "auth_failure_limit", 5),
    ("LINKSVC_AUTH_FAILURE_WINDOW_SECONDS", "3600", "auth_failure_window_seconds", 3600),
    ("LINKSVC_LINK_PASSWORD_COOKIE_SECONDS", "3600", "link_password_cookie_seconds", 3600),
    ("LINKSVC_TRUSTED_PROXIES", "", "trusted_proxies", ""),
    ("LINKSVC_TRUSTED_PROXIES", " 10.0.0.0/8, 192.168.1.7,2001:db8::/32 ", "trusted_proxies",
     "10.0.0.0/8, 192.168.1.7,2001:db8::/32"),
    ("LINKSVC_GEO_MMDB", "", "geo_mmdb", ""),
    ("LINKSVC_PROGRESS_SECONDS", "30", "progress_seconds", 30.0),
    ("LINKSVC_PROGRESS_SECONDS", "0.5", "progress_seconds", 0.5),
    ("LINKSVC_SHARED_HOSTS", "go.example.com,localhost", "shared_hosts", "go.example.com,localhost"),
    ("LINKSVC_DOMAIN_VERIFY_SCHEME", "HTTP", "domain_verify_scheme", "http"),
    ("LINKSVC_DOMAIN_VERIFY_CONNECT", "127.0.0.1:8443", "domain_verify_connect", "127.0.0.1:8443"),
    ("LINKSVC_DOMAIN_VERIFY_TIMEOUT_SECONDS", "2", "domain_verify_timeout_seconds", 2.0),
    ("LINKSVC_SMTP_URL", "smtp://links%40example.com:s3cret@mail.example.com", "smtp_url",
     "smtp://links%40example.com:s3cret@mail.example.com"),
    ("LINKSVC_SMTP_FROM", "Links <no-reply@example.com>", "smtp_from", "Links <no-reply@example.com>"),
    ("LINKSVC_SMTP_CA_FILE", "/etc/hostname", "smtp_ca_file", "/etc/hostname"),
    ("LINKSVC_SMTP_TIMEOUT_SECONDS", "30", "smtp_timeout_seconds", 30.0),
]

BAD: list[tuple[str, str]] = [
    ("LINKSVC_PORT", "http"),
    ("LINKSVC_PORT", "65536"),
    ("LINKSVC_PORT", "-1"),
    ("LINKSVC_PORT", "80.5"),
    ("LINKSVC_TOKEN_TTL_SECONDS", "0"),
    ("LINKSVC_TOKEN_TTL_SECONDS", "-60"),
    ("LINKSVC_TOKEN_TTL_SECONDS", "1h"),
    ("LINKSVC_MAX_BODY_BYTES", "1MiB"),
    ("LINKSVC_MAX_BODY_BYTES", "0"),
    ("LINKSVC_MAX_BULK_BODY_BYTES", ""),
    ("LINKSVC_LOAD_DEMO", "maybe"),
    ("LINKSVC_LOAD_DEMO", "2"),
    ("LINKSVC_ALLOW_PRIVATE_DESTINATIONS", "enabled"),
    ("LINKSVC_LOG_LEVEL", "verbose"),
    ("LINKSVC_LOG_FORMAT", "xml"),
    ("LINKSVC_DB_SYNCHRONOUS", "OFF"),
    ("LINKSVC_PUBLIC_URL", "go.example.com"),
    ("LINKSVC_PUBLIC_URL", "https://go.example.com/?x=1"),
    # issue 32, second look: no host, a port that is none, a space (short links "http:/code", or a
    # traceback at start)
    ("LINKSVC_PUBLIC_URL", "http://"),
    ("LINKSVC_PUBLIC_URL", "http:///links"),
    ("LINKSVC_PUBLIC_URL", "http://:8080"),
    ("LINKSVC_PUBLIC_URL", "http://go.example.com:99999"),
    ("LINKSVC_PUBLIC_URL", "http://go.example.com:0"),
    ("LINKSVC_PUBLIC_URL", "http://[::1"),
    ("LINKSVC_PUBLIC_URL", "http://go example.com"),
    ("LINKSVC_CLICK_FLUSH_SECONDS", "soon"),
    ("LINKSVC_CLICK_FLUSH_SECONDS", "0"),
    ("LINKSVC_REQUEST_TIMEOUT_SECONDS", "0"),
    ("LINKSVC_HEADER_TIMEOUT_SECONDS", "soon"),
    ("LINKSVC_DB_CACHE_MB", "0"),
    ("LINKSVC_WORKERS", "0"),
    ("LINKSVC_WORKERS", "65"),
    ("LINKSVC_WORKERS", "two"),
    ("LINKSVC_DELIVERY_CONCURRENCY", "0"),
    ("LINKSVC_DELIVERY_MAX_TRIES", "-1"),
    ("LINKSVC_DELIVERY_BACKOFF_SECONDS", "0"),
    ("LINKSVC_DELIVERY_TIMEOUT_SECONDS", "forever"),
    ("LINKSVC_EXPORT_INTERVAL_SECONDS", "0"),
    ("LINKSVC_EXPORT_INTERVAL_SECONDS", "5m"),
    ("LINKSVC_AUTH_FAILURE_LIMIT", "0"),
    ("LINKSVC_AUTH_FAILURE_LIMIT", "thirty"),
    ("LINKSVC_AUTH_FAILURE_WINDOW_SECONDS", "10m"),
    ("LINKSVC_AUTH_FAILURE_WINDOW_SECONDS", "-600"),
    ("LINKSVC_LINK_PASSWORD_COOKIE_SECONDS", "0"),
    ("LINKSVC_LINK_PASSWORD_COOKIE_SECONDS", "a day"),
    ("LINKSVC_TRUSTED_PROXIES", "proxy.internal"),
    ("LINKSVC_TRUSTED_PROXIES", "10.0.0.0/8, 10.0.0.0/33"),
    ("LINKSVC_GEO_MMDB", "/nonexistent/GeoLite2-City.mmdb"),
    ("LINKSVC_GEO_MMDB", "/etc/hostname"),
    ("LINKSVC_PROGRESS_SECONDS", "0"),
    ("LINKSVC_PROGRESS_SECONDS", "often"),
    ("LINKSVC_DOMAIN_VERIFY_SCHEME", "ftp"),
    ("LINKSVC_DOMAIN_VERIFY_CONNECT", "127.0.0.1"),
    ("LINKSVC_DOMAIN_VERIFY_TIMEOUT_SECONDS", "0"),
    ("LINKSVC_SMTP_URL", "mail.example.com:587"),
    ("LINKSVC_SMTP_URL", "http://mail.example.com"),
    ("LINKSVC_SMTP_URL", "smtp://user@mail.example.com"),
    ("LINKSVC_SMTP_URL", "smtp://mail.example.com:99999"),
    ("LINKSVC_SMTP_FROM", "no-reply"),
    ("LINKSVC_SMTP_FROM", "a@example.com\r\nBcc: b@example.com"),
    ("LINKSVC_SMTP_CA_FILE", "/nonexistent/ca.pem"),
    ("LINKSVC_SMTP_TIMEOUT_SECONDS", "0"),
]


def test_defaults_without_variables() -> None:
    assert load_settings({}) == Settings()
    assert load_settings({"PATH": "/bin", "LINKSVC": "x"}) == Settings()


def test_the_table_covers_every_variable() -> None:
    assert {name for name, _, _, _ in GOOD} == set(ENV_NAMES)


@pytest.mark.parametrize(("name", "raw", "attr", "value"), GOOD, ids=[f"{n}={r}" for n, r, _, _ in GOOD])
def test_each_variable_is_parsed(name: str, raw: str, attr: str, value: object) -> None:
    settings = load_settings({name: raw})
    assert getattr(settings, attr) == value
    # Only that setting moved (and the public URL, when unset, with the host and the port it is made of).
    moves = {attr, "public_url"} if attr in ("host", "port") else {attr}
    others = {a: getattr(Settings(), a) for a in ENV_NAMES.values() if a not in moves}
    assert {a: getattr(settings, a) for a in others} == others


@pytest.mark.parametrize(("env", "url"), [
    ({}, "http://127.0.0.1:8080"), ({"LINKSVC_PORT": "9090"}, "http://127.0.0.1:9090"),
    ({"LINKSVC_HOST": "10.0.0.5", "LINKSVC_PORT": "81"}, "http://10.0.0.5:81"),
    ({"LINKSVC_HOST": "0.0.0.0"}, "http://127.0.0.1:8080"), ({"LINKSVC_HOST": "::1"}, "http://[::1]:8080"),
    ({"LINKSVC_PORT": "9090", "LINKSVC_PUBLIC_URL": "https://go.example.com"}, "https://go.example.com"),
])
def test_the_public_url_follows_host_and_port_unless_set(env: dict[str, str], url: str) -> None:
    settings = load_settings(env)
    assert settings.public_url == url
    moved = settings.with_overrides(port=7000, host=None)
    assert moved.public_url == (url if "LINKSVC_PUBLIC_URL" in env else url.rsplit(":", 1)[0] + ":7000")


def test_all_variables_together() -> None:
    env = {name: raw for name, raw, _, _ in GOOD}  # the last value of each name wins in the dict
    settings = load_settings(env)
    for name, raw, attr, value in GOOD:
        if env[name] == raw:
            assert getattr(settings, attr) == value, name


@pytest.mark.parametrize(("name", "raw"), BAD, ids=[f"{n}={r!r}" for n, r in BAD])
def test_a_bad_value_names_the_variable(name: str, raw: str) -> None:
    with pytest.raises(SettingsError) as refused:
        load_settings({name: raw})
    assert name in str(refused.value)
    assert repr(raw) in str(refused.value)


def test_an_smtp_url_is_refused_without_its_password() -> None:
    """Credentials over a connection without TLS are refused, and the message does not repeat them."""
    for raw in ("smtp+insecure://mailer:hunter2-secret@relay.internal", "ftp://mailer:hunter2-secret@relay"):
        with pytest.raises(SettingsError) as refused:
            load_settings({"LINKSVC_SMTP_URL": raw})
        assert "LINKSVC_SMTP_URL" in str(refused.value)
        assert "hunter2-secret" not in str(refused.value)
    settings = load_settings({"LINKSVC_SMTP_URL": "smtps://mailer:hunter2-secret@mail.example.com"})
    assert "hunter2-secret" not in repr(settings) and "hunter2-secret" not in repr(settings.mail_server)


def test_a_public_url_with_a_user_is_refused_without_its_password() -> None:
    """Short links published as http://user:secret@host/code would hand the password to everyone who gets one."""
    with pytest.raises(SettingsError) as refused:
        load_settings({"LINKSVC_PUBLIC_URL": "https://user:secret@go.example.com"})
    assert "LINKSVC_PUBLIC_URL" in str(refused.value) and "secret" not in str(refused.value)


def test_the_first_bad_variable_is_named_even_among_good_ones() -> None:
    with pytest.raises(SettingsError, match="LINKSVC_TOKEN_TTL_SECONDS"):
        load_settings({"LINKSVC_PORT": "8000", "LINKSVC_TOKEN_TTL_SECONDS": "soon", "LINKSVC_LOG_LEVEL": "INFO"})


def test_settings_are_frozen() -> None:
    settings = load_settings({"LINKSVC_PORT": "8000"})
    with pytest.raises(AttributeError):
        settings.port = 1  # type: ignore[misc]
    assert settings.with_overrides(port=9000, host=None).port == 9000
    assert settings.port == 8000
