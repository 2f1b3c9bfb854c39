"""Meta's Conversions API rules that are not the request's shape: a phone as Meta matches it, whether an
event is too old to send, which ``action_source`` an event can honestly carry, and what Meta's answer means.

Phones (``ph``) are hashed as E.164 digits, country code first, no ``+``:

    "+57 300 123 4567"                -> 573001234567   a leading + is international: its digits
    "0057 300 123 4567"               -> 573001234567   so is a leading 00 (the international prefix)
    "3001234567", default "57"        -> 573001234567   national: the default country code is put first
    "0300 1234567", default "57"      -> 573001234567   ... after the national trunk 0 (Italy, 39, keeps it)
    "573001234567", default "57"      -> 573001234567   already begins with the default code and has more
                                                        than 10 digits (longer than a national number)
    "3001234567", no default          -> 3001234567     as stored: nothing says which country
    more than 15 digits, or under 7   -> not sent       not a phone number E.164 allows

Without a numbering-plan table the "already international" guess can be wrong for countries whose national
numbers may begin with their own country code (Brazil's area code 55) or are short (Denmark); a phone stored
with its ``+`` is never guessed at.

Answers (:func:`judge`): Meta answers a refused request with an ``error`` object and a 200 with fewer
``events_received`` than sent when it took only some; neither is ever delivered. Rate limits and transient
errors (codes 1, 2, 4, 17, 32, 341, 368, 613, 80004, ``is_transient``) and 408, 429, 5xx are retried; an
invalid or expired token (190) and the rest fail, with Meta's own message and codes.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from linksvc.forwarding.outgoing import Outgoing, unix_micros
from linksvc.forwarding.verdicts import DELIVERED, FAILED, RETRY, Verdict, by_status, excerpt, json_body
from linksvc.resources.types import phone_digits

MAX_AGE = timedelta(days=7)
NATIONAL_MAX_DIGITS = 10
E164_DIGITS = range(7, 16)
TRUNK_ZERO_KEPT = frozenset({"39"})  # Italian numbers keep their leading 0 after the country code
RETRY_CODES = frozenset({1, 2, 4, 17, 32, 341, 368, 613, 80004})
TOKEN_CODE = 190
WEBSITE = "website"
NO_CLICK_SOURCE = "other"
STORE_SOURCE = "physical_store"


def e164_digits(phone: Any, default_country_code: str | None) -> str | None:
    """The phone's E.164 digits (no +), or None when it cannot be one (see the module's table)."""
    if not isinstance(phone, str):
        return None
    text = phone.strip()
    digits = phone_digits(text) or ""
    code = phone_digits(default_country_code) if default_country_code else None
    if text.startswith("+"):
        number = digits
    elif digits.startswith("00"):
        number = digits[2:]
    elif code is None or (digits.startswith(code) and len(digits) > NATIONAL_MAX_DIGITS):
        number = digits
    elif digits.startswith("0") and code not in TRUNK_ZERO_KEPT:
        number = code + digits[1:]
    else:
        number = code + digits
    return number if len(number) in E164_DIGITS else None


def too_old(event_time: str | datetime, now: datetime) -> bool:
    """More than 7 days before sending: Meta would refuse the whole request (exactly 7 days is accepted)."""
    return unix_micros(now) - unix_micros(event_time) > MAX_AGE.days * 86_400 * 1_000_000


def browser_of(click: dict[str, Any] | None) -> tuple[str, str] | None:
    """(client_user_agent, event_source_url) from the attributing click, when it was a person's browser
    landing on a web page; a bot's click or one without both says nothing about the buyer."""
    if not click or click.get("bot"):
        return None
    agent, url = click.get("user_agent"), click.get("destination_url")
    if not isinstance(agent, str) or not agent.strip() or not isinstance(url, str):
        return None
    if urlsplit(url.strip()).scheme.lower() not in ("http", "https"):
        return None
    return agent.strip(), url.strip()


def action_source(configured: str | None, browser: tuple[str, str] | None, store_id: Any) -> str:
    """The connection's ``action_source`` (website by default), unless the event cannot be a website event:
    Meta refuses a website event without a user agent and a page URL, and asks that ``action_source`` be
    accurate. Without the click: ``physical_store`` when a store recorded it, else ``other``."""
    source = configured or WEBSITE
    if source != WEBSITE or browser is not None:
        return source
    return STORE_SOURCE if store_id else NO_CLICK_SOURCE


# -- what Meta's answer means ----------------------------------------------------------------------------------


def events_sent(sent: Outgoing) -> int:
    payload = json_body(sent.body)
    data = payload.get("data") if isinstance(payload, dict) else None
    return len(data) if isinstance(data, list) else 1


def error_message(error: dict[str, Any]) -> str:
    """``(#100) Invalid parameter: title: text [code 100, subcode 2804019, fbtrace_id ...]``."""
    code = error.get("code")
    text = str(error.get("message") or "no message")
    if code is not None and not text.startswith("(#"):
        text = f"(#{code}) {text}"
    extra = [str(error[k]) for k in ("error_user_title", "error_user_msg") if error.get(k)]
    ids = [f"{label} {error[key]}" for label, key in (("code", "code"), ("subcode", "error_subcode"),
                                                      ("fbtrace_id", "fbtrace_id")) if error.get(key) is not None]
    return ": ".join([text, *extra]) + (f" [{', '.join(ids)}]" if ids else "")


def judge_error(status: int, error: dict[str, Any]) -> Verdict:
    code = error.get("code")
    message = error_message(error)
    if code == TOKEN_CODE:
        return Verdict(FAILED, f"{message}; the access token is invalid or expired: a person must put a new "
                               "system-user token in the connection's config, then retry the delivery")
    if code in RETRY_CODES or error.get("is_transient") is True or by_status(status).outcome == RETRY:
        return Verdict(RETRY, message)
    return Verdict(FAILED, message)


def judge(status: int, body: bytes, sent: Outgoing) -> Verdict:
    """Delivered only when Meta received every event sent; see the module's docstring."""
    answer = json_body(body)
    error = answer.get("error") if isinstance(answer, dict) else None
    if isinstance(error, dict):
        return judge_error(status, error)
    received = answer.get("events_received") if isinstance(answer, dict) else None
    if 200 <= status < 300 and not isinstance(received, int):
        # Meta always says how many events it received: this answer is someone else's (a proxy, a portal)
        return Verdict(RETRY, f"HTTP {status} without events_received: not an answer of the Conversions API")
    if not 200 <= status < 300 or not isinstance(received, int):
        return by_status(status, excerpt(body) if body else None)
    trace = f", fbtrace_id {answer['fbtrace_id']}" if answer.get("fbtrace_id") else ""
    expected = events_sent(sent)
    if received >= expected:
        return Verdict(DELIVERED, f"events_received {received}{trace}")
    messages = "; ".join(str(m) for m in answer.get("messages") or []) or "no message"
    return Verdict(FAILED, f"events_received {received} of {expected}: {messages}{trace}")
