"""GA4's rules for names and parameters, applied before sending: the Measurement Protocol answers 2xx to
everything and drops what breaks them without a word.

Names (events and parameters) must match ``[A-Za-z][A-Za-z0-9_]{0,39}`` and must not be reserved
(https://developers.google.com/analytics/devguides/collection/protocol/ga4/sending-events,
https://support.google.com/analytics/answer/13316687). :func:`ga4_name` turns any text into such a name,
deterministically, so that retries and later events of the same type get the same name:

1. letters with accents lose them (NFKD), every run of other characters becomes one ``_``;
2. a name that does not start with a letter, is reserved or starts with a reserved prefix (compared without
   case) gets the prefix ``ls_``: the event is kept, under a name GA4 accepts and a person can recognise;
3. the result is cut to 40 characters.

Parameters: at most 25 per event; :func:`fit_params` keeps them in the order the builder wrote them (the
ones the service defines first), drops the rest, cuts text values to 100 characters (items' too) and keeps
numbers as numbers. Everything here is pure.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal
from typing import Any

MAX_NAME = 40
MAX_PARAMS = 25
MAX_TEXT = 100
PREFIX = "ls_"
NAME_RULE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,39}")
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_]+")

# Web and app streams together: a connection may send either. Compared lower-case.
RESERVED_EVENTS = frozenset({
    "ad_activeview", "ad_click", "ad_exposure", "ad_impression", "ad_query", "ad_reward", "adunit_exposure",
    "app_background", "app_clear_data", "app_exception", "app_install", "app_remove", "app_store_refund",
    "app_store_subscription_cancel", "app_store_subscription_convert", "app_store_subscription_renew",
    "app_update", "app_upgrade", "click", "dynamic_link_app_open", "dynamic_link_app_update",
    "dynamic_link_first_open", "error", "file_download", "firebase_campaign", "firebase_in_app_message_action",
    "firebase_in_app_message_dismiss", "firebase_in_app_message_impression", "first_open", "first_visit",
    "form_start", "form_submit", "in_app_purchase", "notification_dismiss", "notification_foreground",
    "notification_open", "notification_receive", "os_update", "page_view", "screen_view", "scroll",
    "session_start", "session_start_with_rollout", "user_engagement", "video_progress",
    "video_start", "view_complete", "view_search_results",
})
RESERVED_PARAMS = frozenset({"engagement_time_msec", "firebase_conversion", "gclid", "session_id",
                             "session_number"})
RESERVED_PREFIXES = ("_", "firebase_", "ga_", "google_", "gtag.", "query_id")


def is_reserved(name: str, reserved: frozenset[str] = RESERVED_EVENTS) -> bool:
    lowered = name.lower()
    return lowered in reserved or lowered.startswith(RESERVED_PREFIXES)


def ga4_name(text: str, reserved: frozenset[str] = RESERVED_EVENTS) -> str:
    """A valid, unreserved GA4 name for ``text``; a valid one that is not reserved is returned unchanged."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    name = _NOT_ALLOWED.sub("_", plain) or "unnamed"
    if not name[0].isascii() or not name[0].isalpha() or is_reserved(name, reserved):
        name = PREFIX + name
    return name[:MAX_NAME]


def param_value(value: Any) -> Any:
    """Text cut to 100 characters, numbers as numbers; anything else (None, booleans, objects) is None."""
    if isinstance(value, str):
        return value[:MAX_TEXT]
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float, Decimal)):
        return value
    return None


def _item(item: dict[str, Any]) -> dict[str, Any]:
    fitted = {key: param_value(value) for key, value in item.items()}
    return {key: value for key, value in fitted.items() if value is not None}


def fit_params(params: dict[str, Any], own: frozenset[str] = frozenset()) -> tuple[dict[str, Any], list[str]]:
    """(the parameters GA4 keeps, the names dropped beyond 25). ``own`` are names the service writes on
    purpose that GA4's list reserves for its own use (``session_id``, ``session_number``: the Measurement
    Protocol asks for them); they are kept as they are, any other name goes through :func:`ga4_name`."""
    fitted: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in params.items():
        name = key if key in own else ga4_name(key, RESERVED_PARAMS)
        if key == "items" and isinstance(value, list):
            kept: Any = [_item(i) for i in value if isinstance(i, dict)]
        else:
            kept = param_value(value)
        if kept is None or name in fitted:
            continue
        if len(fitted) == MAX_PARAMS:
            dropped.append(name)
            continue
        fitted[name] = kept
    return fitted, dropped
