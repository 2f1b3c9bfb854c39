"""Masking of secrets and URL credentials: what reads, logs, delivery errors and settings show."""

from __future__ import annotations

import logging
import sys
from typing import Any

import pytest
from yarl import URL

from linksvc.errors import InvalidField
from linksvc.forwarding.export import export_target
from linksvc.logs import JsonFormatter, TextFormatter
from linksvc.redaction import SECRET_MASK, mask_config, mask_url_credentials, redact_error, unmask_config
from linksvc.settings import Settings, SettingsError, load_settings

M = SECRET_MASK


@pytest.mark.parametrize(("text", "shown"), [
    ("https://user:pa55w0rd@hooks.example.com/x", f"https://{M}@hooks.example.com/x"),
    ("https://tok3n@hooks.example.com", f"https://{M}@hooks.example.com"),
    ("http://u:p@127.0.0.1:9/in?a=b@c", f"http://{M}@127.0.0.1:9/in?a=b@c"),  # an @ after the authority stays
    ("https://a@b@host/x", f"https://{M}@host/x"),  # up to the last @ of the authority, as yarl reads it
    ("https://us er:pw@host/", f"https://{M}@host/"),
    ("https://u:pa%40ss@host/x", f"https://{M}@host/x"),
    ("//u:p@host/x", f"//{M}@host/x"),
    ("see https://u:p@one.example and ftp://v:q@two.example/f", f"see https://{M}@one.example and ftp://{M}@two.example/f"),
    ("https://@host/x", "https://@host/x"),
    ("https://hooks.example.com/x?email=a@b.example", "https://hooks.example.com/x?email=a@b.example"),
    ("mailto:someone@example.com", "mailto:someone@example.com"),
    ("no url here", "no url here"),
    (f"https://{M}@host/x", f"https://{M}@host/x"),
])
def test_url_credentials_are_masked(text: str, shown: str) -> None:
    assert mask_url_credentials(text) == shown


@pytest.mark.parametrize("url", ["https://user:pa55w0rd@h.example/x", "https://a:b@pa55w0rd@h.example/",
                                 "http://pa55w0rd@h.example:81", "https://u:pa55w0rd@h.example?x#y@z"])
def test_what_yarl_would_send_as_credentials_is_never_shown(url: str) -> None:
    parsed = URL(url)
    shown = mask_url_credentials(url)
    assert "pa55w0rd" not in shown
    assert URL(shown).host == parsed.host and URL(shown).path == parsed.path


def test_a_config_is_masked_at_any_depth() -> None:
    config = {"endpoint_url": "https://u:p@h.example/x", "secret": "s3cr3t", "empty": "", "flag": True,
              "nested": {"urls": ["https://u:p@a.example", "plain"], "api_key": ["k1", "k2"]}}
    assert mask_config(config) == {
        "endpoint_url": f"https://{M}@h.example/x", "secret": M, "empty": "", "flag": True,
        "nested": {"urls": [f"https://{M}@a.example", "plain"], "api_key": [M, M]}}


def _round_trip(stored: dict[str, Any], edit: Any = None) -> Any:
    shown = mask_config(stored)
    return unmask_config(shown if edit is None else edit(shown), stored)


def test_the_masked_config_sent_back_is_the_stored_one() -> None:
    stored = {"endpoint_url": "https://u:p@h.example/x", "secret": "s", "list": ["see https://t@a.example/y"]}
    assert _round_trip(stored) == stored


@pytest.mark.parametrize(("edited", "kept"), [
    (f"https://{M}@h.example/z?v=1", "https://u:p@h.example/z?v=1"),
    (f"HTTPS://{M}@H.EXAMPLE/x", "HTTPS://u:p@H.EXAMPLE/x"),
    ("https://new:cred@other.example/x", "https://new:cred@other.example/x"),
    ("https://other.example/x", "https://other.example/x"),
])
def test_masked_credentials_are_kept_for_the_same_host(edited: str, kept: str) -> None:
    assert unmask_config({"endpoint_url": edited}, {"endpoint_url": "https://u:p@h.example/x"}) == {
        "endpoint_url": kept}


@pytest.mark.parametrize(("edited", "stored"), [
    (f"https://{M}@other.example/x", "https://u:p@h.example/x"),  # another host
    (f"https://{M}@h.example:8443/x", "https://u:p@h.example/x"),  # another port
    (f"http://{M}@h.example/x", "https://u:p@h.example/x"),  # another scheme
    (f"https://{M}@h.example/x", "https://h.example/x"),  # nothing stored to keep
    (f"see https://{M}@h.example/x", "https://u:p@h.example/x"),
])
def test_masked_credentials_never_go_to_another_place(edited: str, stored: str) -> None:
    with pytest.raises(InvalidField) as refused:
        unmask_config({"deep": [{"url": edited}]}, {"deep": [{"url": stored}]})
    assert refused.value.details["field"] == "config.deep[0].url"
    assert "u:p" not in str(refused.value.details)


def test_delivery_errors_lose_the_endpoint_credentials() -> None:
    url = "https://user:pa55%40w0rd@hooks.example.com/x"
    error = "InvalidURL: https://user:pa55%40w0rd@hooks.example.com/x; auth user:pa55@w0rd failed"
    redacted = redact_error(error, url)
    assert "pa55" not in redacted and "w0rd" not in redacted
    assert redact_error("HTTP 500", "https://u:p@h.example") == "HTTP 500"  # short parts are not hunted in text


def test_settings_and_export_targets_print_no_credentials() -> None:
    settings = Settings(export_s3_endpoint="https://AKIA:pa55w0rd@s3.example.com", export_s3_bucket="b",
                        public_url="https://u:pa55w0rd@go.example.com", admin_token="adm1n-t0ken-secret",
                        export_s3_secret_access_key="s3-secret-key")
    shown = repr(settings)
    assert "export_s3_endpoint='https://********@s3.example.com'" in shown
    assert not any(s in shown for s in ("pa55w0rd", "adm1n-t0ken-secret", "s3-secret-key"))
    target = export_target("", settings.export_s3_bucket, settings.export_s3_endpoint)
    assert "pa55w0rd" not in repr(target) and "pa55w0rd" not in target.shown
    assert "pa55w0rd" in target.identity  # the progress key is the real place, unchanged
    with pytest.raises(SettingsError) as refused:
        load_settings({"LINKSVC_PUBLIC_URL": "https://u:pa55w0rd@go.example.com?x"})
    assert "pa55w0rd" not in str(refused.value)


def test_log_lines_mask_url_credentials_also_in_tracebacks() -> None:
    try:
        raise ConnectionError("Could not connect to the endpoint URL: https://AKIA:pa55w0rd@s3.example.com/b")
    except ConnectionError:
        exc_info = sys.exc_info()
    record = logging.LogRecord("linksvc.export", logging.ERROR, __file__, 1, "export to %s failed",
                               ("s3:https://AKIA:pa55w0rd@s3.example.com/b/",), exc_info)
    for formatter in (JsonFormatter(), TextFormatter("%(levelname)s %(message)s")):
        line = formatter.format(record)
        assert "ConnectionError" in line and "s3.example.com" in line
        assert "pa55w0rd" not in line and "AKIA" not in line
